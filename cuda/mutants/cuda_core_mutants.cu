// The GPU mutants of the CUDA-core kernel and of the split-K merge: only the pinned instantiations their draws need
// (fp32, 32 head lanes, 4 rows; the merge's lanes shape, which at 32 lanes is also its warps shape).
#include "cuda/instances/cuda_core_instances.cuh"

namespace pacheck::cuda::instances {

#define PACHECK_CUDA_CORE_MUTANT(BUG) \
  template void launch_cuda_core<Storage::f32, 32, 4, BUG>(const DeviceBatch&, const DevicePlan&, cudaStream_t);
PACHECK_CUDA_CORE_MUTANT(GpuBug::cp_async_wait_one_late)
PACHECK_CUDA_CORE_MUTANT(GpuBug::tile_max_barrier_missing)
PACHECK_CUDA_CORE_MUTANT(GpuBug::butterfly_width_too_narrow)
PACHECK_CUDA_CORE_MUTANT(GpuBug::p_rounded_to_bf16)
PACHECK_CUDA_CORE_MUTANT(GpuBug::split_start_rounded_up)

#define PACHECK_MERGE_MUTANT(BUG)                                                                          \
  template void launch_merge<Storage::f32, 32, MergeShape::lanes, BUG>(const DeviceBatch&, const DevicePlan&, \
                                                                       cudaStream_t);
PACHECK_MERGE_MUTANT(GpuBug::merge_slot_by_row_capacity)
PACHECK_MERGE_MUTANT(GpuBug::merge_reads_one_split_past)
PACHECK_MERGE_MUTANT(GpuBug::merge_order_from_arrival)

}  // namespace pacheck::cuda::instances
