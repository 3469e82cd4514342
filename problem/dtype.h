// Storage dtypes of the KV pool, the queries and the output, and exact rounding into them.
//
// pacheck keeps every stored value as a float that is exactly representable in the problem's dtype, so a
// gather is a bit-exact copy and the oracle sees precisely what the kernel reads. Rounding goes straight from
// double (never through float first) so the "correctly rounded oracle value" has no double-rounding error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pacheck {

enum class DType : std::uint8_t { f32, f16, bf16 };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f16, DType::bf16};

std::string_view dtype_name(DType dtype);
std::optional<DType> parse_dtype(std::string_view name);

// The binary format behind a dtype: precision p (significand bits, implicit bit included), the smallest normal
// exponent and the largest finite value.
struct FloatFormat {
  int precision;
  int min_normal_exponent;
  double max_finite;
};
FloatFormat float_format(DType dtype);

// Round-to-nearest-even of x into the dtype; overflow goes to +-inf, NaN stays NaN.
double round_to_dtype(double x, DType dtype);
inline float round_to_dtype_f(double x, DType dtype) { return static_cast<float>(round_to_dtype(x, dtype)); }

// The spacing of the dtype's values at |x| (the ulp of the binade holding x; subnormal spacing below it).
double ulp_of(double x, DType dtype);

// Unit roundoff of the dtype, 2^-p.
double unit_roundoff(DType dtype);

bool is_representable(float x, DType dtype);

// Bit patterns for the 16-bit dtypes (used by the CUDA host code and case files).
std::uint16_t to_f16_bits(float x);    // x must be representable in fp16
std::uint16_t to_bf16_bits(float x);   // x must be representable in bf16
float from_f16_bits(std::uint16_t bits);
float from_bf16_bits(std::uint16_t bits);

}  // namespace pacheck
