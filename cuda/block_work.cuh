// What one thread block of either attention kernel works on: work item blockIdx.x of the plan, for KV head
// blockIdx.y, with what both kernels derive from it. C++17 CUDA.
#pragma once

#include "cuda/paged_attention.h"

namespace pacheck::cuda::kernels {

// What one thread block works on: work item blockIdx.x for KV head blockIdx.y, loaded once by both kernels.
struct BlockWork {
  WorkItem item;
  int kv_head = 0;
  SequenceMeta seq;
  int gqa = 1;
  int first_position = 0;  // position of the sequence's first query token
};
__device__ inline BlockWork load_block_work(const DeviceBatch& batch, const DevicePlan& plan) {
  BlockWork work;
  work.item = plan.items[blockIdx.x];
  work.kv_head = blockIdx.y;
  work.seq = work.item.sequence;
  work.gqa = batch.num_query_heads / batch.num_kv_heads;
  work.first_position = work.seq.context_len - work.seq.num_queries;
  return work;
}

}  // namespace pacheck::cuda::kernels
