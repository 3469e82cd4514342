#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "problem/dtype.h"

namespace pacheck {
namespace {

TEST(DType, RoundsToNearestEvenInFp16) {
  EXPECT_EQ(round_to_dtype(1.0 + 0x1p-11, DType::f16), 1.0);              // tie -> even
  EXPECT_EQ(round_to_dtype(1.0 + 3 * 0x1p-11, DType::f16), 1.0 + 0x1p-9);  // tie -> even (up)
  EXPECT_EQ(round_to_dtype(65504.0, DType::f16), 65504.0);
  EXPECT_EQ(round_to_dtype(65519.9, DType::f16), 65504.0);
  EXPECT_TRUE(std::isinf(round_to_dtype(65520.0, DType::f16)));            // the tie past max rounds to inf
  EXPECT_EQ(round_to_dtype(0x1p-25, DType::f16), 0.0);                      // half the smallest subnormal, tie -> 0
  EXPECT_EQ(round_to_dtype(0x1.8p-24, DType::f16), 0x1p-23);                // subnormal tie -> even
}

TEST(DType, RoundsToNearestEvenInBf16) {
  EXPECT_EQ(round_to_dtype(1.0 + 0x1p-8, DType::bf16), 1.0);
  EXPECT_EQ(round_to_dtype(1.0 + 0x1.8p-8, DType::bf16), 1.0 + 0x1p-7);
  EXPECT_EQ(round_to_dtype(std::ldexp(255.0, 120), DType::bf16), std::ldexp(255.0, 120));  // the largest bf16
  EXPECT_TRUE(std::isinf(round_to_dtype(3.4e38, DType::bf16)));
}

TEST(DType, Fp32RoundingMatchesTheCast) {
  for (double x : {0.1, 1.0 / 3, 1e-40, 3.4e38, -2.5e-7}) EXPECT_EQ(round_to_dtype(x, DType::f32), static_cast<float>(x));
}

TEST(DType, UlpIsTheSpacingOfTheBinade) {
  EXPECT_EQ(ulp_of(1.0, DType::f32), 0x1p-23);
  EXPECT_EQ(ulp_of(1.5, DType::f16), 0x1p-10);
  EXPECT_EQ(ulp_of(1.0, DType::bf16), 0x1p-7);
  EXPECT_EQ(ulp_of(0.0, DType::f16), 0x1p-24);
}

TEST(DType, SixteenBitPatternsRoundTripEveryValue) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto b = static_cast<std::uint16_t>(bits);
    const float h = from_f16_bits(b);
    if (!std::isnan(h)) {
      EXPECT_EQ(to_f16_bits(h), b) << bits;
      EXPECT_TRUE(is_representable(h, DType::f16));
    }
    const float bf = from_bf16_bits(b);
    if (!std::isnan(bf)) EXPECT_EQ(to_bf16_bits(bf), b) << bits;
  }
}

TEST(DType, ParsesItsNames) {
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_EQ(parse_dtype("fp16"), DType::f16);
  EXPECT_EQ(parse_dtype("fp32"), DType::f32);
  EXPECT_FALSE(parse_dtype("fp8").has_value());
}

}  // namespace
}  // namespace pacheck
