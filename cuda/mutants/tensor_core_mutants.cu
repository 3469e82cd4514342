// The GPU mutants of the tensor-core kernel: only the pinned instantiation their draws need (bf16, 64 head lanes,
// 4 rows, the one 64-lane layout: swizzled, three stages, tensor copies where the launch allows them).
#include "cuda/instances/tensor_core_instances.cuh"

namespace pacheck::cuda::instances {

#define PACHECK_TENSOR_CORE_MUTANT(BUG)                                                                            \
  template void launch_tensor_core<Storage::bf16, 64, 4, KernelLayout::automatic, BUG>(                          \
      const DeviceBatch&, const DevicePlan&, cudaStream_t);
PACHECK_TENSOR_CORE_MUTANT(GpuBug::tc_cp_async_wait_one_late)
PACHECK_TENSOR_CORE_MUTANT(GpuBug::tc_warp_max_missing_step)
PACHECK_TENSOR_CORE_MUTANT(GpuBug::swizzle_xor_of_4_rows)
PACHECK_TENSOR_CORE_MUTANT(GpuBug::tma_box_one_row_late)
PACHECK_TENSOR_CORE_MUTANT(GpuBug::mbarrier_parity_flipped)

// The fp8 cache's mutants: the same draw from an e4m3 cache (its bug-free form is production's e4m3 instance).
#define PACHECK_TENSOR_CORE_FP8_MUTANT(BUG)                                                                        \
  template void launch_tensor_core<Storage::bf16, 64, 4, KernelLayout::automatic, BUG, KvCache::e4m3>(            \
      const DeviceBatch&, const DevicePlan&, cudaStream_t);
PACHECK_TENSOR_CORE_FP8_MUTANT(GpuBug::fp8_k_scale_from_v_scales)
PACHECK_TENSOR_CORE_FP8_MUTANT(GpuBug::fp16_scores_row_of_fragment)

}  // namespace pacheck::cuda::instances
