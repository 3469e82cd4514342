// launch_attention: checks what the kernels need, resolves the kernel choices by launch_rules.h, and calls the
// instantiation that serves the batch (kernel_instances.h); no kernel is compiled here.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda/cuda_check.h"
#include "cuda/kernel_instances.h"
#include "cuda/launch_rules.h"
#include "cuda/paged_attention.h"

namespace pacheck::cuda {

namespace {

int multiprocessor_count() {
  int device = 0, multiprocessors = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device),
             "reading the multiprocessor count");
  return multiprocessors;
}

// Calls f(std::integral_constant<int, LANES>{}) for the head's lane capacity.
template <typename F>
void with_lanes(int head_dim, F&& f) {
  switch (lanes_for(head_dim)) {
    case 32: return f(std::integral_constant<int, 32>{});
    case 64: return f(std::integral_constant<int, 64>{});
    case 128: return f(std::integral_constant<int, 128>{});
    default: return f(std::integral_constant<int, 256>{});
  }
}

// The instantiation of the plan's row capacity (4 or 8) and the pools' values.
template <Storage S, int LANES, KernelLayout LAYOUT, int ROWS>
void launch_tensor_core_cache(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  if constexpr (S == Storage::bf16) {
    if (batch.kv_cache == KvCache::e4m3)
      return instances::launch_tensor_core<S, LANES, ROWS, LAYOUT, GpuBug::none, KvCache::e4m3>(batch, plan, stream);
    if (batch.kv_cache == KvCache::e5m2)
      return instances::launch_tensor_core<S, LANES, ROWS, LAYOUT, GpuBug::none, KvCache::e5m2>(batch, plan, stream);
  }
  instances::launch_tensor_core<S, LANES, ROWS, LAYOUT>(batch, plan, stream);
}
template <Storage S, int LANES, KernelLayout LAYOUT>
void launch_tensor_core_rows(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  if (plan.row_capacity == 4) return launch_tensor_core_cache<S, LANES, LAYOUT, 4>(batch, plan, stream);
  launch_tensor_core_cache<S, LANES, LAYOUT, kMaxRows>(batch, plan, stream);
}
template <Storage S, int LANES>
void launch_cuda_core_rows(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  if (plan.row_capacity == 4) return instances::launch_cuda_core<S, LANES, 4>(batch, plan, stream);
  instances::launch_cuda_core<S, LANES, kMaxRows>(batch, plan, stream);
}

template <Storage S, int LANES>
void launch_tensor_core_lanes(const DeviceBatch& batch, const DevicePlan& plan, KernelLayout pinned,
                              cudaStream_t stream) {
  if constexpr (LANES == 128) {
    const long long blocks = attention_grid_blocks(plan.num_items, batch.num_kv_heads);
    switch (choose_tensor_core_layout(blocks, multiprocessor_count(), pinned, batch.kv_cache)) {
      case KernelLayout::wide: return launch_tensor_core_rows<S, 128, KernelLayout::wide>(batch, plan, stream);
      case KernelLayout::wide_evict_first:
        return launch_tensor_core_rows<S, 128, KernelLayout::wide_evict_first>(batch, plan, stream);
      case KernelLayout::deep:
      case KernelLayout::automatic:  // never returned: the rule resolves it
        return launch_tensor_core_rows<S, 128, KernelLayout::deep>(batch, plan, stream);
    }
  } else {
    launch_tensor_core_rows<S, LANES, KernelLayout::automatic>(batch, plan, stream);
  }
}

template <Storage S>
void launch_storage(const DeviceBatch& batch, const DevicePlan& plan, KernelLayout pinned, cudaStream_t stream) {
  if constexpr (S != Storage::f32) {
    if (uses_tensor_cores(batch.storage, batch.head_dim)) {
      return with_lanes(batch.head_dim, [&](auto lanes) {
        launch_tensor_core_lanes<S, decltype(lanes)::value>(batch, plan, pinned, stream);
      });
    }
  }
  with_lanes(batch.head_dim,
             [&](auto lanes) { launch_cuda_core_rows<S, decltype(lanes)::value>(batch, plan, stream); });
}

