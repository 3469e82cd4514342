// Division by a run-time constant without a hardware divide, for each key's (logical block, slot): an integer
// division costs more than the address arithmetic around it. Granlund and Montgomery: with s = ceil(log2 d) and
// m = floor(2^32 (2^s - d) / d) + 1, x / d = (umulhi(x, m) + x) >> s for 0 <= x < 2^31, 1 <= d < 2^31 (m + 2^32 is
// ceil(2^(32+s) / d), in excess by under d / 2^(32+s): too little to move any quotient of x < 2^32). C++17, host and
// device, so the CPU suite tests it.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define PACHECK_DIVMOD_HD __host__ __device__
#else
#define PACHECK_DIVMOD_HD
#endif

namespace pacheck::cuda {

struct FastDivmod {
  int divisor = 1;
  std::uint32_t multiplier = 1;
  int shift = 0;

  FastDivmod() = default;
  // divisor must be in [1, 2^31).
  explicit FastDivmod(int d) : divisor(d) {
    while ((std::uint64_t{1} << shift) < static_cast<std::uint64_t>(d)) ++shift;
    multiplier = static_cast<std::uint32_t>(((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift) - d)) / d + 1);
  }

  // x / divisor for 0 <= x < 2^31.
  PACHECK_DIVMOD_HD int quotient(int x) const {
    const std::uint32_t ux = static_cast<std::uint32_t>(x);
    return static_cast<int>((high_product(ux, multiplier) + ux) >> shift);
  }
  // Quotient and remainder.
  PACHECK_DIVMOD_HD void divmod(int x, int& q, int& r) const {
    q = quotient(x);
    r = x - q * divisor;
  }

 private:
  PACHECK_DIVMOD_HD static std::uint32_t high_product(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __umulhi(a, b);
#else
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(a) * b) >> 32);
#endif
  }
};

}  // namespace pacheck::cuda
