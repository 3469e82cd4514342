// The tensor-core kernel's instantiations for bf16 storage, and the deep layout's residency the benchmark reads.
#include "cuda/instances/tensor_core_instances.cuh"

PACHECK_TENSOR_CORE_INSTANCES(pacheck::cuda::Storage::bf16)

namespace pacheck::cuda::instances {

int deep_layout_resident_blocks(int rows) {
  using Four = TensorCoreLauncher<Storage::bf16, 128, 4, KernelLayout::deep>;
  using Eight = TensorCoreLauncher<Storage::bf16, 128, kMaxRows, KernelLayout::deep>;
  return rows == 4 ? Four::resident_blocks_per_multiprocessor() : Eight::resident_blocks_per_multiprocessor();
}

}  // namespace pacheck::cuda::instances
