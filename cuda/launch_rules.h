// Every choice a launch of the CUDA kernels makes, as plain rules with their reasons. paged_attention_bench --layout,
// --merge pin them, to recheck a rule on another GPU. C++17; the constexpr rules are host and device.
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

// --- sizes every kernel shares ---

// The widest head the kernels take (every head dim from 1 works).
inline constexpr int kMaxHeadDim = 256;
// Rows (query heads x tokens) a block holds at most: the N columns of the tensor-core kernel's mma.
inline constexpr int kMaxRows = 8;
// Block-table entries a block stages in shared memory; an item with more reads its table through L1.
inline constexpr int kTableEntries = 2048;

// A block has 32, 64, 128 or 256 head lanes, the fewest that hold the head: a small head pays no large one's memory.
PACHECK_RULE constexpr int lanes_for(int head_dim) {
  return head_dim <= 32 ? 32 : head_dim <= 64 ? 64 : head_dim <= 128 ? 128 : 256;
}

// Rows a block holds: 4 up to GQA 4 (fewer registers, more blocks per multiprocessor), 8 beyond; whole GQA groups
// where they fit, so a K/V tile serves the whole group.
inline int row_capacity(int gqa_ratio) { return gqa_ratio <= 4 ? 4 : kMaxRows; }

PACHECK_RULE constexpr int round_up(int x, int to) { return (x + to - 1) / to * to; }

// --- the grid ---

// One block per work item and KV head, KV heads fastest (block_work.cuh): a sequence's heads read the same pages
// together (measured faster than items x KV heads). Throws std::invalid_argument past 2^31 - 1.
long long attention_grid_blocks(int num_items, int num_kv_heads);

// --- split-K's items under a sliding window ---

// Splits are cut from position 0; a chunk of rows gets an item per split from the one holding its first row's window
// start (at chunk_first_position), and a row at `position` merges those from its own window start's split to its
// position's. The first of them, counted from the chunk's first item (window 0: none).
PACHECK_RULE constexpr int row_first_split_offset(int chunk_first_position, int position, int split, int window) {
  return window_start(position, window) / split - window_start(chunk_first_position, window) / split;
}

// --- which kernel ---

// bf16 and fp16 with head_dim % 8 == 0 (whole 16-byte rows for ldmatrix) run on the tensor cores (at GQA 8, 4
// multiply-adds per byte of K/V are over half the H200's fp32 peak at full bandwidth); the rest on the CUDA cores.
inline bool uses_tensor_cores(Storage storage, int head_dim) { return storage != Storage::f32 && head_dim % 8 == 0; }
// An fp8 cache runs only on the tensor cores, with bf16 queries and head_dim % 16 == 0 (whole 16-byte fp8 rows):
// serving's fp8 shapes; a CUDA-core path would double its instances for shapes no engine runs.
inline constexpr int kFp8HeadDimMultiple = 16;
inline bool takes_kv_cache(Storage storage, int head_dim, KvCache cache) {
  return cache == KvCache::same || (storage == Storage::bf16 && head_dim % kFp8HeadDimMultiple == 0);
}

// --- the CUDA-core kernel (cuda_core_kernel.cuh) ---

// 128 threads; a thread holds 8 head lanes of every row (one 16-byte load of bf16), so a key takes lanes / 8
// threads and the others take other keys (key groups).
inline constexpr int kCudaCoreThreads = 128;
inline constexpr int kCudaCoreLanesPerThread = 8;
PACHECK_RULE constexpr int cuda_core_key_groups(int lanes) {
  return kCudaCoreThreads / (lanes / kCudaCoreLanesPerThread);
}
// Keys a tile holds: 32, or 16 where a K row is 1 KB or more (256 fp32 lanes), so the tiles in flight fit.
PACHECK_RULE constexpr int cuda_core_tile_keys(int lanes, int element_bytes) {
  return lanes * element_bytes >= 1024 ? 16 : 32;
}
// Tiles in flight: two for 4 rows (four blocks per multiprocessor fit), three for 8 (whose registers allow two).
PACHECK_RULE constexpr int cuda_core_stages(int rows) { return rows == 4 ? 2 : 3; }

// --- the tensor-core kernel (tensor_core_kernel.cuh) ---

// Four warps; a tile is 64 keys, 16 per warp: one mma K step of the values product.
inline constexpr int kTensorCoreWarps = 4;
inline constexpr int kTensorCoreTileKeys = 64;

