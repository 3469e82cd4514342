// The split-K merge: a group of threads per output row merges the row's non-empty splits' partial states in split
// order with the online-softmax merge (variants/online_softmax.h, as cpu_splitk, from the row's sink), normalises
// and stores the row. A programmatic dependent of the attention kernel (ptx.cuh). C++17 CUDA.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/epilogue.cuh"
#include "cuda/launch_rules.h"
#include "cuda/paged_attention.h"
#include "cuda/ptx.cuh"
#include "cuda/storage.cuh"
#include "variants/online_softmax.h"

namespace pacheck::cuda::kernels {

// kThreadsPerRow threads per output row, thread j holding head lanes [kLanesPerThread j, + kLanesPerThread); every
// warp of a row reads (m, d) and computes the factors itself, so no barrier. LANES_PER_THREAD: 1 (lanes shape) or 4
// (warps), capped at LANES / 32 so a row is whole warps. A block is at least 128 threads: blocks start early only
// where they fit beside the attention blocks, and larger ones (measured slower) fit less often.
template <int LANES, int LANES_PER_THREAD>
struct MergeThreads {
  static constexpr int kLanesPerThread = LANES_PER_THREAD < LANES / 32 ? LANES_PER_THREAD : LANES / 32;
  static constexpr int kThreadsPerRow = LANES / kLanesPerThread;  // whole warps
  static constexpr int kBlockThreads = kThreadsPerRow > 128 ? kThreadsPerRow : 128;
  static constexpr int kRowsPerBlock = kBlockThreads / kThreadsPerRow;
};

// The arrival tickets of GpuBug::merge_order_from_arrival (instantiated by that mutant only).
template <typename T>
__device__ unsigned merge_arrivals = 0;

template <typename T, int LANES, int LANES_PER_THREAD, GpuBug BUG = GpuBug::none>
__global__ void __launch_bounds__(MergeThreads<LANES, LANES_PER_THREAD>::kBlockThreads)
    merge_splits_kernel(const DeviceBatch batch, const DevicePlan plan) {
  using Shape = MergeThreads<LANES, LANES_PER_THREAD>;
  constexpr int kPerThread = Shape::kLanesPerThread;
  static_assert(Shape::kThreadsPerRow % 32 == 0, "a warp holds part of one row only");
  const int row_index =
      static_cast<int>(blockIdx.x) * Shape::kRowsPerBlock + static_cast<int>(threadIdx.x) / Shape::kThreadsPerRow;
  const int first_lane = static_cast<int>(threadIdx.x) % Shape::kThreadsPerRow * kPerThread;
  const int lane = threadIdx.x & 31;
  if (row_index >= batch.total_queries * batch.num_query_heads) return;  // whole warps
  const int query_row = row_index / batch.num_query_heads;
  const int query_head = row_index % batch.num_query_heads;
  const int s = batch.sequence_of_query_row[query_row];
  const SequenceMeta seq = batch.sequences[s];
  const int token = query_row - seq.query_row_offset;
  const int gqa = batch.num_query_heads / batch.num_kv_heads;
  const int kv_head = query_head / gqa;
  const int row = token * gqa + query_head % gqa;
  // BUG merge_slot_by_row_capacity: the block's capacity for the rows it was given (they differ at GQA 3).
  const int rows_per_item = BUG == GpuBug::merge_slot_by_row_capacity ? plan.row_capacity : plan.rows_per_chunk;
  const int chunk = row / rows_per_item;
  const int r = row % rows_per_item;
  const int first_position = seq.context_len - seq.num_queries;
  const int position = first_position + token;
  // The row's splits: from the one holding its window's start to the one holding its position (attention_plan.cpp).
  const int split = plan.split_sizes[s];
  const int first_item = plan.chunk_first_item[plan.chunk_offsets[s] + chunk] +
                         row_first_split_offset(first_position + chunk * plan.rows_per_chunk / gqa, position, split,
                                                batch.window);
  // BUG merge_reads_one_split_past: one split more than the row has, still inside the workspace.
  int used_splits = position / split + 1 - window_start(position, batch.window) / split;
  if constexpr (BUG == GpuBug::merge_reads_one_split_past)
    if (first_item + used_splits < plan.num_items) ++used_splits;
  const int head_dim = batch.head_dim;
  // Whole vectors of kPerThread lanes where head_dim keeps them aligned and whole (the output also needs its start
  // aligned); element by element otherwise.
  const bool whole_vectors = head_dim % kPerThread == 0;
  const bool whole_output_vectors = whole_vectors && output_aligned_for_lanes<T, kPerThread>(batch);
  // The partial-state slot of split k of this row: [item][KV head][row].
  const std::size_t first_slot =
      (static_cast<std::size_t>(first_item) * batch.num_kv_heads + kv_head) * plan.row_capacity + r;
  const std::size_t split_stride = static_cast<std::size_t>(batch.num_kv_heads) * plan.row_capacity;
  // BUG merge_order_from_arrival: the row's splits in order from the one its arrival ticket names, wrapping around.
  unsigned rotation = 0;
  if constexpr (BUG == GpuBug::merge_order_from_arrival)
    rotation = __shfl_sync(0xffffffffu, lane == 0 ? atomicAdd(&merge_arrivals<T>, 1u) : 0u, 0) % used_splits;
  const auto slot_of = [&](int split) {
    if constexpr (BUG == GpuBug::merge_order_from_arrival) split = static_cast<int>((split + rotation) % used_splits);
    return first_slot + split * split_stride;
  };

  // Everything above came from the plan; the partial states below are the attention kernel's output.
  ptx::wait_for_prerequisite_grids();

  // kBatch partial states at a time, every load in flight together (lane b reads split b's (m, d), shared by
  // shuffle), merged with merge_in_order's operations in split order but the batch's exps side by side, each part's
  // factors computed in one lane (the same expf wherever it runs). Slots past the row's last split stay empty states
  // (merging skips them). The last few splits merge as a batch of 4; 16 measured faster than 8 or 32.
  constexpr int kBatch = 16;
  constexpr int kShortBatch = 4;
  static_assert(kBatch <= 32, "a batch's (m, d) fit one per lane");
  using State = OnlineSoftmaxState<kPerThread>;
  State merged;
  merged.init_sink(batch.sinks ? batch.sinks[query_head] : -INFINITY, kPerThread);  // the sink joins once, first
  const auto merge_batch = [&](int k0, auto parts_constant) {
    constexpr int kParts = decltype(parts_constant)::value;
    float lane_max = -INFINITY, lane_denominator = 0.0f;
    if (lane < kParts && k0 + lane < used_splits) {
      lane_max = plan.partial_max[slot_of(k0 + lane)];
      lane_denominator = plan.partial_denominator[slot_of(k0 + lane)];
    }
    State part[kParts];
#pragma unroll
    for (int b = 0; b < kParts; ++b) {
      part[b].init(kPerThread);
      if (k0 + b >= used_splits || first_lane >= head_dim) continue;
      const float* const acc = plan.partial_acc + slot_of(k0 + b) * head_dim + first_lane;
      if (whole_vectors) {
        const auto v = *reinterpret_cast<const AlignedLanes<float, kPerThread>*>(acc);
#pragma unroll
        for (int i = 0; i < kPerThread; ++i) part[b].o[i] = v.element[i];
      } else {
#pragma unroll
        for (int i = 0; i < kPerThread; ++i)
          if (first_lane + i < head_dim) part[b].o[i] = acc[i];
      }
    }
    // The shuffles wait for the (m, d) loads: the accumulator loads are already in flight.
    float part_max[kParts], before[kParts];
#pragma unroll
    for (int b = 0; b < kParts; ++b) {
      part[b].m = part_max[b] = __shfl_sync(0xffffffffu, lane_max, b);
      part[b].d = __shfl_sync(0xffffffffu, lane_denominator, b);
    }
    const float merged_max = State::merge_maxima(merged.m, part_max, before);
    // Lane i < kParts computes part i's two factors.
    const int i = lane % kParts;
    float lane_before = before[0];
#pragma unroll
    for (int b = 1; b < kParts; ++b) lane_before = b == i ? before[b] : lane_before;
    const float lane_self_factor = State::merge_self_factor(lane_before, lane_max);
    const float lane_other_factor = State::merge_other_factor(lane_before, lane_max);
    float self_factor[kParts], other_factor[kParts];
#pragma unroll
    for (int b = 0; b < kParts; ++b) {
      self_factor[b] = __shfl_sync(0xffffffffu, lane_self_factor, b);
      other_factor[b] = __shfl_sync(0xffffffffu, lane_other_factor, b);
    }
    merged.apply_merges_in_order(part, self_factor, other_factor, merged_max, kPerThread);
  };
  for (int k0 = 0; k0 < used_splits; k0 += kBatch) {
    if (used_splits - k0 <= kShortBatch)
      merge_batch(k0, std::integral_constant<int, kShortBatch>{});
    else
      merge_batch(k0, std::integral_constant<int, kBatch>{});
  }
  if (first_lane >= head_dim) return;
  float out[kPerThread];
  merged.normalize(out, kPerThread);
  const std::size_t output_row = static_cast<std::size_t>(query_row) * batch.num_query_heads + query_head;
  T* const output = static_cast<T*>(batch.output) + output_row * head_dim + first_lane;
  if (whole_output_vectors) {
    AlignedLanes<T, kPerThread> v;
#pragma unroll
    for (int e = 0; e < kPerThread; ++e) v.element[e] = StorageOps<T>::from_float(out[e]);
    *reinterpret_cast<AlignedLanes<T, kPerThread>*>(output) = v;
  } else {
#pragma unroll
    for (int e = 0; e < kPerThread; ++e)
      if (first_lane + e < head_dim) output[e] = StorageOps<T>::from_float(out[e]);
  }
}

}  // namespace pacheck::cuda::kernels
