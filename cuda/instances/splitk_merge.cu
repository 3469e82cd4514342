// The split-K merge's instantiations: every storage type, head capacity and shape.
#include "cuda/kernel_instances.h"
#include "cuda/launcher.cuh"

namespace pacheck::cuda::instances {

template <Storage S, int LANES, MergeShape SHAPE>
void launch_merge(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  static_assert(SHAPE == MergeShape::lanes || SHAPE == MergeShape::warps, "a resolved shape");
  kernels::launch_merge_kernel<typename kernels::StorageType<S>::type, LANES, SHAPE == MergeShape::lanes ? 1 : 4>(
      batch, plan, stream);
}

#define PACHECK_MERGE_INSTANCES(S, SHAPE)                                                                  \
  template void launch_merge<S, 32, SHAPE>(const DeviceBatch&, const DevicePlan&, cudaStream_t);           \
  template void launch_merge<S, 64, SHAPE>(const DeviceBatch&, const DevicePlan&, cudaStream_t);           \
  template void launch_merge<S, 128, SHAPE>(const DeviceBatch&, const DevicePlan&, cudaStream_t);          \
  template void launch_merge<S, 256, SHAPE>(const DeviceBatch&, const DevicePlan&, cudaStream_t);
PACHECK_MERGE_INSTANCES(Storage::f32, MergeShape::lanes)
PACHECK_MERGE_INSTANCES(Storage::f32, MergeShape::warps)
PACHECK_MERGE_INSTANCES(Storage::f16, MergeShape::lanes)
PACHECK_MERGE_INSTANCES(Storage::f16, MergeShape::warps)
PACHECK_MERGE_INSTANCES(Storage::bf16, MergeShape::lanes)
PACHECK_MERGE_INSTANCES(Storage::bf16, MergeShape::warps)

}  // namespace pacheck::cuda::instances
