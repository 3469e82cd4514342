// The tensor-core kernel's instantiations for an e4m3 cache with bf16 queries, and the one-wave layout's residency.
#include "cuda/instances/tensor_core_instances.cuh"

PACHECK_TENSOR_CORE_CACHE_INSTANCES(pacheck::cuda::Storage::bf16, pacheck::cuda::KvCache::e4m3)

namespace pacheck::cuda::instances {

template <>
int one_wave_resident_blocks_of<KvCache::e4m3>(int rows) {
  return one_wave_resident_blocks_for<KvCache::e4m3>(rows);
}

}  // namespace pacheck::cuda::instances
