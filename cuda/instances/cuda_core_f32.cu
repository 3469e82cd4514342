// The CUDA-core kernel's instantiations for f32 storage.
#include "cuda/instances/cuda_core_instances.cuh"

PACHECK_CUDA_CORE_INSTANCES(pacheck::cuda::Storage::f32)
