// The end of a work item, once a block's key groups (CUDA cores) or warps (tensor cores) have left their sums in
// shared memory: each output element is their sum in group order, normalised and stored (cuda_fused) or stored as
// the item's partial state (split-K). C++17 CUDA.
#pragma once

#include <cstdint>

#include "cuda/block_work.cuh"
#include "cuda/paged_attention.h"
#include "cuda/storage.cuh"
#include "variants/online_softmax.h"

namespace pacheck::cuda::kernels {

// N consecutive lanes of E as one aligned access (one 16-byte load for 4 floats).
template <typename E, int N>
struct alignas(N * sizeof(E)) AlignedLanes {
  E element[N];
};
// Whether the batch's output (of T) is aligned for AlignedLanes<T, N> stores at every multiple of N lanes.
template <typename T, int N>
__device__ inline bool output_aligned_for_lanes(const DeviceBatch& batch) {
  return reinterpret_cast<std::uintptr_t>(batch.output) % (N * sizeof(T)) == 0;
}

// From group_acc [kKeyGroups][kRows][kRowStride] (LANES floats of a row used), den_s [kKeyGroups][kRows] and max_s
// [kRows]: each element's and denominator's sum over the key groups in group order; fused, joined by the row's sink,
// normalised and stored; split-K, stored as the partial state. N consecutive lanes a thread: the same sums whatever
// N is.
template <int N, typename T, int kRows, int LANES, int kRowStride, int kKeyGroups, int kBlockThreads>
__device__ void write_item_lanes(const DeviceBatch& batch, const DevicePlan& plan, const BlockWork& work,
                                 const float* group_acc, const float* den_s, const float* max_s) {
  static_assert(LANES % N == 0 && kRowStride % 4 == 0, "whole groups of N lanes, rows 16-byte aligned");
  using Lanes = AlignedLanes<float, N>;
  constexpr int kGroups = LANES / N;  // of a row
  const WorkItem& item = work.item;
  const int head_dim = batch.head_dim;
  T* const output = static_cast<T*>(batch.output);
  for (int e = threadIdx.x; e < kRows * kGroups; e += kBlockThreads) {
    const int r = e / kGroups, j = e % kGroups * N;
    if (r >= item.num_rows || j >= head_dim) continue;  // N divides head_dim: a group is all in the head or all past
    Lanes o = *reinterpret_cast<const Lanes*>(group_acc + r * kRowStride + j);
    float d = den_s[r];
    for (int g = 1; g < kKeyGroups; ++g) {
      const Lanes more = *reinterpret_cast<const Lanes*>(group_acc + (g * kRows + r) * kRowStride + j);
#pragma unroll
      for (int i = 0; i < N; ++i) o.element[i] += more.element[i];
      d += den_s[g * kRows + r];
    }
    if (!plan.split_k) {
      OnlineSoftmaxState<N> state;
      state.m = max_s[r];
      state.d = d;
#pragma unroll
      for (int i = 0; i < N; ++i) state.o[i] = o.element[i];
      if (batch.sinks) {  // the row's sink joins once, last: a merge with its state (-inf: none, the identity)
        OnlineSoftmaxState<N> sink;
        sink.init_sink(batch.sinks[row_query_head(work, r)], N);
        state.merge(sink, N);
      }
      float normalized[N];
      state.normalize(normalized, N);
      const int row = item.first_row + r;
      const int query_head = work.kv_head * work.gqa + row % work.gqa;
      const std::size_t query_row = static_cast<std::size_t>(work.seq.query_row_offset + row / work.gqa);
      AlignedLanes<T, N> stored;
#pragma unroll
      for (int i = 0; i < N; ++i) stored.element[i] = StorageOps<T>::from_float(normalized[i]);
      *reinterpret_cast<AlignedLanes<T, N>*>(output + (query_row * batch.num_query_heads + query_head) * head_dim + j) =
          stored;
    } else {
      const std::size_t slot =
          (static_cast<std::size_t>(work.item_index) * batch.num_kv_heads + work.kv_head) * kRows + r;
      *reinterpret_cast<Lanes*>(plan.partial_acc + slot * head_dim + j) = o;
      if (j == 0) {
        plan.partial_max[slot] = max_s[r];
        plan.partial_denominator[slot] = d;
      }
    }
  }
}

// Four lanes a thread (16-byte accesses: a split-K block's end is on the merge's path) where head_dim % 4 == 0 and the
// output is aligned for them (the partial states' scratch always is), else one;
// GpuFused.AnOutputAlignedOnlyToItsElementGetsTheSameBits checks both give the same bits.
template <typename T, int kRows, int LANES, int kKeyGroups, int kBlockThreads, int kRowStride = LANES>
__device__ void write_item_result(const DeviceBatch& batch, const DevicePlan& plan, const BlockWork& work,
                                  const float* group_acc, const float* den_s, const float* max_s) {
  static_assert(LANES % 4 == 0, "a layout's lanes are a power of two from 32");
  if (batch.head_dim % 4 == 0 && (plan.split_k || output_aligned_for_lanes<T, 4>(batch)))
    write_item_lanes<4, T, kRows, LANES, kRowStride, kKeyGroups, kBlockThreads>(batch, plan, work, group_acc, den_s,
                                                                                max_s);
  else
    write_item_lanes<1, T, kRows, LANES, kRowStride, kKeyGroups, kBlockThreads>(batch, plan, work, group_acc, den_s,
                                                                                max_s);
}

}  // namespace pacheck::cuda::kernels
