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

namespace {

double ulp_in(double x, const FloatFormat& f) {
  const double ax = std::fabs(x);
  const double subnormal_spacing = std::ldexp(1.0, f.min_normal_exponent - f.precision + 1);
  if (!(ax >= std::ldexp(1.0, f.min_normal_exponent))) return subnormal_spacing;  // NaN lands here too
  if (std::isinf(ax)) return std::numeric_limits<double>::infinity();
  int e = 0;
  std::frexp(ax, &e);  // ax = m * 2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - f.precision);
}

// Round-to-nearest-even into the format, or nullopt past its largest finite value.
std::optional<double> round_in(double x, const FloatFormat& f) {
  if (!std::isfinite(x) || x == 0.0) return x;
  const double q = ulp_in(x, f);
  // x / q is exact (q is a power of two) and nearbyint rounds half to even in the default rounding mode.
  const double r = std::nearbyint(x / q) * q;
  if (std::fabs(r) > f.max_finite) return std::nullopt;
  return r;
}

}  // namespace

double ulp_of(double x, DType dtype) { return ulp_in(x, float_format(dtype)); }

double round_to_dtype(double x, DType dtype) {
  const std::optional<double> r = round_in(x, float_format(dtype));
  return r ? *r : std::copysign(std::numeric_limits<double>::infinity(), x);
}

bool is_representable(float x, DType dtype) {
  if (std::isnan(x)) return true;
  return static_cast<double>(x) == round_to_dtype(static_cast<double>(x), dtype);
}

std::string_view fp8_name(Fp8Format format) { return format == Fp8Format::e4m3 ? "fp8_e4m3" : "fp8_e5m2"; }

std::optional<Fp8Format> parse_fp8(std::string_view name) {
  for (Fp8Format f : kAllFp8Formats)
    if (fp8_name(f) == name) return f;
  return std::nullopt;
}

FloatFormat float_format(Fp8Format format) {
  return format == Fp8Format::e4m3 ? FloatFormat{4, -6, 448.0} : FloatFormat{3, -14, 57344.0};
}

double round_to_fp8(double x, Fp8Format format) {
  if (std::isinf(x) && format == Fp8Format::e4m3) return std::numeric_limits<double>::quiet_NaN();
  const std::optional<double> r = round_in(x, float_format(format));
  if (r) return *r;
  return format == Fp8Format::e5m2 ? std::copysign(std::numeric_limits<double>::infinity(), x)
                                   : std::numeric_limits<double>::quiet_NaN();
}

bool is_representable(float x, Fp8Format format) {
  if (std::isnan(x)) return true;
  if (std::isinf(x)) return format == Fp8Format::e5m2;
  const std::optional<double> r = round_in(static_cast<double>(x), float_format(format));
  return r && *r == static_cast<double>(x);
}

std::uint8_t to_fp8_bits(float x, Fp8Format format) {
  const FloatFormat f = float_format(format);
  const int mantissa_bits = f.precision - 1, bias = 1 - f.min_normal_exponent;
  const auto sign = static_cast<std::uint8_t>(std::signbit(x) ? 0x80 : 0);
  if (std::isnan(x)) return static_cast<std::uint8_t>(sign | (format == Fp8Format::e4m3 ? 0x7f : 0x7e));
  if (std::isinf(x)) return static_cast<std::uint8_t>(sign | 0x7c);  // e5m2 only: the caller checked
  const double ax = std::fabs(static_cast<double>(x));
  if (ax < std::ldexp(1.0, f.min_normal_exponent))  // subnormal (or zero): the mantissa counts spacings
    return static_cast<std::uint8_t>(sign | static_cast<int>(ax / ulp_in(ax, f)));
  int e = 0;
  const double m = std::frexp(ax, &e);  // ax = m * 2^e, m in [0.5, 1): exponent field e - 1 + bias
  const int mantissa = static_cast<int>(std::ldexp(m, f.precision)) - (1 << mantissa_bits);
  return static_cast<std::uint8_t>(sign | ((e - 1 + bias) << mantissa_bits) | mantissa);
}

float from_fp8_bits(std::uint8_t bits, Fp8Format format) {
  const FloatFormat f = float_format(format);
  const int mantissa_bits = f.precision - 1, bias = 1 - f.min_normal_exponent;
  const int exponent_max = format == Fp8Format::e4m3 ? 15 : 31;
  const float sign = (bits & 0x80) ? -1.0f : 1.0f;
  const int exponent = (bits & 0x7f) >> mantissa_bits;
  const int mantissa = bits & ((1 << mantissa_bits) - 1);
  if (format == Fp8Format::e4m3 && exponent == exponent_max && mantissa == (1 << mantissa_bits) - 1)
    return std::numeric_limits<float>::quiet_NaN();
  if (format == Fp8Format::e5m2 && exponent == exponent_max)
    return mantissa ? std::numeric_limits<float>::quiet_NaN() : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), f.min_normal_exponent - mantissa_bits);
  return sign * std::ldexp(static_cast<float>(mantissa + (1 << mantissa_bits)), exponent - bias - mantissa_bits);
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
