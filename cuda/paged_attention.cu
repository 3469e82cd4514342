// The production instantiations of the paged-attention kernels (paged_attention_kernel.cuh): one layout per
// storage type, head capacity (32, 64, 128, 256 lanes) and row capacity (4, 8), three for bf16 at 128 lanes (deep,
// wide and wide-evict-first, chosen per launch) and a fourth there for pinning (wide-kv-tma).
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda/paged_attention.h"
#include "cuda/paged_attention_kernel.cuh"
#include "cuda/tensor_core_attention_kernel.cuh"

namespace pacheck::cuda {

int storage_bytes(Storage storage) { return storage == Storage::f32 ? 4 : 2; }

KernelArithmetic kernel_arithmetic(Storage storage, int head_dim) {
  KernelArithmetic k;
  if (storage == Storage::bf16 && head_dim % 8 == 0) {
    k.tensor_cores = true;
    k.max_tile_keys = kernels::tensor_core::kTileKeys;
    k.key_groups = kernels::tensor_core::kWarps;
    return k;
  }
  const int lanes = layout::lanes_for(head_dim);
  // Both row capacities use the same tile and lanes per thread (the error models rely on it).
  static_assert(layout::production_shape(128, 2, 4).lanes_per_thread ==
                layout::production_shape(128, 2, 8).lanes_per_thread);
  const layout::KernelShape shape = layout::production_shape(lanes, storage_bytes(storage), layout::kMaxRows);
  k.max_tile_keys = shape.tile_keys;
  k.key_groups = layout::key_groups(lanes, shape.lanes_per_thread);
  return k;
}

int max_tile_keys(Storage storage, int head_dim) { return kernel_arithmetic(storage, head_dim).max_tile_keys; }

int row_capacity(int gqa_ratio) { return gqa_ratio <= 4 ? 4 : layout::kMaxRows; }

namespace {

int multiprocessor_count() {
  int device = 0, multiprocessors = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device),
             "reading the multiprocessor count");
  return multiprocessors;
}

// The layout at 128 lanes (see paged_attention.h): wide-evict-first when the grid fits in one wave of the wide
// layout, wide when it spans at least four, deep otherwise.
TensorCoreLayoutChoice tensor_core_layout_for(const DeviceBatch& batch, const DevicePlan& plan) {
  const TensorCoreLayoutChoice pinned = pinned_tensor_core_layout();
  if (pinned != TensorCoreLayoutChoice::automatic) return pinned;
  const long long blocks = static_cast<long long>(plan.num_items) * batch.num_kv_heads;
  const long long wave = 3LL * multiprocessor_count();  // blocks of the wide layout resident at once
  if (blocks <= wave) return TensorCoreLayoutChoice::wide_evict_first;
  return blocks >= 4 * wave ? TensorCoreLayoutChoice::wide : TensorCoreLayoutChoice::deep;
}

// A layout's instantiation for the plan's row capacity (4 or 8 rows a block).
template <template <int> class LAYOUT>
void launch_with_rows(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  if (plan.row_capacity == 4) return LAYOUT<4>::launch(batch, plan, stream);
  LAYOUT<layout::kMaxRows>::launch(batch, plan, stream);
}

// The production layouts with everything but the row capacity fixed, for launch_with_rows.
template <int LANES>
struct ProductionTensorCoreRows {
  template <int ROWS>
  using Layout = kernels::ProductionTensorCoreLayout<LANES, ROWS>;
};
template <typename T, int LANES>
struct ProductionCudaCoreRows {
  template <int ROWS>
  using Layout = kernels::ProductionLayout<T, LANES, ROWS>;
};

