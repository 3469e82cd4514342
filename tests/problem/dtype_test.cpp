// The dtypes (problem/dtype.h): rounding to nearest even, ulps, the 16-bit and fp8 bit patterns, the names.
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
    if (!std::isnan(bf)) {
      EXPECT_EQ(to_bf16_bits(bf), b) << bits;
    }
  }
}

TEST(DType, ParsesItsNames) {
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_EQ(parse_dtype("fp16"), DType::f16);
  EXPECT_EQ(parse_dtype("fp32"), DType::f32);
  EXPECT_FALSE(parse_dtype("fp8").has_value());
}

// Every one of the 256 codes of each fp8 format decodes to a value the format represents and encodes back to the
// same code (NaNs to the canonical quiet NaN), and the codes decode in order: the two sign halves are monotone.
TEST(Fp8, EveryCodeRoundTripsAndTheCodesAreOrdered) {
  for (Fp8Format f : kAllFp8Formats) {
    int nans = 0;
    float previous = -1;
    for (int code = 0; code < 256; ++code) {
      const float x = from_fp8_bits(static_cast<std::uint8_t>(code), f);
      EXPECT_TRUE(is_representable(x, f)) << fp8_name(f) << " code " << code;
      if (std::isnan(x)) {
        ++nans;
        EXPECT_EQ(to_fp8_bits(x, f) & 0x7f, f == Fp8Format::e4m3 ? 0x7f : 0x7e);
        continue;
      }
      EXPECT_EQ(to_fp8_bits(x, f), code) << fp8_name(f) << " value " << x;
      if ((code & 0x7f) != 0) {
        if (code < 128) {
          EXPECT_GT(x, previous) << fp8_name(f) << " code " << code;
        }
      }
      if (code < 128) previous = x;
    }
    EXPECT_EQ(nans, f == Fp8Format::e4m3 ? 2 : 6) << fp8_name(f);  // e4m3: S.1111.111; e5m2: exponent 31, m != 0
  }
}

TEST(Fp8, KnownValuesAndTheRangeEnds) {
  EXPECT_EQ(from_fp8_bits(0x7e, Fp8Format::e4m3), 448.0f);   // the largest e4m3
  EXPECT_TRUE(std::isnan(from_fp8_bits(0x7f, Fp8Format::e4m3)));
  EXPECT_EQ(from_fp8_bits(0x01, Fp8Format::e4m3), 0x1p-9f);  // the smallest subnormal
  EXPECT_EQ(from_fp8_bits(0x08, Fp8Format::e4m3), 0x1p-6f);  // the smallest normal
  EXPECT_EQ(from_fp8_bits(0x38, Fp8Format::e4m3), 1.0f);
  EXPECT_EQ(from_fp8_bits(0x7b, Fp8Format::e5m2), 57344.0f);  // the largest e5m2
  EXPECT_EQ(from_fp8_bits(0x7c, Fp8Format::e5m2), INFINITY);
  EXPECT_EQ(from_fp8_bits(0xfc, Fp8Format::e5m2), -INFINITY);
  EXPECT_EQ(from_fp8_bits(0x01, Fp8Format::e5m2), 0x1p-16f);
  EXPECT_EQ(from_fp8_bits(0x3c, Fp8Format::e5m2), 1.0f);
  EXPECT_EQ(round_to_fp8(1.0 + 0x1p-4, Fp8Format::e4m3), 1.0);            // tie -> even
  EXPECT_EQ(round_to_fp8(1.0 + 3 * 0x1p-4, Fp8Format::e4m3), 1.25);       // tie -> even (up)
  EXPECT_EQ(round_to_fp8(464.0, Fp8Format::e4m3), 448.0);                 // the tie past 448 rounds to even
  EXPECT_TRUE(std::isnan(round_to_fp8(480.0, Fp8Format::e4m3)));          // e4m3 has no infinity
  EXPECT_TRUE(std::isinf(round_to_fp8(61440.0, Fp8Format::e5m2)));
  EXPECT_FALSE(is_representable(INFINITY, Fp8Format::e4m3));
  EXPECT_FALSE(is_representable(1.0625f, Fp8Format::e4m3));
  EXPECT_EQ(parse_fp8("fp8_e5m2"), Fp8Format::e5m2);
  EXPECT_FALSE(parse_fp8("fp8"));
}

}  // namespace
}  // namespace pacheck
