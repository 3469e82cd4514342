#include "problem/dtype.h"

#include <bit>
#include <cmath>
#include <limits>

namespace pacheck {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "fp32";
    case DType::f16: return "fp16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType d : kAllDTypes)
    if (dtype_name(d) == name) return d;
  return std::nullopt;
}

FloatFormat float_format(DType dtype) {
  switch (dtype) {
    case DType::f32: return {24, -126, static_cast<double>(std::numeric_limits<float>::max())};
    case DType::f16: return {11, -14, 65504.0};
    case DType::bf16: return {8, -126, std::ldexp(255.0, 120)};  // (2 - 2^-7) * 2^127
  }
  return {24, -126, 0};
}

double unit_roundoff(DType dtype) { return std::ldexp(1.0, -float_format(dtype).precision); }

double ulp_of(double x, DType dtype) {
  const FloatFormat f = float_format(dtype);
  const double ax = std::fabs(x);
  const double subnormal_spacing = std::ldexp(1.0, f.min_normal_exponent - f.precision + 1);
  if (!(ax >= std::ldexp(1.0, f.min_normal_exponent))) return subnormal_spacing;  // NaN lands here too
  if (std::isinf(ax)) return std::numeric_limits<double>::infinity();
  int e = 0;
  std::frexp(ax, &e);  // ax = m * 2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - f.precision);
}

double round_to_dtype(double x, DType dtype) {
  if (!std::isfinite(x) || x == 0.0) return x;
  const FloatFormat f = float_format(dtype);
  const double q = ulp_of(x, dtype);
  // x / q is exact (q is a power of two) and nearbyint rounds half to even in the default rounding mode.
  const double r = std::nearbyint(x / q) * q;
  if (std::fabs(r) > f.max_finite) return std::copysign(std::numeric_limits<double>::infinity(), x);
  return r;
}

bool is_representable(float x, DType dtype) {
  if (std::isnan(x)) return true;
  return static_cast<double>(x) == round_to_dtype(static_cast<double>(x), dtype);
}

std::uint16_t to_bf16_bits(float x) { return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(x) >> 16); }
float from_bf16_bits(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

std::uint16_t to_f16_bits(float x) {
  const std::uint32_t sign = (std::bit_cast<std::uint32_t>(x) >> 16) & 0x8000u;
  const float ax = std::fabs(x);
  if (std::isnan(x)) return static_cast<std::uint16_t>(sign | 0x7e00u);
  if (std::isinf(x)) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (ax == 0.0f) return static_cast<std::uint16_t>(sign);
  int e = 0;
  const float m = std::frexp(ax, &e);  // ax = m * 2^e, m in [0.5, 1); fp16 exponent field = e - 1 + 15
  if (e - 1 < -14) {  // subnormal: value = mantissa * 2^-24
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::ldexp(ax, 24)));
  }
  const auto mantissa = static_cast<std::uint32_t>(std::ldexp(m, 11)) & 0x3ffu;
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(e - 1 + 15) << 10) | mantissa);
}

float from_f16_bits(std::uint16_t bits) {
  const float sign = (bits & 0x8000u) ? -1.0f : 1.0f;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0x1f) return mantissa ? std::numeric_limits<float>::quiet_NaN() : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  return sign * std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
}

}  // namespace pacheck
