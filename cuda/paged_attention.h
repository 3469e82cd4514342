// The CUDA paged-attention kernels behind cuda_fused and cuda_splitk, and the plan a launch follows.
//
// Both variants run the same work items on one of two kernels (kernel_arithmetic says which): the tensor-core kernel
// for bf16 with head dims that are a multiple of 8 (tensor_core_attention_kernel.cuh), the fp32 CUDA-core kernel for
// everything else (paged_attention_kernel.cuh). A thread block owns one work item: a run of consecutive rows of one
// (sequence, KV head), where the rows of a (sequence, KV head) are its (query token, query head of the GQA group) pairs
// in token-major order, and a range of key positions. It walks that range through the block table one tile of keys at a
// time (16-byte asynchronous copies into shared memory, several tiles in flight, the table itself staged in shared
// memory), masks the ragged tail and the causal future, and folds each tile into the rows' online-softmax states
// (variants/online_softmax.h). A block holds whole GQA groups whenever a group fits (up to 8 query heads), so every K/V
// tile it reads serves all query heads of the group.
//   cuda_fused:  one item per run of rows, covering every key the rows attend to; the block writes the output.
//   cuda_splitk: the history is cut into splits of a fixed number of keys per sequence (flash-decoding); one item
//                per (run of rows, split) writes its partial state (max, denominator, fp32 accumulator) to
//                global memory, and a reduce kernel merges each row's non-empty splits in order with the same
//                merge as cpu_splitk, then normalises.
//
// This header is C++17 and free of device code: the variants (C++20) and the benchmark include it.
#pragma once

#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "cuda/kernel_pins.h"

namespace pacheck::cuda {

enum class Storage : int { f32 = 0, f16 = 1, bf16 = 2 };
int storage_bytes(Storage storage);

// The widest head the kernels take. Head dims are served by four layouts (up to 32, 64, 128 and 256 lanes);
// every head dim from 1 to 256 works, the ones that are not a multiple of 16 bytes through a slower scalar copy.
inline constexpr int kMaxHeadDim = 256;
// Which of the two kernels a launch runs, and what its arithmetic looks like (the variants' error models, in
// cuda/kernel_error_model.cpp, are derived from it).
struct KernelArithmetic {
  // bf16 storage with head_dim % 8 == 0: both inner products on the tensor cores (tensor_core_attention_kernel.cuh:
  // mma.sync with bf16 operands and fp32 accumulators, the weights split into bf16 hi + lo). Otherwise fp32
  // fused multiply-adds on the CUDA cores (paged_attention_kernel.cuh).
  bool tensor_cores = false;
  // Keys folded per online-softmax step never exceed this (the shared-memory tile); larger tile_size knobs are
  // walked in tiles of this size, like the CPU variants walk theirs in chunks.
  int max_tile_keys = 32;
  // Thread groups that accumulate disjoint keys of each tile; their partial sums are added once at the end, so a
  // term of the accumulator passes through at most this many extra additions.
  int key_groups = 1;
};
KernelArithmetic kernel_arithmetic(Storage storage, int head_dim);
int max_tile_keys(Storage storage, int head_dim);
// The query heads one thread block serves at most (a GQA group larger than this is split over blocks).
int row_capacity(int gqa_ratio);

struct SequenceMeta {
  int context_len = 0;
  int num_queries = 0;
  int query_row_offset = 0;  // row of its first query in the queries / output arrays
  int table_offset = 0;      // of its block table in DeviceBatch::block_tables
};

// Everything the kernels read and write, on the device. Pools [num_blocks][block_size][num_kv_heads][head_dim],
// queries and output [total_queries][num_query_heads][head_dim], all in `storage`; the pools and the queries
// 16-byte aligned (launch_attention checks).
struct DeviceBatch {
  Storage storage = Storage::f32;
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
};

// One thread block's work: rows [first_row, first_row + num_rows) of `sequence` (for every KV head: grid.y),
// keys [key_begin, key_end). The item carries its sequence's record, not its index into DeviceBatch::sequences, so
// that a block has everything its first table and query loads need in one load of 32 bytes rather than two loads
// one after the other (reports/gpu/issue8-perf.md, session 23).
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
  // split-K only, for the reduce: per sequence its split size and the index of its first chunk in
  // chunk_first_item; per (sequence, chunk) the item of its first split (its splits are consecutive items).
  std::vector<int> split_sizes;
  std::vector<int> chunk_offsets;
  std::vector<int> chunk_first_item;
};

// Plans a launch over the batch's sequences (the records of DeviceBatch::sequences, which the work items copy).
// split_sizes empty: cuda_fused; otherwise one split size (keys) per sequence: cuda_splitk.
AttentionPlan plan_attention(const std::vector<SequenceMeta>& sequences, int num_query_heads, int num_kv_heads,
                             int tile_size, const std::vector<int>& split_sizes);

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

