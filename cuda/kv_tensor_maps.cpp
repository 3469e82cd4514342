// Encoding the K and V pools' tensor maps (kv_tensor_maps.h).
#include "cuda/kv_tensor_maps.h"

#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda/cuda_check.h"
#include "cuda/launch_rules.h"

namespace pacheck::cuda {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encoder = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    cuda_check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault, &found),
               "looking up the driver's cuTensorMapEncodeTiled");
    if (found != cudaDriverEntryPointSuccess || function == nullptr)
      throw CudaError("the driver has no cuTensorMapEncodeTiled (CUDA 12 or later needed)", cudaErrorNotSupported);
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }();
  return encoder;
}

void encode_pool(CUtensorMap& map, const void* pool, const DeviceBatch& batch, const char* which) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(batch.head_dim), static_cast<cuuint64_t>(batch.num_kv_heads),
                              static_cast<cuuint64_t>(batch.num_blocks) * batch.block_size};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(batch.head_dim) * 2,
                                 static_cast<cuuint64_t>(batch.num_kv_heads) * batch.head_dim * 2};
  const cuuint32_t box[3] = {kTensorCopyLanes, 1, kTensorCopyKeys};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUtensorMapDataType type =
      batch.storage == Storage::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const CUresult status = tensor_map_encoder()(
      &map, type, 3, const_cast<void*>(pool), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS)
    throw CudaError(std::string("encoding the ") + which + " pool's tensor map (CUresult " + std::to_string(status) +
                        ")",
                    cudaErrorInvalidValue);
}

}  // namespace

bool tensor_copies_allowed(const DeviceBatch& batch, int tile_size) {
  // The tensor-core kernel above 32 lanes, its tile capped as the kernel caps it.
  const KernelArithmetic kernel = kernel_arithmetic(batch.storage, batch.head_dim);
  const int tile = std::max(1, std::min(tile_size, kernel.max_tile_keys));
  return kernel.tensor_cores && batch.head_dim > 32 && batch.block_size % kTensorCopyKeys == 0 &&
         tile % kTensorCopyKeys == 0 && static_cast<long long>(batch.num_blocks) * batch.block_size <= 0x7fffffffLL &&
         reinterpret_cast<std::uintptr_t>(batch.k_pool) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(batch.v_pool) % 16 == 0;
}

KvTensorMaps describe_kv_pools(const DeviceBatch& batch, int tile_size) {
  KvTensorMaps maps{};
  maps.usable = tensor_copies_allowed(batch, tile_size);
  if (!maps.usable) return maps;
  encode_pool(maps.k, batch.k_pool, batch, "K");
  encode_pool(maps.v, batch.v_pool, batch, "V");
  return maps;
}

}  // namespace pacheck::cuda
