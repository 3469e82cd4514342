// The split-K merge's instantiations: every storage type, head capacity and shape.
#include "cuda/kernel_instances.h"
#include "cuda/launcher.cuh"

namespace pacheck::cuda::instances {

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