// How a tile's K and V reach shared memory:
//   tensor  sm_90 tensor copies (kv_tensor_maps.h) where the launch and item allow: one instruction per 64 lanes of
//           a warp's 16 keys, a sixth of the asynchronous copies' instructions;
//   async   16-byte asynchronous copies, addressed by every lane (no mbarriers);
//   async_evict_first
//           async under an L2 evict-first policy: streaming K and V evicts little else. Never in the padded (32-lane)
//           layout, where ptxas 13.0 drops the policy and leaves copies that fault (bench/sass_descriptor_check.py).
enum class TileCopies { tensor, async, async_evict_first };

// Bytes of a K or V element as the tensor-core kernel stages it: 16-bit values, or an fp8 cache's bytes as they are.
PACHECK_RULE constexpr int tensor_core_kv_bytes(KvCache cache) { return cache == KvCache::same ? 2 : 1; }
// Rows of 128 bytes or more: the 128-byte swizzled layout (tensor copies need it); narrower rows padded by 16 bytes.
PACHECK_RULE constexpr bool tensor_core_swizzled(int lanes, int kv_bytes = 2) { return lanes * kv_bytes >= 128; }
// Tiles in flight: three (two blocks per multiprocessor at 128 lanes), two at 256 lanes (a multiprocessor's worth).
PACHECK_RULE constexpr int tensor_core_stages(int lanes) { return lanes >= 256 ? 2 : 3; }
// The copies: tensor at 64 and 256 lanes; async at 128 (measured faster, most at small batches), at 32 (padded
// rows), and for fp8 caches (whose maps would need another box shape).
PACHECK_RULE constexpr TileCopies tensor_core_copies(int lanes, int kv_bytes = 2) {
  return lanes == 128 || kv_bytes != 2 || !tensor_core_swizzled(lanes) ? TileCopies::async : TileCopies::tensor;
}

// At 128 lanes one of three swizzled layouts with asynchronous copies runs: deep (three tiles in flight, two blocks
// per multiprocessor), wide (two tiles, three blocks: more latency hidden, but a 1.3-wave grid's partial wave of one
// block per multiprocessor cannot keep HBM busy) and wide-evict-first (wide with async_evict_first). The rule:
// wide-evict-first when the grid (items x KV heads) fits one wide wave (it speeds split-K at batch 1; over several
// waves any cache policy costs more), wide from four waves (the partial wave's share is small), deep between. From an
// fp8 cache (wide fits four blocks, deep three) wide at every size (neither deep nor evict-first paid for itself from
// batch 16 to 256). A pinned choice wins.
inline constexpr int kWideBlocksPerMultiprocessor = 3;
inline constexpr int kFp8WideBlocksPerMultiprocessor = 4;
KernelLayout choose_tensor_core_layout(long long blocks, int multiprocessors, KernelLayout pinned,
                                       KvCache cache = KvCache::same);

// --- the split-K merge (splitk_merge.cuh) ---

// One output row per group of threads: lanes (a head lane a thread: a few rows of many splits merge fastest, each
// chain carrying one lane) or warps (four lanes a thread, 16-byte loads: a quarter of the instructions, for many
// rows). The rule: lanes while the rows (tokens x query heads) are at most one per multiprocessor. A pin wins.
MergeShape choose_merge_shape(long long rows, int multiprocessors, MergeShape pinned);

// --- what the error models read ---

// Which kernel a launch runs and its arithmetic: the variants' bounds (cuda_variants.cpp) read the dispatch's rule.
struct KernelArithmetic {
  bool tensor_cores = false;
  bool fp16_operands = false;  // the values product's operands (else bf16): fp16 problems and e4m3 caches
  int max_tile_keys = 32;      // keys per online-softmax step at most; larger tile_size knobs walk tiles of this
  // Thread groups accumulating disjoint keys, their sums added once at the end: extra additions per term at most.
  int key_groups = 1;
};
KernelArithmetic kernel_arithmetic(Storage storage, int head_dim, KvCache cache = KvCache::same);

// --- the benchmark's split size ---

// The split size that fills the GPU in one wave: as many splits (at least one, whole `tile`s) as `resident_blocks`
// (the GPU's at once) allow for `grid_rows` grid rows (sequences x KV heads).
int split_size_for_one_wave(int context, int grid_rows, int resident_blocks, int tile);

}  // namespace pacheck::cuda
