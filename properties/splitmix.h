// splitmix64: a tiny, portable random generator, so a seed means the same problem data on every platform and
// compiler (std::normal_distribution and friends are implementation-defined).
#pragma once

#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace pacheck {

class SplitMix {
 public:
  explicit SplitMix(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
  double normal() {  // Box-Muller
    const double u1 = uniform() + 0x1p-54, u2 = uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // A uniformly random permutation of 0 .. n-1 (Fisher-Yates).
  std::vector<int> permutation(int n) {
    std::vector<int> p(n);
    std::iota(p.begin(), p.end(), 0);
    for (int i = n - 1; i > 0; --i) std::swap(p[i], p[below(i + 1)]);
    return p;
  }

 private:
  std::uint64_t state_;
};

}  // namespace pacheck
