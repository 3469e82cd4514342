// The kernels' entry points, one per instantiation, defined in cuda/instances/ (compiled in parallel). C++17, no
// device code.
#pragma once

#include <cuda_runtime.h>

#include "cuda/paged_attention.h"
#include "problem/knobs.h"

namespace pacheck::cuda::instances {

// The CUDA-core kernel for storage S, LANES head lanes (32, 64, 128, 256) and ROWS rows a block (4, 8). BUG: none
// in production; cuda/mutants/ instantiates the others.
template <Storage S, int LANES, int ROWS, GpuBug BUG = GpuBug::none>
void launch_cuda_core(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream);

// The tensor-core kernel for storage S (bf16, fp16), LANES and ROWS, in LAYOUT: deep, wide or wide-evict-first at
// 128 lanes, automatic (the only one) elsewhere; C: the pools' values (e4m3 or e5m2: an fp8 cache, S bf16).
template <Storage S, int LANES, int ROWS, KernelLayout LAYOUT, GpuBug BUG = GpuBug::none, KvCache C = KvCache::same>
void launch_tensor_core(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream);

// The split-K merge for storage S and LANES head lanes in SHAPE (lanes or warps).
template <Storage S, int LANES, MergeShape SHAPE, GpuBug BUG = GpuBug::none>
void launch_merge(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream);

// Blocks of the one-wave layouts at 128 lanes (wide, wide-evict-first; bf16 queries, pools of `cache`, `rows` rows)
// resident on one multiprocessor, as the runtime reports; defined beside each cache's instances.
template <KvCache C>
int one_wave_resident_blocks_of(int rows);
template <>
int one_wave_resident_blocks_of<KvCache::same>(int rows);
template <>
int one_wave_resident_blocks_of<KvCache::e4m3>(int rows);
template <>
int one_wave_resident_blocks_of<KvCache::e5m2>(int rows);
inline int one_wave_resident_blocks(int rows, KvCache cache = KvCache::same) {
  switch (cache) {
    case KvCache::e4m3: return one_wave_resident_blocks_of<KvCache::e4m3>(rows);
    case KvCache::e5m2: return one_wave_resident_blocks_of<KvCache::e5m2>(rows);
    case KvCache::same: break;
  }
  return one_wave_resident_blocks_of<KvCache::same>(rows);
}

}  // namespace pacheck::cuda::instances
