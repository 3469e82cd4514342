// The tensor-core kernel's entry point as a template, and the instantiations of one storage type, for the instance
// translation units (one per storage type, so the two compile in parallel). C++17 CUDA.
#pragma once

#include "cuda/kernel_instances.h"
#include "cuda/launch_rules.h"
#include "cuda/launcher.cuh"
#include "cuda/tensor_core_kernel.cuh"

namespace pacheck::cuda::instances {

// A layout's pipeline depth and copies: wide and wide-evict-first hold two tiles (three blocks per
// multiprocessor); automatic and deep hold launch_rules.h's tensor_core_stages, with its tensor_core_copies.
template <int LANES, KernelLayout LAYOUT>
struct TensorCoreLayoutTraits {
  static_assert(LANES == 128 || LAYOUT == KernelLayout::automatic, "only the 128-lane kernel has layouts to choose");
  static constexpr bool kWide = LAYOUT == KernelLayout::wide || LAYOUT == KernelLayout::wide_evict_first;
  static constexpr int kStages = kWide ? 2 : tensor_core_stages(LANES);
  static constexpr TileCopies kCopies =
      LAYOUT == KernelLayout::wide_evict_first ? TileCopies::async_evict_first : tensor_core_copies(LANES);
};

template <Storage S, int LANES, int ROWS, KernelLayout LAYOUT, GpuBug BUG = GpuBug::none>
using TensorCoreLauncher = kernels::AttentionLauncher<
    kernels::tensor_core_attention_kernel<S, LANES, ROWS, TensorCoreLayoutTraits<LANES, LAYOUT>::kStages,
                                          TensorCoreLayoutTraits<LANES, LAYOUT>::kCopies, BUG>,
    ROWS, kernels::tensor_core::kThreads,
    kernels::tensor_core::shared_layout(LANES, ROWS, TensorCoreLayoutTraits<LANES, LAYOUT>::kStages).total,
    /*TENSOR_MAPS=*/true, /*ENCODE_MAPS=*/TensorCoreLayoutTraits<LANES, LAYOUT>::kCopies == TileCopies::tensor>;

template <Storage S, int LANES, int ROWS, KernelLayout LAYOUT, GpuBug BUG>
void launch_tensor_core(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  TensorCoreLauncher<S, LANES, ROWS, LAYOUT, BUG>::launch(batch, plan, stream);
}

}  // namespace pacheck::cuda::instances

// Every layout and row capacity of storage S: three layouts at 128 lanes, one at 32, 64 and 256.
#define PACHECK_TENSOR_CORE_INSTANCE(S, LANES, ROWS, LAYOUT) \
  template void launch_tensor_core<S, LANES, ROWS, KernelLayout::LAYOUT>(const DeviceBatch&, const DevicePlan&, \
                                                                         cudaStream_t);
#define PACHECK_TENSOR_CORE_INSTANCES(S)                                \
  namespace pacheck::cuda::instances {                                  \
  PACHECK_TENSOR_CORE_INSTANCE(S, 32, 4, automatic)                     \
  PACHECK_TENSOR_CORE_INSTANCE(S, 32, 8, automatic)                     \
  PACHECK_TENSOR_CORE_INSTANCE(S, 64, 4, automatic)                     \
  PACHECK_TENSOR_CORE_INSTANCE(S, 64, 8, automatic)                     \
  PACHECK_TENSOR_CORE_INSTANCE(S, 128, 4, deep)                         \
  PACHECK_TENSOR_CORE_INSTANCE(S, 128, 8, deep)                         \
  PACHECK_TENSOR_CORE_INSTANCE(S, 128, 4, wide)                         \
  PACHECK_TENSOR_CORE_INSTANCE(S, 128, 8, wide)                         \
  PACHECK_TENSOR_CORE_INSTANCE(S, 128, 4, wide_evict_first)             \
  PACHECK_TENSOR_CORE_INSTANCE(S, 128, 8, wide_evict_first)             \
  PACHECK_TENSOR_CORE_INSTANCE(S, 256, 4, automatic)                    \
  PACHECK_TENSOR_CORE_INSTANCE(S, 256, 8, automatic)                    \
  }
