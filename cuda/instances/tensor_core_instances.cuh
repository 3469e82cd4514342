// The tensor-core kernel's entry point as a template, and the instantiations of one storage type or fp8 cache, for
// the instance translation units. C++17 CUDA.
#pragma once

#include "cuda/kernel_instances.h"
#include "cuda/launch_rules.h"
#include "cuda/launcher.cuh"
#include "cuda/tensor_core_kernel.cuh"

namespace pacheck::cuda::instances {

// A layout's pipeline depth and copies: wide and wide-evict-first hold two tiles; automatic and deep,
// tensor_core_stages with tensor_core_copies (launch_rules.h).
template <int LANES, KernelLayout LAYOUT, KvCache C = KvCache::same>
struct TensorCoreLayoutTraits {
  static_assert(LANES == 128 || LAYOUT == KernelLayout::automatic, "only the 128-lane kernel has layouts to choose");
  static constexpr bool kWide = LAYOUT == KernelLayout::wide || LAYOUT == KernelLayout::wide_evict_first;
  static constexpr int kStages = kWide ? 2 : tensor_core_stages(LANES);
  static constexpr int kKvBytes = tensor_core_kv_bytes(C);
  static constexpr TileCopies kCopies =
      LAYOUT == KernelLayout::wide_evict_first ? TileCopies::async_evict_first : tensor_core_copies(LANES, kKvBytes);
};

template <Storage S, int LANES, int ROWS, KernelLayout LAYOUT, GpuBug BUG = GpuBug::none, KvCache C = KvCache::same>
using TensorCoreLauncher = kernels::AttentionLauncher<
    kernels::tensor_core_attention_kernel<S, LANES, ROWS, TensorCoreLayoutTraits<LANES, LAYOUT, C>::kStages,
                                          TensorCoreLayoutTraits<LANES, LAYOUT, C>::kCopies, BUG, C>,
    ROWS, kernels::tensor_core::kThreads,
    kernels::tensor_core::shared_layout(LANES, ROWS, TensorCoreLayoutTraits<LANES, LAYOUT, C>::kStages,
                                        TensorCoreLayoutTraits<LANES, LAYOUT, C>::kKvBytes)
        .total,
    /*TENSOR_MAPS=*/true, /*ENCODE_MAPS=*/TensorCoreLayoutTraits<LANES, LAYOUT, C>::kCopies == TileCopies::tensor>;

template <Storage S, int LANES, int ROWS, KernelLayout LAYOUT, GpuBug BUG, KvCache C>
void launch_tensor_core(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  TensorCoreLauncher<S, LANES, ROWS, LAYOUT, BUG, C>::launch(batch, plan, stream);
}

// kernel_instances.h's one_wave_resident_blocks_of, for the translation unit of C's kernels.
template <KvCache C>
int one_wave_resident_blocks_for(int rows) {
  using Four = TensorCoreLauncher<Storage::bf16, 128, 4, KernelLayout::wide, GpuBug::none, C>;
  using Eight = TensorCoreLauncher<Storage::bf16, 128, kMaxRows, KernelLayout::wide, GpuBug::none, C>;
  return rows == 4 ? Four::resident_blocks_per_multiprocessor() : Eight::resident_blocks_per_multiprocessor();
}

}  // namespace pacheck::cuda::instances

// Every layout and row capacity of storage S reading pools of C: three layouts at 128 lanes, one at 32, 64 and 256.
#define PACHECK_TENSOR_CORE_INSTANCE(S, C, LANES, ROWS, LAYOUT)                            \
  template void launch_tensor_core<S, LANES, ROWS, KernelLayout::LAYOUT, GpuBug::none, C>( \
      const DeviceBatch&, const DevicePlan&, cudaStream_t);
#define PACHECK_TENSOR_CORE_ROWS_INSTANCES(S, C, LANES, LAYOUT) \
  PACHECK_TENSOR_CORE_INSTANCE(S, C, LANES, 4, LAYOUT)          \
  PACHECK_TENSOR_CORE_INSTANCE(S, C, LANES, 8, LAYOUT)
#define PACHECK_TENSOR_CORE_CACHE_INSTANCES(S, C)                 \
  namespace pacheck::cuda::instances {                            \
  PACHECK_TENSOR_CORE_ROWS_INSTANCES(S, C, 32, automatic)         \
  PACHECK_TENSOR_CORE_ROWS_INSTANCES(S, C, 64, automatic)         \
  PACHECK_TENSOR_CORE_ROWS_INSTANCES(S, C, 128, deep)             \
  PACHECK_TENSOR_CORE_ROWS_INSTANCES(S, C, 128, wide)             \
  PACHECK_TENSOR_CORE_ROWS_INSTANCES(S, C, 128, wide_evict_first) \
  PACHECK_TENSOR_CORE_ROWS_INSTANCES(S, C, 256, automatic)        \
  }
#define PACHECK_TENSOR_CORE_INSTANCES(S) PACHECK_TENSOR_CORE_CACHE_INSTANCES(S, KvCache::same)