// How many blocks of the deep tensor-core layout (below) fit on one multiprocessor at once, for bf16 storage and
// head dim 128 (the benchmark's shape): the benchmark's split-K plans fill the GPU with that many blocks per
// multiprocessor (measured best for the wide layout too: reports/gpu/issue8-perf.md).
int resident_blocks_per_multiprocessor(Storage storage, int head_dim, int gqa_ratio);

// bf16 with head dims 65 to 128 (multiples of 8) runs one of three layouts of the tensor-core kernel, all swizzled,
// all bringing K and V by 16-byte asynchronous copies:
//   deep         three 64-key tiles in flight, two blocks per multiprocessor;
//   wide         two tiles in flight, three blocks per multiprocessor: more warps to hide latency, faster per wave,
//                but a grid of 1.3 waves ends in a partial wave of at most one block per multiprocessor, which
//                cannot keep HBM busy.
//   wide-evict-first
//                the wide layout with a whole tile's K and V copies under an L2 evict-first policy, so that
//                streaming K and V evicts little else: an earlier kernel's dirty lines then stay in the L2 instead of
//                being written back inside this one.
// automatic: wide-evict-first when the grid (work items x KV heads) fits in one wave of the wide layout, wide when
// it spans at least four, deep otherwise (so the choice depends on the GPU's multiprocessor count; the thresholds
// were measured with tensor copies, and the one-wave choice rechecked with these copies in session 20). The
// evict-first copies were measured in sessions 26 and 27 (reports/gpu/issue8-perf.md) with the L2 flushed by
// writes before each run: in one wave, split-K at batch 1 took 6-8% less time (with the flush's lines clean, within
// 1%), cuda_fused at batch 1 and 8 0.2-1.5% more under either flush; in grids of several waves an evict-first
// policy cost batch 64 3-4% under the dirty flush, and any policy (evict-normal) 6-11% more than the plain copy,
// which the wide and deep layouts keep. Part of the gain is a deferral: the dirty lines the kernel leaves in the L2
// are written back after it, by whatever evicts them.
// A fourth layout, wide-kv-tma, is the wide layout with K and V by sm_90 tensor copies (kv_tensor_maps.h): the
// one-wave production layout of sessions 13-19, kept for pinning (tests, benchmark). The asynchronous copies
// replaced the tensor copies in session 20 (reports/gpu/issue8-perf.md): against them (tensor copies for K, and
// for V within one wave) cuda_fused ran 9-13% faster at GQA 4 and batch 1-8, 4-5% at GQA 4 and batch 64, 3-4% at
// GQA 8 and batch 1-8, cuda_splitk at batch 1, 32k 1.6-6.6% (GQA 4) and 1.4-5.1% (GQA 8) faster; where the grid
// fills the GPU at batch 256 they are level. Heads of 33-64 and of 129-256 lanes still use tensor copies (not
// measured otherwise). Pinning a layout is for tests, so that the catalogue's mostly small problems run all four:
// pin_tensor_core_layout (process-wide; `automatic` then means the rule above, whatever the environment), or
// PACHECK_TENSOR_CORE_LAYOUT=deep|wide|wide-evict-first|wide-kv-tma|automatic in the environment, read at each
// launch while nothing is pinned (replay lines carry it; kernel_pins.h).

// The split-K merge (merge_splits_kernel) runs in one of two shapes:
//   lanes  a row per LANES threads, one head lane each: a few rows with many splits each (batch 1) merge fastest
//          so, as each thread's chain of merges then carries one lane instead of four;
//   warps  four lanes a thread (16-byte loads), so a warp per row up to 128 lanes: a quarter of the
//          instructions, for many rows.
// automatic: lanes while the rows (query tokens x query heads) number at most one per multiprocessor, warps
// beyond (measured: reports/gpu/issue8-perf.md, session 15). As with the layout, pinning is for tests
// (pin_merge_shape, process-wide), or PACHECK_SPLITK_MERGE=lanes|warps|automatic in the environment, read at each
// launch while nothing is pinned (replay lines carry it; kernel_pins.h).
// The merge's shape for this batch, as pinned or chosen above: lanes or warps, never automatic.
MergeShapeChoice merge_shape_for(const DeviceBatch& batch);

// Enqueues the attention kernel (and for split-K the reduce) on `stream`. Throws std::invalid_argument, before
// enqueuing anything, on a shape the kernels do not take, pools or queries not 16-byte aligned, or a malformed
// PACHECK_TENSOR_CORE_LAYOUT or PACHECK_SPLITK_MERGE, and CudaError when a launch is refused; errors during
// execution surface at the caller's next synchronisation (see cuda_check.h).
void launch_attention(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream);

}  // namespace pacheck::cuda
