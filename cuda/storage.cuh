// The kernels' element types, fp32, bf16 and fp16: widening to fp32 (exact), narrowing to nearest, eight elements
// from 16-byte aligned shared memory; and an fp8 cache's values widened to bf16 or fp16. C++17 CUDA.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "cuda/paged_attention.h"
#include "cuda/ptx.cuh"

namespace pacheck::cuda::kernels {

template <Storage S>
struct StorageType;
template <>
struct StorageType<Storage::f32> {
  using type = float;
};
template <>
struct StorageType<Storage::f16> {
  using type = __half;
};
template <>
struct StorageType<Storage::bf16> {
  using type = __nv_bfloat16;
};

template <typename T>
struct StorageOps;

template <>
struct StorageOps<float> {
  __device__ static float to_float(float x) { return x; }
  __device__ static float from_float(float x) { return x; }
  // Eight consecutive elements at a 16-byte aligned shared-memory address.
  __device__ static void load8(const unsigned char* p, float out[8]) {
    const float4 a = reinterpret_cast<const float4*>(p)[0];
    const float4 b = reinterpret_cast<const float4*>(p)[1];
    out[0] = a.x; out[1] = a.y; out[2] = a.z; out[3] = a.w;
    out[4] = b.x; out[5] = b.y; out[6] = b.z; out[7] = b.w;
  }
};

template <>
struct StorageOps<__nv_bfloat16> {
  __device__ static float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ static __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
  // bf16 is the top half of an fp32: widening is a shift or a mask, exact.
  __device__ static void load8(const unsigned char* p, float out[8]) {
    const uint4 w = *reinterpret_cast<const uint4*>(p);
    const unsigned words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      out[2 * i] = __uint_as_float(words[i] << 16);
      out[2 * i + 1] = __uint_as_float(words[i] & 0xffff0000u);
    }
  }
};

template <>
struct StorageOps<__half> {
  __device__ static float to_float(__half x) { return __half2float(x); }
  __device__ static __half from_float(float x) { return __float2half_rn(x); }
  __device__ static void load8(const unsigned char* p, float out[8]) {
    const uint4 w = *reinterpret_cast<const uint4*>(p);
    const unsigned words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __half2_raw raw;
      raw.x = static_cast<unsigned short>(words[i] & 0xffffu);
      raw.y = static_cast<unsigned short>(words[i] >> 16);
      const float2 f = __half22float2(__half2(raw));
      out[2 * i] = f.x;
      out[2 * i + 1] = f.y;
    }
  }
};

// Four fp8 values (bytes 0..3 of `four`) widened exactly to 16-bit pairs, low = bytes 0, 1 and high = bytes 2, 3 (the
// lower byte in the lower half): every e4m3 and e5m2 value, subnormals, infinities and NaN included, is an fp16 and a
// bf16 value (every nonzero finite e4m3 is an fp16 normal; e5m2's subnormals are fp16's). To fp16: one conversion a
// pair. To bf16: that, to fp32, and the upper halves by a byte permute (a conversion would queue behind the fp8).
template <KvCache C>
__device__ inline void widen_fp8x4_to_f16x2(unsigned four, unsigned& low, unsigned& high) {
  static_assert(C == KvCache::e4m3 || C == KvCache::e5m2, "an fp8 cache");
  ptx::fp8x4_to_f16x2<C == KvCache::e5m2>(four, low, high);
}
template <KvCache C>
__device__ inline void widen_fp8x4_to_bf16x2(unsigned four, unsigned& low, unsigned& high) {
  unsigned h[2];
  widen_fp8x4_to_f16x2<C>(four, h[0], h[1]);
  const float2 a = __half22float2(*reinterpret_cast<const __half2*>(&h[0]));
  const float2 b = __half22float2(*reinterpret_cast<const __half2*>(&h[1]));
  low = __byte_perm(__float_as_uint(a.x), __float_as_uint(a.y), 0x7632);
  high = __byte_perm(__float_as_uint(b.x), __float_as_uint(b.y), 0x7632);
}
// The same, to the mma operand type T (__half or __nv_bfloat16).
template <KvCache C, typename T>
__device__ inline void widen_fp8x4(unsigned four, unsigned& low, unsigned& high) {
  if constexpr (std::is_same_v<T, __half>) widen_fp8x4_to_f16x2<C>(four, low, high);
  else widen_fp8x4_to_bf16x2<C>(four, low, high);
}

}  // namespace pacheck::cuda::kernels
