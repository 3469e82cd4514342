// Storage dtypes of the KV pool, the queries and the output, and exact rounding into them. Every stored value is a
// float exactly representable in the problem's dtype, so the oracle sees precisely what the kernel reads; rounding
// goes straight from double, so the oracle's rounded value has no double rounding.
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

// A dtype's format: precision p (significand bits, implicit bit included), smallest normal exponent, largest value.
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

// The fp8 formats of a quantised KV cache (problem.h, Fp8Cache), as PyTorch's float8_e4m3fn and float8_e5m2:
//   e4m3  4 exponent bits (bias 7), 3 mantissa bits, no infinities; S.1111.111 is NaN, the largest value 448
//   e5m2  5 exponent bits (bias 15), 2 mantissa bits, IEEE-like: infinities, NaNs, the largest value 57344
enum class Fp8Format : std::uint8_t { e4m3, e5m2 };
inline constexpr Fp8Format kAllFp8Formats[] = {Fp8Format::e4m3, Fp8Format::e5m2};

std::string_view fp8_name(Fp8Format format);  // "fp8_e4m3", "fp8_e5m2": vLLM's kv_cache_dtype names
std::optional<Fp8Format> parse_fp8(std::string_view name);
FloatFormat float_format(Fp8Format format);
// Round-to-nearest-even into the format; past its largest value e5m2 overflows to +-inf and e4m3 to NaN (what a
// conversion without saturation gives), and an infinity becomes NaN in e4m3.
double round_to_fp8(double x, Fp8Format format);
bool is_representable(float x, Fp8Format format);
std::uint8_t to_fp8_bits(float x, Fp8Format format);  // x must be representable; NaN becomes the quiet NaN
float from_fp8_bits(std::uint8_t bits, Fp8Format format);

// Bit patterns of the 16-bit dtypes (CUDA host code, case files).
std::uint16_t to_f16_bits(float x);    // x must be representable in fp16
std::uint16_t to_bf16_bits(float x);   // x must be representable in bf16
float from_f16_bits(std::uint16_t bits);
float from_bf16_bits(std::uint16_t bits);

}  // namespace pacheck
