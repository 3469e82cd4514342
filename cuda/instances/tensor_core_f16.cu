// The tensor-core kernel's instantiations for fp16 storage.
#include "cuda/instances/tensor_core_instances.cuh"

PACHECK_TENSOR_CORE_INSTANCES(pacheck::cuda::Storage::f16)
