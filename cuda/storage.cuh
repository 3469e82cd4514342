// The kernels' element types, fp32, bf16 and fp16: widening to fp32 (exact), narrowing with round-to-nearest, and
// eight elements from a 16-byte aligned shared-memory address. C++17 CUDA.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/paged_attention.h"

namespace pacheck::cuda::kernels {

// The element type of a Storage.
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

}  // namespace pacheck::cuda::kernels
