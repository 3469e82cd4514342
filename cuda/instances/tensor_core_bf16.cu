// The tensor-core kernel's instantiations for bf16 storage, and the deep layout's residency the benchmark reads.
#include "cuda/instances/tensor_core_instances.cuh"

PACHECK_TENSOR_CORE_INSTANCES(pacheck::cuda::Storage::bf16)

namespace pacheck::cuda::instances {

int deep_layout_resident_blocks(int rows) {
  return rows == 4
             ? TensorCoreLauncher<Storage::bf16, 128, 4, KernelLayout::deep>::resident_blocks_per_multiprocessor()
             : TensorCoreLauncher<Storage::bf16, 128, kMaxRows, KernelLayout::deep>::resident_blocks_per_multiprocessor();
}

}  // namespace pacheck::cuda::instances
