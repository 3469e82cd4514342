// The division by a run-time constant that the CUDA kernels use to find a key's block and slot
// (cuda/fast_divmod.h): exact against the hardware divide, for every divisor the generators and real models use
// and for random dividends and divisors over the whole range it promises (0 <= x < 2^31, 1 <= d < 2^31).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <limits>

#include "cuda/fast_divmod.h"

namespace pacheck::cuda {
namespace {

TEST(FastDivmod, ExactForSmallDivisorsAndDividends) {
  for (int d = 1; d <= 300; ++d) {
    const FastDivmod div(d);
    for (int x = 0; x < 20000; ++x) {
      int q, r;
      div.divmod(x, q, r);
      ASSERT_EQ(q, x / d) << x << " / " << d;
      ASSERT_EQ(r, x % d) << x << " % " << d;
    }
  }
}

TEST(FastDivmod, ExactAtTheEndsOfTheRange) {
  constexpr int kMax = std::numeric_limits<std::int32_t>::max();
  for (int d : {1, 2, 3, 5, 7, 16, 17, 63, 64, 65, 1 << 20, (1 << 30) - 1, 1 << 30, (1 << 30) + 1, kMax - 1, kMax}) {
    const FastDivmod div(d);
    for (int x : {0, 1, d - 1, d, kMax - 1, kMax, kMax - d, kMax / 2, kMax / 3}) {
      if (x < 0) continue;
      EXPECT_EQ(div.quotient(x), x / d) << x << " / " << d;
    }
  }
}

RC_GTEST_PROP(FastDivmod, ExactForRandomDividendsAndDivisors, ()) {
  const int d = *rc::gen::inRange(1, std::numeric_limits<std::int32_t>::max());
  const int x = *rc::gen::inRange(0, std::numeric_limits<std::int32_t>::max());
  RC_ASSERT(FastDivmod(d).quotient(x) == x / d);
}

}  // namespace
}  // namespace pacheck::cuda
