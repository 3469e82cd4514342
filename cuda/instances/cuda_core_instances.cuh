// The CUDA-core kernel's entry point as a template, and the instantiations of one storage type, for the instance
// translation units. C++17 CUDA.
#pragma once

#include "cuda/cuda_core_kernel.cuh"
#include "cuda/kernel_instances.h"
#include "cuda/launcher.cuh"

namespace pacheck::cuda::instances {

template <Storage S, int LANES, int ROWS, GpuBug BUG>
void launch_cuda_core(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  using T = typename kernels::StorageType<S>::type;
  kernels::AttentionLauncher<kernels::cuda_core_attention_kernel<T, LANES, ROWS, BUG>, ROWS, kCudaCoreThreads,
                             kernels::cuda_core::shared_layout<T, LANES, ROWS>().total>::launch(batch, plan, stream);
}

}  // namespace pacheck::cuda::instances

// Every head capacity and row capacity of storage S.
#define PACHECK_CUDA_CORE_ROWS_INSTANCES(S, LANES)                                                  \
  template void launch_cuda_core<S, LANES, 4>(const DeviceBatch&, const DevicePlan&, cudaStream_t); \
  template void launch_cuda_core<S, LANES, 8>(const DeviceBatch&, const DevicePlan&, cudaStream_t);
#define PACHECK_CUDA_CORE_INSTANCES(S)     \
  namespace pacheck::cuda::instances {     \
  PACHECK_CUDA_CORE_ROWS_INSTANCES(S, 32)  \
  PACHECK_CUDA_CORE_ROWS_INSTANCES(S, 64)  \
  PACHECK_CUDA_CORE_ROWS_INSTANCES(S, 128) \
  PACHECK_CUDA_CORE_ROWS_INSTANCES(S, 256) \
  }
