// The tensor-core kernel's instantiations at 32, 64 and 256 head lanes, one layout each.
#include "cuda/instances/tensor_core_instances.cuh"

namespace pacheck::cuda::instances {

template void launch_tensor_core<32, 4, KernelLayout::automatic>(const DeviceBatch&, const DevicePlan&, cudaStream_t);
template void launch_tensor_core<32, 8, KernelLayout::automatic>(const DeviceBatch&, const DevicePlan&, cudaStream_t);
template void launch_tensor_core<64, 4, KernelLayout::automatic>(const DeviceBatch&, const DevicePlan&, cudaStream_t);
template void launch_tensor_core<64, 8, KernelLayout::automatic>(const DeviceBatch&, const DevicePlan&, cudaStream_t);
template void launch_tensor_core<256, 4, KernelLayout::automatic>(const DeviceBatch&, const DevicePlan&, cudaStream_t);
template void launch_tensor_core<256, 8, KernelLayout::automatic>(const DeviceBatch&, const DevicePlan&, cudaStream_t);

}  // namespace pacheck::cuda::instances
