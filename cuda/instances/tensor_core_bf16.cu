// The tensor-core kernel's instantiations for bf16 storage, and the one-wave layout's residency the benchmark reads.
#include "cuda/instances/tensor_core_instances.cuh"

PACHECK_TENSOR_CORE_INSTANCES(pacheck::cuda::Storage::bf16)

template int pacheck::cuda::instances::one_wave_resident_blocks_of<pacheck::cuda::KvCache::same>(int rows);
