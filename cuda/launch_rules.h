// Every choice a launch of the CUDA kernels makes, as plain rules with their reasons: which kernel runs, how many
// rows a block holds, each kernel's tile and pipeline depth, how the tensor-core kernel copies K and V, its layout
// at 128 head lanes, the split-K merge's shape and the benchmark's split size. The benchmark pins each choice in turn
// (paged_attention_bench --layout, --merge), so a rule can be rechecked on another GPU. C++17; the constexpr rules
// are host and device, the rest host only.
#pragma once

#include "cuda/paged_attention.h"
#include "problem/knobs.h"
#include "variants/online_softmax.h"

#if defined(__CUDACC__)
#define PACHECK_RULE __host__ __device__
#else
#define PACHECK_RULE
#endif

namespace pacheck::cuda {

// --- sizes every kernel shares ---------------------------------------------------------------------------------------

// The widest head the kernels take: every head dim from 1 to 256 works.
inline constexpr int kMaxHeadDim = 256;
// Rows (query heads x tokens) a block holds at most: the N columns of the tensor-core kernel's mma.
inline constexpr int kMaxRows = 8;
// Block-table entries a block stages in shared memory; an item with more reads its table through L1.
inline constexpr int kTableEntries = 2048;

// Head dims are served by four capacities of head lanes, 32, 64, 128 and 256: a block is sized for the smallest
// that holds the head, so a small head does not pay for a large one's shared memory.
PACHECK_RULE constexpr int lanes_for(int head_dim) {
  return head_dim <= 32 ? 32 : head_dim <= 64 ? 64 : head_dim <= 128 ? 128 : 256;
}

// Rows a block can hold: 4 up to GQA 4, 8 beyond. A block holds whole GQA groups where they fit, so a K/V tile
// serves the whole group; the 4-row kernels need fewer registers, so more blocks fit per multiprocessor.
inline int row_capacity(int gqa_ratio) { return gqa_ratio <= 4 ? 4 : kMaxRows; }

PACHECK_RULE constexpr int round_up(int x, int to) { return (x + to - 1) / to * to; }

// --- the grid --------------------------------------------------------------------------------------------------------

// One block per work item and KV head, in one grid dimension with the KV heads fastest (block_work.cuh), so that the
// blocks of a sequence's KV heads start side by side and read the same pages together (measured faster than a grid
// of items x KV heads, most from an fp8 cache). The blocks of a launch; std::invalid_argument past CUDA's limit on
// that dimension, 2^31 - 1.
long long attention_grid_blocks(int num_items, int num_kv_heads);

// --- split-K's items under a sliding window --------------------------------------------------------------------------

// Split-K cuts a sequence's positions into splits from position 0, and plan_attention gives a chunk of rows one item
// per split from the one holding its first row's window start (at chunk_first_position); a row at `position` merges
// the items from the split holding its own window's start to the one holding its position. The first of them,
// counted from the chunk's first item (window 0: no window, 0).
PACHECK_RULE constexpr int row_first_split_offset(int chunk_first_position, int position, int split, int window) {
  return window_start(position, window) / split - window_start(chunk_first_position, window) / split;
}

// --- which kernel ----------------------------------------------------------------------------------------------------

// bf16 and fp16 with head_dim % 8 == 0 run on the tensor cores (whole 16-byte rows, as ldmatrix reads them): at
// GQA 8, 2 x head_dim x 8 multiply-adds per key are 4 per byte of K/V, more than half the H200's fp32 peak at full
// bandwidth. Everything else (fp32, other head dims) runs fp32 fused multiply-adds on the CUDA cores.
inline bool uses_tensor_cores(Storage storage, int head_dim) { return storage != Storage::f32 && head_dim % 8 == 0; }
// An fp8 cache runs only on the tensor cores, with bf16 queries and a head dim that is a multiple of 16 (whole
// 16-byte rows of fp8): serving's fp8 shapes, each fp8 pair widened exactly in registers. A CUDA-core
// path for the rest would double the CUDA-core instances for shapes no engine runs; the variants declare the limit.
inline constexpr int kFp8HeadDimMultiple = 16;
inline bool takes_kv_cache(Storage storage, int head_dim, KvCache cache) {
  return cache == KvCache::same || (storage == Storage::bf16 && head_dim % kFp8HeadDimMultiple == 0);
}

// --- the CUDA-core kernel (cuda_core_kernel.cuh) ---------------------------------------------------------------------

// 128 threads per block; a thread holds 8 head lanes of every row of the block (one 16-byte load of bf16 or fp16),
// so a key's lanes are lanes / 8 threads and the others take other keys of the tile (key groups).
inline constexpr int kCudaCoreThreads = 128;
inline constexpr int kCudaCoreLanesPerThread = 8;
PACHECK_RULE constexpr int cuda_core_key_groups(int lanes) { return kCudaCoreThreads / (lanes / kCudaCoreLanesPerThread); }
// Keys a tile holds: 32, or 16 where a K row is 1 KB or more (256 fp32 lanes), so that the tiles in flight fit.
PACHECK_RULE constexpr int cuda_core_tile_keys(int lanes, int element_bytes) {
  return lanes * element_bytes >= 1024 ? 16 : 32;
}
// Tiles in flight: two for 4 rows (about 45 KB and 128 registers a thread: four blocks per multiprocessor), three
// for 8 rows (whose registers allow two blocks anyway).
PACHECK_RULE constexpr int cuda_core_stages(int rows) { return rows == 4 ? 2 : 3; }

// --- the tensor-core kernel (tensor_core_kernel.cuh) -----------------------------------------------------------------

// Four warps; a tile is 64 keys, 16 per warp: one mma K step of the values product.
inline constexpr int kTensorCoreWarps = 4;
inline constexpr int kTensorCoreTileKeys = 64;

// How a tile's K and V reach shared memory:
//   tensor  by sm_90 tensor copies (kv_tensor_maps.h) where the launch and the item allow them: one instruction per
//           64 lanes of a warp's 16 keys, about a sixth of the instructions of asynchronous copies;
//   async   by 16-byte asynchronous copies, whose addresses every lane computes (no mbarriers);
//   async_evict_first
//           as async, with a whole tile's copies under an L2 evict-first policy, so that streaming K and V evicts
//           little else from the L2 (an earlier kernel's dirty lines then stay there instead of being written back
//           inside this kernel). Never in the padded (32-lane) layout: there ptxas 13.0 drops the policy's
//           definition and leaves copies that fault (bench/sass_descriptor_check.py finds such copies).
enum class TileCopies { tensor, async, async_evict_first };

// Bytes of a K or V element as the tensor-core kernel stages it: 16-bit values, or an fp8 cache's bytes as they are.
PACHECK_RULE constexpr int tensor_core_kv_bytes(KvCache cache) { return cache == KvCache::same ? 2 : 1; }
// Rows of 128 bytes and wider (64 lanes of 16-bit values, 128 of fp8): the 128-byte swizzled layout, which tensor
// copies need and which keeps ldmatrix free of bank conflicts; narrower rows are padded by 16 bytes.
PACHECK_RULE constexpr bool tensor_core_swizzled(int lanes, int kv_bytes = 2) { return lanes * kv_bytes >= 128; }
// Tiles in flight: three (32 KB each at 128 lanes: two blocks per multiprocessor), two at 256 lanes (whose two tiles
// take one multiprocessor's worth).
PACHECK_RULE constexpr int tensor_core_stages(int lanes) { return lanes >= 256 ? 2 : 3; }
// The copies: async at 128 lanes (measured faster than tensor copies there, most at small batches); tensor
// copies at 64 and 256 lanes; async at 32 lanes (padded rows), and for fp8 caches (whose tensor maps would need
// boxes of another shape).
PACHECK_RULE constexpr TileCopies tensor_core_copies(int lanes, int kv_bytes = 2) {
  return lanes == 128 || kv_bytes != 2 || !tensor_core_swizzled(lanes) ? TileCopies::async : TileCopies::tensor;
}

// At 128 lanes one of three layouts runs, all swizzled, all with asynchronous copies:
//   deep         three tiles in flight, two blocks per multiprocessor;
//   wide         two tiles in flight, three blocks per multiprocessor: more warps hide more latency per wave, but a
//                grid of 1.3 waves ends in a partial wave of at most one block per multiprocessor, which cannot keep
//                HBM busy;
//   wide-evict-first
//                the wide layout with async_evict_first copies.
// The rule: wide-evict-first when the grid (work items x KV heads) fits in one wave of the wide layout (there it
// speeds split-K at batch 1 most; in grids of several waves any cache policy costs more than the plain copy), wide
// from four waves (the partial wave's share is small), deep in between. From an fp8 cache the stages are half as
// large: the wide layout fits four blocks per multiprocessor and deep three (its staged table and queries stay
// as large), and wide runs at every grid size (neither deep's third tile in flight nor the evict-first policy has
// paid for itself there, from batch 16 to 256). A pinned choice wins.
inline constexpr int kWideBlocksPerMultiprocessor = 3;
inline constexpr int kFp8WideBlocksPerMultiprocessor = 4;
KernelLayout choose_tensor_core_layout(long long blocks, int multiprocessors, KernelLayout pinned,
                                       KvCache cache = KvCache::same);

// --- the split-K merge (splitk_merge.cuh) ----------------------------------------------------------------------------

// One output row per group of threads, in one of two shapes:
//   lanes  one head lane a thread: a few rows with many splits each (batch 1) merge fastest so, as each thread's
//          chain of merges then carries one lane instead of four;
//   warps  four lanes a thread (16-byte loads), a warp per row up to 128 lanes: a quarter of the instructions,
//          for many rows.
// The rule: lanes while the rows (query tokens x query heads) number at most one per multiprocessor, warps beyond.
// A pinned choice wins.
MergeShape choose_merge_shape(long long rows, int multiprocessors, MergeShape pinned);

// --- what the error models read --------------------------------------------------------------------------------------

// Which kernel a launch runs and what its arithmetic looks like (cuda/cuda_variants.cpp derives the variants'
// bounds from it, so dispatch and bound read the same rule).
struct KernelArithmetic {
  bool tensor_cores = false;
  // The values product's operands (the weights and V) are fp16 (else bf16): fp16 problems, and e4m3 caches, whose V
  // widens to fp16 in two instructions a pair (to bf16 in four). The weights' hi + lo split then loses its absolute
  // part below fp16's normal range.
  bool fp16_operands = false;
  // Keys folded per online-softmax step never exceed this (the shared-memory tile); larger tile_size knobs are
  // walked in tiles of this size, as the CPU variants walk theirs in chunks.
  int max_tile_keys = 32;
  // Thread groups that accumulate disjoint keys of each tile; their partial sums are added once at the end, so a
  // term of the accumulator passes through at most this many extra additions.
  int key_groups = 1;
};
KernelArithmetic kernel_arithmetic(Storage storage, int head_dim, KvCache cache = KvCache::same);

// --- the benchmark's split size --------------------------------------------------------------------------------------

// The split size that fills the GPU in one wave: as many splits per sequence as `resident_blocks` (blocks the whole
// GPU holds at once) allow for `grid_rows` rows of the grid (sequences x KV heads), at least one, each a whole
// number of `tile` keys.
int split_size_for_one_wave(int context, int grid_rows, int resident_blocks, int tile);

}  // namespace pacheck::cuda
