// The CUDA-core kernel's instantiations for f16 storage.
#include "cuda/instances/cuda_core_instances.cuh"

PACHECK_CUDA_CORE_INSTANCES(pacheck::cuda::Storage::f16)
