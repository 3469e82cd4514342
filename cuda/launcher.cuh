// Launching one instantiation of an attention kernel, and the split-K merge after it, for the instance translation
// units (instances/*.cu). C++17 CUDA.
#pragma once

#include <stdexcept>
#include <string>

#include "cuda/cuda_check.h"
#include "cuda/fast_divmod.h"
#include "cuda/kernel_instances.h"
#include "cuda/kv_tensor_maps.h"
#include "cuda/launch_rules.h"
#include "cuda/paged_attention.h"
#include "cuda/splitk_merge.cuh"

namespace pacheck::cuda::kernels {

// Blocks over 48 KB of shared memory are allowed it first (once per process). TENSOR_MAPS: the kernel takes the
// pools' tensor maps (kv_tensor_maps.h) last; ENCODE_MAPS: it may use them, so each launch encodes them (two driver
// calls), else it gets maps marked unusable.
template <auto KERNEL, int ROWS, int THREADS, int SHARED, bool TENSOR_MAPS = false, bool ENCODE_MAPS = TENSOR_MAPS>
struct AttentionLauncher {
  static void configure() {
    static const cudaError_t configured =
        cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED);
    cuda_check(configured, "setting the attention kernel's shared-memory size (" + std::to_string(SHARED) + " bytes)");
  }
  static int resident_blocks_per_multiprocessor() {
    configure();
    int blocks = 0;
    cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, KERNEL, THREADS, SHARED),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return blocks;
  }
  static void launch(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
    if (plan.row_capacity != ROWS)
      throw std::invalid_argument("plan for " + std::to_string(plan.row_capacity) + " rows per block, kernel for " +
                                  std::to_string(ROWS));
    const long long blocks = attention_grid_blocks(plan.num_items, batch.num_kv_heads);  // launch_rules.h
    configure();
    const dim3 grid(static_cast<unsigned>(blocks));
    if constexpr (TENSOR_MAPS) {
      const KvTensorMaps maps = ENCODE_MAPS ? describe_kv_pools(batch, plan.tile_size) : KvTensorMaps{};
      KERNEL<<<grid, THREADS, SHARED, stream>>>(batch, plan, FastDivmod(batch.block_size), maps);
    } else {
      KERNEL<<<grid, THREADS, SHARED, stream>>>(batch, plan, FastDivmod(batch.block_size));
    }
    check_launch("the paged attention kernel");
  }
};

// The merge as a programmatic dependent launch (ptx::allow_dependent_launch).
template <typename T, int LANES, int LANES_PER_THREAD, GpuBug BUG = GpuBug::none>
void launch_merge_kernel(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  using Threads = MergeThreads<LANES, LANES_PER_THREAD>;
  const long long rows = static_cast<long long>(batch.total_queries) * batch.num_query_heads;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>((rows + Threads::kRowsPerBlock - 1) / Threads::kRowsPerBlock));
  config.blockDim = dim3(Threads::kBlockThreads);
  config.stream = stream;
  cudaLaunchAttribute dependent_launch = {};
  dependent_launch.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent_launch.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &dependent_launch;
  config.numAttrs = 1;
  cuda_check(cudaLaunchKernelEx(&config, merge_splits_kernel<T, LANES, LANES_PER_THREAD, BUG>, batch, plan),
             "launching the split-K merge kernel");
}

}  // namespace pacheck::cuda::kernels

namespace pacheck::cuda::instances {

// kernel_instances.h's merge entry point: a head lane a thread (lanes shape) or four (warps).
template <Storage S, int LANES, MergeShape SHAPE, GpuBug BUG>
void launch_merge(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  static_assert(SHAPE == MergeShape::lanes || SHAPE == MergeShape::warps, "a resolved shape");
  kernels::launch_merge_kernel<typename kernels::StorageType<S>::type, LANES, SHAPE == MergeShape::lanes ? 1 : 4, BUG>(
      batch, plan, stream);
}

}  // namespace pacheck::cuda::instances
