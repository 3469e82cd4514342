// The tensor-core kernel's instantiations at 128 head lanes: the deep, wide and wide-evict-first layouts.
#include "cuda/instances/tensor_core_instances.cuh"

namespace pacheck::cuda::instances {

template void launch_tensor_core<128, 4, KernelLayout::deep>(const DeviceBatch&, const DevicePlan&, cudaStream_t);
template void launch_tensor_core<128, 8, KernelLayout::deep>(const DeviceBatch&, const DevicePlan&, cudaStream_t);
template void launch_tensor_core<128, 4, KernelLayout::wide>(const DeviceBatch&, const DevicePlan&, cudaStream_t);
template void launch_tensor_core<128, 8, KernelLayout::wide>(const DeviceBatch&, const DevicePlan&, cudaStream_t);
template void launch_tensor_core<128, 4, KernelLayout::wide_evict_first>(const DeviceBatch&, const DevicePlan&,
                                                                         cudaStream_t);
template void launch_tensor_core<128, 8, KernelLayout::wide_evict_first>(const DeviceBatch&, const DevicePlan&,
                                                                         cudaStream_t);

int deep_layout_resident_blocks(int rows) {
  return rows == 4 ? TensorCoreLauncher<128, 4, KernelLayout::deep>::resident_blocks_per_multiprocessor()
                   : TensorCoreLauncher<128, kMaxRows, KernelLayout::deep>::resident_blocks_per_multiprocessor();
}

}  // namespace pacheck::cuda::instances
