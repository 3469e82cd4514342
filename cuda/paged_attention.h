// The CUDA paged-attention kernels behind cuda_fused and cuda_splitk: what they read and write, the plan a launch
// follows, and the launch itself.
//
// Both variants run the same work items on the tensor-core kernel (bf16, fp16, head dims a multiple of 8:
// tensor_core_kernel.cuh) or the fp32 CUDA-core kernel (the rest: cuda_core_kernel.cuh); launch_rules.h says which.
// A thread block owns one work item: a run of consecutive rows of one (sequence, KV head), its (query token, query
// head of the GQA group) pairs in token-major order, and a range of key positions. It walks the range through the
// block table a tile at a time, masks the ragged tail, the causal future and the keys before each row's window, and
// folds each tile into the rows' online-softmax states (variants/online_softmax.h). A block holds whole GQA groups
// where they fit (up to 8 query heads), so each K/V tile serves the whole group.
//   cuda_fused:  one item per run of rows, covering all its keys; the block writes the output (epilogue.cuh).
//   cuda_splitk: each sequence's history cut into splits of a fixed number of keys (flash-decoding); an item per
//                (run of rows, split) writes its partial state (max, denominator, fp32 accumulator), and
//                splitk_merge.cuh merges each row's non-empty splits in order as cpu_splitk does, from the row's
//                sink (if any), then normalises.
// Logit options (DeviceBatch): soft cap and ALiBi on each score in fp32 (online_softmax.h's functions); a window
// starts each item at its first row's window and masks keys before each row's; a sink joins each row once, last in
// the epilogue (cuda_fused) or first in the merge.
//
// C++17 and free of device code: the variants (C++20) and the benchmark include it.
#pragma once

#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "problem/knobs.h"

namespace pacheck::cuda {

enum class Storage : int { f32 = 0, f16 = 1, bf16 = 2 };
// What the K and V pools hold: values of the storage type, or an fp8 cache (problem.h, Fp8Cache), a byte an element.
enum class KvCache : int { same = 0, e4m3 = 1, e5m2 = 2 };

// One GPU-only bug per value, a kernel template argument (`if constexpr` at its site, where a comment says what it
// does; cuda/mutants/gpu_mutants.cpp's table describes each): production instantiates only none; the mutants live in
// their own library (cuda/mutants/).
enum class GpuBug : int {
  none,
  // the CUDA-core kernel
  cp_async_wait_one_late,
  tile_max_barrier_missing,
  butterfly_width_too_narrow,
  p_rounded_to_bf16,
  split_start_rounded_up,
  // the tensor-core kernel
  tc_cp_async_wait_one_late,
  tc_warp_max_missing_step,
  swizzle_xor_of_4_rows,
  tma_box_one_row_late,
  mbarrier_parity_flipped,
  fp8_k_scale_from_v_scales,
  fp16_scores_row_of_fragment,
  // the split-K merge
  merge_slot_by_row_capacity,
  merge_reads_one_split_past,
  merge_order_from_arrival,
  count
};
int storage_bytes(Storage storage);

struct SequenceMeta {
  int context_len = 0;
  int num_queries = 0;
  int query_row_offset = 0;  // row of its first query in the queries / output arrays
  int table_offset = 0;      // of its block table in DeviceBatch::block_tables
};

// Everything the kernels read and write, on the device. Pools [num_blocks][block_size][num_kv_heads][head_dim],
// queries and output [total_queries][num_query_heads][head_dim], all in `storage` (the pools in `kv_cache` if fp8);
// the pools and the queries 16-byte aligned (launch_attention checks).
struct DeviceBatch {
  Storage storage = Storage::f32;
  KvCache kv_cache = KvCache::same;
  // An fp8 cache's scales, one per KV head (a per-tensor scale repeated), device memory; null otherwise.
  const float* k_scales = nullptr;
  const float* v_scales = nullptr;
  int num_query_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int block_size = 0;
  int num_blocks = 0;
  float scale = 1.0f;
  int num_sequences = 0;
  int total_queries = 0;
  const void* k_pool = nullptr;
  const void* v_pool = nullptr;
  const void* queries = nullptr;
  void* output = nullptr;
  const std::int32_t* block_tables = nullptr;  // every sequence's table, padding included (never followed)
  const SequenceMeta* sequences = nullptr;
  const int* sequence_of_query_row = nullptr;  // [total_queries]
  // The logit options (problem/problem.h), absent by default: a soft cap or window of 0 is none, the per-query-head
  // arrays (device memory) null.
  float soft_cap = 0.0f;
  int window = 0;
  const float* alibi_slopes = nullptr;
  const float* sinks = nullptr;
};

// One thread block's work (for each KV head): rows [first_row, first_row + num_rows) of `sequence`, keys
// [key_begin, key_end). It carries the sequence's record, not its index: a block's first loads need one 32-byte load.
struct alignas(16) WorkItem {
  SequenceMeta sequence;
  int first_row = 0;
  int num_rows = 0;
  int key_begin = 0;
  int key_end = 0;
};

// The host-side plan of a launch.
struct AttentionPlan {
  int row_capacity = 8;    // rows a block can hold (chooses the kernel instantiation)
  int rows_per_chunk = 8;  // rows a block is given (whole GQA groups where they fit)
  int tile_size = 16;      // requested keys per fold step
  bool split_k = false;
  std::vector<WorkItem> items;
  // split-K only, for the merge: per sequence its split size and its first chunk's index in chunk_first_item; per
  // (sequence, chunk) the item of its first split (its splits are consecutive items).
  std::vector<int> split_sizes;
  std::vector<int> chunk_offsets;
  std::vector<int> chunk_first_item;
};

// Plans a launch over the batch's sequences (the records of DeviceBatch::sequences, which the work items copy).
// split_sizes empty: cuda_fused; else one split size (keys) per sequence: cuda_splitk. window (0: none): an item's
// keys begin at its first row's window, and splits wholly before it get no item.
AttentionPlan plan_attention(const std::vector<SequenceMeta>& sequences, int num_query_heads, int num_kv_heads,
                             int tile_size, const std::vector<int>& split_sizes, int window = 0);

// The plan on the device, plus the scratch space for the partial states.
struct DevicePlan {
  int row_capacity = 8;
  int rows_per_chunk = 8;
  int tile_size = 16;
  bool split_k = false;
  int num_items = 0;
  const WorkItem* items = nullptr;
  const int* split_sizes = nullptr;
  const int* chunk_offsets = nullptr;
  const int* chunk_first_item = nullptr;
  float* partial_max = nullptr;          // [num_items][num_kv_heads][row_capacity]
  float* partial_denominator = nullptr;  // same
  float* partial_acc = nullptr;          // [num_items][num_kv_heads][row_capacity][head_dim]
};

// Blocks of the one-wave tensor-core layouts (wide, wide-evict-first) one multiprocessor holds at once, for bf16 or
// fp16 (bf16 with an fp8 cache) at head dim 128: the benchmark's split-K plans fill the GPU with that many.
int resident_blocks_per_multiprocessor(Storage storage, int head_dim, int gqa_ratio, KvCache cache = KvCache::same);

// Enqueues the attention kernel (split-K: and the merge) on `stream`, with `pins` and launch_rules.h choosing the
// kernels. Throws std::invalid_argument before enqueuing anything on a shape the kernels do not take or pools or
// queries not 16-byte aligned, CudaError when a launch is refused; execution errors surface at the caller's next
// synchronisation (cuda_check.h).
void launch_attention(const DeviceBatch& batch, const DevicePlan& plan, const KernelPins& pins, cudaStream_t stream);

}  // namespace pacheck::cuda
