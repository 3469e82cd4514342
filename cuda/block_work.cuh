// What one thread block of either attention kernel works on: a work item of the plan for one KV head, and what both
// kernels derive from it (its rows' logit options among them). C++17 CUDA.
#pragma once

#include "cuda/paged_attention.h"
#include "variants/online_softmax.h"

namespace pacheck::cuda::kernels {

// Block b takes item b / num_kv_heads for KV head b % num_kv_heads, so that a sequence's KV heads start side by side
// and read the same pages' (adjacent) rows together.
struct BlockWork {
  WorkItem item;
  int item_index = 0;
  int kv_head = 0;
  SequenceMeta seq;
  int gqa = 1;
  int first_position = 0;  // position of the sequence's first query token
};
__device__ inline BlockWork load_block_work(const DeviceBatch& batch, const DevicePlan& plan) {
  BlockWork work;
  work.item_index = static_cast<int>(blockIdx.x) / batch.num_kv_heads;
  work.kv_head = static_cast<int>(blockIdx.x) % batch.num_kv_heads;
  work.item = plan.items[work.item_index];
  work.seq = work.item.sequence;
  work.gqa = batch.num_query_heads / batch.num_kv_heads;
  work.first_position = work.seq.context_len - work.seq.num_queries;
  return work;
}

// Block row r's query head and position (r within the item's rows).
__device__ inline int row_query_head(const BlockWork& work, int r) {
  return work.kv_head * work.gqa + (work.item.first_row + r) % work.gqa;
}
__device__ inline int row_position(const BlockWork& work, int r) {
  return work.first_position + (work.item.first_row + r) / work.gqa;
}

// The logit options as the kernels apply them (online_softmax.h's arithmetic, in problem.h's order). Whether a score
// needs any beyond the scale: one uniform test.
__device__ inline bool has_logit_arithmetic(const DeviceBatch& batch) {
  return batch.soft_cap > 0.0f || batch.alibi_slopes != nullptr;
}
// A present row's ALiBi slope (0 without ALiBi, or for an absent row: then never used).
__device__ inline float row_alibi_slope(const DeviceBatch& batch, const BlockWork& work, int r) {
  return batch.alibi_slopes && r < work.item.num_rows ? batch.alibi_slopes[row_query_head(work, r)] : 0.0f;
}
// The scaled score s of key `key` for a row at `position`: soft-capped, then biased; before masking (a soft cap
// would make -inf into -cap).
__device__ inline float with_logit_options(const DeviceBatch& batch, float s, float slope, int key, int position) {
  if (batch.soft_cap > 0.0f) s = soft_capped(s, batch.soft_cap);
  return batch.alibi_slopes ? alibi_biased(s, slope, key, position) : s;
}
// The first key block row r attends to: the item's first, or its window's start if later.
__device__ inline int row_first_key(const DeviceBatch& batch, const BlockWork& work, int r) {
  return max(work.item.key_begin, window_start(row_position(work, r), batch.window));
}

}  // namespace pacheck::cuda::kernels
