// The tensor-core kernel's instantiations for an e5m2 cache with bf16 queries, and the one-wave layout's residency.
#include "cuda/instances/tensor_core_instances.cuh"

PACHECK_TENSOR_CORE_CACHE_INSTANCES(pacheck::cuda::Storage::bf16, pacheck::cuda::KvCache::e5m2)

namespace pacheck::cuda::instances {

template <>
int one_wave_resident_blocks_of<KvCache::e5m2>(int rows) {
  return one_wave_resident_blocks_for<KvCache::e5m2>(rows);
}

}  // namespace pacheck::cuda::instances
