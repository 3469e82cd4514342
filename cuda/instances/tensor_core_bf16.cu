// The tensor-core kernel's instantiations for bf16 storage, and the one-wave layout's residency the benchmark reads.
#include "cuda/instances/tensor_core_instances.cuh"

PACHECK_TENSOR_CORE_INSTANCES(pacheck::cuda::Storage::bf16)

namespace pacheck::cuda::instances {

template <>
int one_wave_resident_blocks_of<KvCache::same>(int rows) {
  return one_wave_resident_blocks_for<KvCache::same>(rows);
}

}  // namespace pacheck::cuda::instances