template <typename T, int LANES>
void launch_rows(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    // The error models read the same choice (kernel_arithmetic), so dispatch and bound cannot disagree.
    if (kernel_arithmetic(batch.storage, batch.head_dim).tensor_cores) {
      if constexpr (LANES == 128) {
        switch (tensor_core_layout_for(batch, plan)) {
          case TensorCoreLayoutChoice::wide_kv_tma:
            return launch_with_rows<kernels::WideKvTmaTensorCoreLayout>(batch, plan, stream);
          case TensorCoreLayoutChoice::wide:
            return launch_with_rows<kernels::WideTensorCoreLayout>(batch, plan, stream);
          case TensorCoreLayoutChoice::wide_evict_first:
            return launch_with_rows<kernels::WideEvictFirstTensorCoreLayout>(batch, plan, stream);
          case TensorCoreLayoutChoice::deep:
          case TensorCoreLayoutChoice::automatic:  // never returned: the rule resolves it
            break;                                   // the production layout below
        }
      }
      return launch_with_rows<ProductionTensorCoreRows<LANES>::template Layout>(batch, plan, stream);
    }
  }
  launch_with_rows<ProductionCudaCoreRows<T, LANES>::template Layout>(batch, plan, stream);
}

template <typename T>
void launch_typed(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  switch (layout::lanes_for(batch.head_dim)) {
    case 32: return launch_rows<T, 32>(batch, plan, stream);
    case 64: return launch_rows<T, 64>(batch, plan, stream);
    case 128: return launch_rows<T, 128>(batch, plan, stream);
    default: return launch_rows<T, 256>(batch, plan, stream);
  }
}

}  // namespace

int resident_blocks_per_multiprocessor(Storage storage, int head_dim, int gqa_ratio) {
  if (storage != Storage::bf16 || head_dim != 128)
    throw std::invalid_argument("resident_blocks_per_multiprocessor: only bf16 with head dim 128 is asked for");
  return row_capacity(gqa_ratio) == 4
             ? kernels::ProductionTensorCoreLayout<128, 4>::resident_blocks_per_multiprocessor()
             : kernels::ProductionTensorCoreLayout<128, layout::kMaxRows>::resident_blocks_per_multiprocessor();
}

MergeShapeChoice merge_shape_for(const DeviceBatch& batch) {
  const MergeShapeChoice pinned = pinned_merge_shape();
  if (pinned != MergeShapeChoice::automatic) return pinned;
  const long long rows = static_cast<long long>(batch.total_queries) * batch.num_query_heads;
  return rows <= multiprocessor_count() ? MergeShapeChoice::lanes : MergeShapeChoice::warps;
}

void launch_attention(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  if (batch.head_dim < 1 || batch.head_dim > kMaxHeadDim)
    throw std::invalid_argument("the CUDA kernels take head dims 1 to " + std::to_string(kMaxHeadDim) + ", got " +
                                std::to_string(batch.head_dim));
  if (static_cast<long long>(batch.num_blocks) * batch.block_size * batch.num_kv_heads > 0xffffffffLL)
    throw std::invalid_argument("the CUDA kernels index (block, slot, head) vectors in 32 bits: num_blocks * "
                                "block_size * num_kv_heads must stay below 2^32");
  // The kernels copy K, V and the queries by 16-byte copies (cudaMalloc's alignment is 256 bytes).
  for (const auto& [array, pointer] : {std::pair{"K pool", batch.k_pool}, std::pair{"V pool", batch.v_pool},
                                       std::pair{"queries", batch.queries}})
    if (reinterpret_cast<std::uintptr_t>(pointer) % 16 != 0)
      throw std::invalid_argument(std::string("the CUDA kernels need the ") + array +
                                  " 16-byte aligned (they copy it 16 bytes at a time)");
  if (plan.row_capacity != 4 && plan.row_capacity != layout::kMaxRows)
    throw std::invalid_argument("row capacity must be 4 or 8, got " + std::to_string(plan.row_capacity));
  check_kernel_pins();  // a malformed pin variable fails here, before anything is enqueued
  switch (batch.storage) {
    case Storage::f32: return launch_typed<float>(batch, plan, stream);
    case Storage::f16: return launch_typed<__half>(batch, plan, stream);
    case Storage::bf16: return launch_typed<__nv_bfloat16>(batch, plan, stream);
  }
}

}  // namespace pacheck::cuda