template <Storage S, MergeShape SHAPE>
void launch_merge_shape(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
  with_lanes(batch.head_dim,
             [&](auto lanes) { instances::launch_merge<S, decltype(lanes)::value, SHAPE>(batch, plan, stream); });
}
template <Storage S>
void launch_merge(const DeviceBatch& batch, const DevicePlan& plan, MergeShape pinned, cudaStream_t stream) {
  const long long rows = static_cast<long long>(batch.total_queries) * batch.num_query_heads;
  if (choose_merge_shape(rows, multiprocessor_count(), pinned) == MergeShape::lanes)
    return launch_merge_shape<S, MergeShape::lanes>(batch, plan, stream);
  launch_merge_shape<S, MergeShape::warps>(batch, plan, stream);
}

template <Storage S>
void launch_all(const DeviceBatch& batch, const DevicePlan& plan, const KernelPins& pins, cudaStream_t stream) {
  launch_storage<S>(batch, plan, pins.layout, stream);
  if (plan.split_k) launch_merge<S>(batch, plan, pins.merge, stream);
}

}  // namespace

int resident_blocks_per_multiprocessor(Storage storage, int head_dim, int gqa_ratio, KvCache cache) {
  // fp16's instantiations are bf16's with another operand type: the same shared memory, registers within bf16's.
  if (storage == Storage::f32 || head_dim != 128 || !takes_kv_cache(storage, head_dim, cache))
    throw std::invalid_argument("resident_blocks_per_multiprocessor: only bf16 or fp16 (bf16 with an fp8 cache) with "
                                "head dim 128 is asked for");
  return instances::one_wave_resident_blocks(row_capacity(gqa_ratio), cache);
}

void launch_attention(const DeviceBatch& batch, const DevicePlan& plan, const KernelPins& pins, cudaStream_t stream) {
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
  // The kernels test the logit options' scalars for presence (0 is none): anything else is refused.
  if (!(batch.soft_cap == 0.0f || (std::isfinite(batch.soft_cap) && batch.soft_cap > 0.0f)))
    throw std::invalid_argument("the soft cap must be finite and positive, or 0 for none, got " +
                                std::to_string(batch.soft_cap));
  if (batch.window < 0)
    throw std::invalid_argument("the window must be at least 1, or 0 for none, got " + std::to_string(batch.window));
  if (plan.row_capacity != 4 && plan.row_capacity != kMaxRows)
    throw std::invalid_argument("row capacity must be 4 or 8, got " + std::to_string(plan.row_capacity));
  attention_grid_blocks(plan.num_items, batch.num_kv_heads);  // before any device query
  if (batch.kv_cache != KvCache::same) {
    if (!takes_kv_cache(batch.storage, batch.head_dim, batch.kv_cache))
      throw std::invalid_argument("the CUDA kernels read an fp8 cache with bf16 queries and a head dim that is a "
                                  "multiple of " + std::to_string(kFp8HeadDimMultiple) + ", got head dim " +
                                  std::to_string(batch.head_dim) +
                                  (batch.storage == Storage::bf16 ? "" : " and queries not bf16"));
    if (batch.k_scales == nullptr || batch.v_scales == nullptr)
      throw std::invalid_argument("an fp8 cache needs its K and V scales (one per KV head)");
  }
  switch (batch.storage) {
    case Storage::f32: return launch_all<Storage::f32>(batch, plan, pins, stream);
    case Storage::f16: return launch_all<Storage::f16>(batch, plan, pins, stream);
    case Storage::bf16: return launch_all<Storage::bf16>(batch, plan, pins, stream);
  }
}

}  // namespace pacheck::cuda
