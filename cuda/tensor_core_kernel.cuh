// The tensor-core attention kernel: bf16 or fp16 storage with head dims a multiple of 8 (whole 16-byte rows), and
// fp8 caches (e4m3, e5m2) with bf16 queries and head dims a multiple of 16. The CUDA-core kernel's work items,
// partial states and online-softmax steps (cuda_core_kernel.cuh), with both inner products on mma.sync (16-bit
// inputs, fp32 accumulators). C++17 CUDA.
//
// A block is 4 warps, a tile up to 64 keys; warp w copies the K and V rows of keys [16 w, 16 w + 16) of each tile
// (STAGES tiles in flight) and reads back only those, so no warp waits on another's copies: by tensor copies where
// TileCopies, the block size and the item allow (kv_tensor_maps.h; an item must start at a multiple of 16), else by
// 16-byte asynchronous copies. Rows past the item's last key are zeroed before use (tensor copies read them from the
// pool; asynchronous copies zero-fill them). Per tile:
//   scores   S^T = K Q^T by mma.m16n8k16, transposed so that no operand is padding: the warp's 16 keys are M, the
//            block's rows (at most 8) N, the head K; a thread holds keys g, g + 8 (g = lane / 4) of rows 2t, 2t + 1
//            (t = lane % 4);
//   max      a row's tile max over its 8 threads (shuffles) and the warps (shared memory: the one barrier per tile);
//   weights  raise_running_max and key_weight (online_softmax.h) on the thread's keys, no branch around an exp; its
//            share of the denominator sums them in fp32;
//   values   O^T += V^T P^T by mma, 16 lanes a block as M: the fp32 weights split into hi + lo of the storage type
//            (two mma), moved into the B layout by movmatrix; the accumulators are two OnlineSoftmaxStates' lanes.
// Arithmetic: oracle/ERROR_MODEL.md "Tensor cores" (72 u per mma; ceil(head_dim / 16) per logit, two per tile per
// accumulator term; the hi + lo split within 64 u in bf16, 4 u or 2^-25 absolute in fp16). Logit options as the
// CUDA-core kernel's (block_work.cuh).
//
// An fp8 cache lands in shared memory as bytes; each thread widens its fragments exactly (storage.cuh): K to fp16
// (to_fp16_scores) or bf16, V to VT. One ldmatrix reads 16 fp8 where it reads 8 bf16, so a load serves two mma steps
// or lane blocks, the head dims permuted (scores_fp8, values_fp8). The K scale multiplies the logit, the V scale the
// sums, in fp32: one rounding each (ERROR_MODEL.md, "fp8 caches").
#pragma once

#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "cuda/block_work.cuh"
#include "cuda/epilogue.cuh"
#include "cuda/fast_divmod.h"
#include "cuda/kv_tensor_maps.h"
#include "cuda/launch_rules.h"
#include "cuda/paged_attention.h"
#include "cuda/ptx.cuh"
#include "cuda/storage.cuh"
#include "variants/online_softmax.h"

namespace pacheck::cuda::kernels {

namespace tensor_core {

inline constexpr int kWarps = kTensorCoreWarps;
inline constexpr int kThreads = 32 * kWarps;
inline constexpr int kTileKeys = kTensorCoreTileKeys;
inline constexpr int kWarpKeys = kTileKeys / kWarps;  // one mma K step of the values product
static_assert(kWarpKeys == 16 && kWarpKeys == kTensorCopyKeys, "a warp's keys are one m16n8k16 K dimension");

// A stage's K and V rows, padded ([stage][K, V][key][row_bytes], 16 bytes more a row: ldmatrix's 8 rows in distinct
// banks) or swizzled ([stage][K, V][warp][64-lane box][16 keys][128 bytes], piece c of key k at c ^ (k % 8): the
// tensor copies' 128-byte swizzle, conflict-free unpadded; each 2 KB box 1024-byte aligned, as the swizzle needs).
struct SharedLayout {
  int kv;        // the stages' K and V rows; after the last tile, the warps' accumulators
  int table;     // staged block-table entries
  int queries;   // [rows][row_bytes]: the block's queries, padded rows (zero past the head)
  int tile_max;  // [2 parities][warps][8 rows]
  int row_sums;  // [warps][rows] denominators, then [rows] maxima
  int barriers;  // [stage][warp] mbarriers of the tensor copies (8 bytes each)
  int total;
};
__host__ __device__ constexpr int row_bytes(int lanes, int kv_bytes = 2) {
  return lanes * kv_bytes + 16;
}
// Floats of a row of a warp's sums at the end: + 4, so that a store's 4 rows (one per t) fall in distinct banks.
__host__ __device__ constexpr int summed_row_floats(int lanes) { return lanes + 4; }
inline constexpr int kBoxBytes = kTensorCopyKeys * kTensorCopyLanes * 2;
__host__ __device__ constexpr int stage_bytes(int lanes, bool swizzled, int kv_bytes = 2) {
  return 2 * kTileKeys * (swizzled ? lanes * kv_bytes : row_bytes(lanes, kv_bytes));
}
// kv_bytes: bytes of a K or V element, 2, or 1 for an fp8 cache (the queries stay 16-bit).
__host__ __device__ constexpr SharedLayout shared_layout(int lanes, int rows, int stages, int kv_bytes = 2) {
  const bool swizzled = tensor_core_swizzled(lanes, kv_bytes);
  SharedLayout s{};
  const int kv = stages * stage_bytes(lanes, swizzled, kv_bytes);
  const int sums = kWarps * rows * summed_row_floats(lanes) * 4;
  s.kv = 0;
  s.table = round_up(kv > sums ? kv : sums, 16);
  s.queries = s.table + kTableEntries * 4;
  s.tile_max = s.queries + rows * row_bytes(lanes);
  s.row_sums = s.tile_max + 2 * kWarps * 8 * 4;
  s.barriers = s.row_sums + round_up((kWarps + 1) * rows * 4, 16);
  s.total = s.barriers + stages * kWarps * 8;
  return s;
}

// Blocks per multiprocessor the registers must allow: as many as shared memory fits, at most 3 (4 from an fp8 cache:
// a fourth block hides the widening's latency).
template <int LANES, int ROWS, int STAGES, int KV_BYTES = 2>
constexpr int min_blocks() {
  const int fit = 227 * 1024 / (shared_layout(LANES, ROWS, STAGES, KV_BYTES).total + 1024);
  const int most = KV_BYTES == 1 ? 4 : 3;
  return fit < 1 ? 1 : fit > most ? most : fit;
}
static_assert(min_blocks<128, 8, 2>() == kWideBlocksPerMultiprocessor, "the wide layout fits three blocks");
static_assert(min_blocks<128, 8, 2, 1>() == kFp8WideBlocksPerMultiprocessor, "from an fp8 cache, four");
static_assert(min_blocks<128, 8, 3, 1>() == 3, "and the deep layout three");
static_assert(min_blocks<128, 8, 3>() == 2, "the deep layout fits two");

template <typename T>
struct MmaOperand;
template <>
struct MmaOperand<__nv_bfloat16> {
  __device__ static unsigned bits(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }
  __device__ static void mma(float& d0, float& d1, float& d2, float& d3, const unsigned (&a)[4], unsigned b0,
                             unsigned b1) {
    ptx::mma_bf16_16x8x16(d0, d1, d2, d3, a[0], a[1], a[2], a[3], b0, b1);
  }
};
template <>
struct MmaOperand<__half> {
  __device__ static unsigned bits(__half x) { return __half_as_ushort(x); }
  __device__ static void mma(float& d0, float& d1, float& d2, float& d3, const unsigned (&a)[4], unsigned b0,
                             unsigned b1) {
    ptx::mma_f16_16x8x16(d0, d1, d2, d3, a[0], a[1], a[2], a[3], b0, b1);
  }
};

// Two elements as an mma operand register: `first` (the lower column or row index) in the low half.
template <typename T>
__device__ inline unsigned pack(T first, T second) {
  return MmaOperand<T>::bits(first) | (MmaOperand<T>::bits(second) << 16);
}

// An fp32 weight as hi = T(p) and lo = T(p - hi): p - hi is exact in fp32 (hi is a multiple of p's ulp), so hi + lo
// errs by lo's rounding alone: 2^-18 |p| in bf16, 2^-22 |p| in fp16 (2^-25 absolute where lo is below 2^-14).
template <typename T>
struct SplitWeight {
  T hi, lo;
};
template <typename T>
__device__ inline SplitWeight<T> split_weight(float p) {
  const T hi = StorageOps<T>::from_float(p);
  return {hi, StorageOps<T>::from_float(p - StorageOps<T>::to_float(hi))};
}

}  // namespace tensor_core

// One block of the tensor-core kernel: its work, shared memory and pipeline steps. S: bf16 or fp16 (the mma's operand
// type); C: what the pools hold.
template <Storage S, int LANES, int ROWS, int STAGES, TileCopies COPIES, GpuBug BUG = GpuBug::none,
          KvCache C = KvCache::same>
struct TensorCoreBlock {
  static_assert(S == Storage::bf16 || S == Storage::f16, "the tensor cores take 16-bit operands");
  static_assert(C == KvCache::same || S == Storage::bf16, "an fp8 cache comes with bf16 queries");
  using T = typename StorageType<S>::type;
  using Mma = tensor_core::MmaOperand<T>;
  static constexpr bool kFp8 = C != KvCache::same;
  // The values product's operand type: T, or fp16 from e4m3 (cheaper); e5m2 stays bf16, as its subnormals are fp16
  // subnormals, which the mma does not scale as it scales normal values.
  using VT = std::conditional_t<C == KvCache::e4m3, __half, T>;
  using ValuesMma = tensor_core::MmaOperand<VT>;
  static constexpr int kKvBytes = tensor_core_kv_bytes(C);
  static constexpr int kWarps = tensor_core::kWarps;
  static constexpr int kThreads = tensor_core::kThreads;
  static constexpr int kTileKeys = tensor_core::kTileKeys;
  static constexpr int kWarpKeys = tensor_core::kWarpKeys;
  static constexpr int kBoxBytes = tensor_core::kBoxBytes;
  static constexpr bool kSwizzled = tensor_core_swizzled(LANES, kKvBytes);
  static constexpr int kRowBytes = tensor_core::row_bytes(LANES);              // a staged query row
  static constexpr int kKvRowBytes = tensor_core::row_bytes(LANES, kKvBytes);  // a padded K or V row
  static constexpr int kQueryChunks = LANES * 2 / 16;                          // 16-byte pieces of a query row
  static constexpr int kChunksPerRow = LANES * kKvBytes / 16;                  // 16-byte pieces of a K or V row
  static constexpr int kHeadSteps = LANES / 16;   // mma K steps of a dot product
  static constexpr int kLaneBlocks = LANES / 16;  // mma M blocks of the output lanes
  static constexpr int kCopiesPerLane = kWarpKeys * kChunksPerRow / 32;
  static constexpr int kBoxes = LANES * kKvBytes / 128;  // swizzled: 128-byte boxes per row
  static constexpr int kStageBytes = tensor_core::stage_bytes(LANES, kSwizzled, kKvBytes);
  static constexpr int kKeysPerCopy = 32 / kChunksPerRow;  // keys one copy instruction covers
  static constexpr tensor_core::SharedLayout kShared = tensor_core::shared_layout(LANES, ROWS, STAGES, kKvBytes);
  static_assert(ROWS <= 8, "the block's rows are N columns 0..7 of the mma");
  static_assert(LANES % 16 == 0 && kCopiesPerLane * 32 == kWarpKeys * kChunksPerRow, "whole mma steps and copies");
  static_assert(32 % kChunksPerRow == 0, "a copy instruction covers whole rows");
  static_assert(STAGES >= 2, "one tile is folded while the next ones land");
  static_assert(!kSwizzled || LANES % kTensorCopyLanes == 0, "the swizzled layout holds whole 64-lane boxes");
  static_assert(kSwizzled || COPIES != TileCopies::tensor, "tensor copies need the swizzled layout");
  static_assert(!kFp8 || COPIES != TileCopies::tensor, "an fp8 cache's tiles arrive by asynchronous copies");
  static_assert(kSwizzled || COPIES != TileCopies::async_evict_first,
                "ptxas 13.0 drops the L2 policy of the padded layout's copies (see TileCopies)");

  // Rows 2t + e's state: the running max (alike in the row's threads), this thread's share of the denominator, and
  // its accumulator lanes 16 j + g, 16 j + g + 8 as acc[e].o[2 j], acc[e].o[2 j + 1].
  struct RowStates {
    float run_max[2] = {-INFINITY, -INFINITY};
    float run_den[2] = {0.0f, 0.0f};
    OnlineSoftmaxState<2 * kLaneBlocks> acc[2];
  };
  // Row g's q as the scores' B fragments (zero past the block's rows): qb[s] = dims 16 s + 2t, + 1 and
  // 16 s + 8 + 2t, + 1 (fp8: 16 s + 4t .. + 3, as scores_fp8's K); in T, or fp16 times 2^e_g (to_fp16_scores).
  struct QueryFragments {
    unsigned qb[kHeadSteps][2];
    bool fp16 = false;                     // alike in the warp
    float score_scale[2] = {1.0f, 1.0f};  // multiplies rows 2t, 2t + 1's scores: the K scale, times 2^-e
  };
  // The lane's ldmatrix row in a stage (matrix_row): swizzled, the key's row start and (x ^ key % 8) * 16; padded,
  // the lane's piece of step 0.
  struct MatrixRow {
    int start;
    int piece_xor;
  };

  const DeviceBatch& batch;
  const FastDivmod& block_div;
  const KvTensorMaps& maps;
  BlockWork work;
  unsigned char* shared;
  unsigned char* kv_tiles;
  int* table_s;
  float* tile_max_s;  // [2][kWarps][8]
  float* den_s;       // [kWarps][ROWS]
  float* max_s;       // [ROWS]
  std::uint64_t* barriers;  // [STAGES][kWarps]
  int warp, lane;
  int g;  // this thread's q fragment row; its keys g, g + 8 of the scores
  int t;  // its rows 2t, 2t + 1 of the scores, weights and accumulator
  int tile;
  int row_end[2];  // rows 2t, 2t + 1 attend to keys [row_begin, row_end)
  int row_begin[2];
  float row_slopes[2];  // ALiBi slopes (0 without) and positions
  int row_positions[2];
  bool logit_arithmetic;  // a soft cap or ALiBi: one uniform test per tile
  bool tensor_copies;
  int first_block;
  bool table_staged;
  const std::int32_t* table;
  int num_tiles;
  float k_scale, v_scale;  // an fp8 cache's scales of the block's KV head; 1 otherwise
  // The asynchronous copies' addressing, alike in every tile: piece lane + 32 c is chunk copy_chunk of key
  // copy_first_key + c kKeysPerCopy, at k_chunk, v_chunk in a pool row.
  int live_chunks;                   // 16-byte pieces of a row inside the head
  unsigned row_stride;               // bytes per (slot, KV head)
  const unsigned char* k_pool;
  const unsigned char* v_pool;
  int copy_chunk, copy_first_key;
  const unsigned char* k_chunk;
  const unsigned char* v_chunk;

  __device__ TensorCoreBlock(const DeviceBatch& batch_, const DevicePlan& plan, const FastDivmod& block_div_,
                             const KvTensorMaps& maps_, unsigned char* shared_)
      : batch(batch_), block_div(block_div_), maps(maps_), work(load_block_work(batch_, plan)), shared(shared_) {
    kv_tiles = shared + kShared.kv;
    table_s = reinterpret_cast<int*>(shared + kShared.table);
    tile_max_s = reinterpret_cast<float*>(shared + kShared.tile_max);
    den_s = reinterpret_cast<float*>(shared + kShared.row_sums);
    max_s = den_s + kWarps * ROWS;
    barriers = reinterpret_cast<std::uint64_t*>(shared + kShared.barriers);
    warp = threadIdx.x / 32;
    lane = threadIdx.x % 32;
    g = lane / 4;
    t = lane % 4;
    tile = max(1, min(plan.tile_size, kTileKeys));
    row_end[0] = row_end_of(2 * t);
    row_end[1] = row_end_of(2 * t + 1);
    for (int e = 0; e < 2; ++e) {
      row_begin[e] = row_first_key(batch, work, 2 * t + e);
      row_slopes[e] = row_alibi_slope(batch, work, 2 * t + e);
      row_positions[e] = row_position(work, 2 * t + e);
    }
    logit_arithmetic = has_logit_arithmetic(batch);
    // Tensor copies need an item starting at a multiple of 16 (a warp's 16 slots in one block) and stages 1024-byte
    // aligned for the swizzle (else trap rather than misread).
    tensor_copies = COPIES == TileCopies::tensor && maps.usable && work.item.key_begin % kWarpKeys == 0;
    if (tensor_copies && ptx::shared_address(kv_tiles) % 1024 != 0) __trap();
    first_block = block_div.quotient(work.item.key_begin);
    const int table_count = block_div.quotient(work.item.key_end - 1) - first_block + 1;
    table_staged = table_count <= kTableEntries;
    table = batch.block_tables + work.seq.table_offset;
    num_tiles = (work.item.key_end - work.item.key_begin + tile - 1) / tile;
    live_chunks = batch.head_dim * kKvBytes / 16;
    row_stride = static_cast<unsigned>(batch.head_dim) * kKvBytes;
    // BUG fp8_k_scale_from_v_scales: K's scale read from the V scales.
    k_scale = kFp8 ? (BUG == GpuBug::fp8_k_scale_from_v_scales ? batch.v_scales : batch.k_scales)[work.kv_head] : 1.0f;
    v_scale = kFp8 ? batch.v_scales[work.kv_head] : 1.0f;
    k_pool = static_cast<const unsigned char*>(batch.k_pool);
    v_pool = static_cast<const unsigned char*>(batch.v_pool);
    copy_chunk = lane % kChunksPerRow;
    copy_first_key = lane / kChunksPerRow;
    k_chunk = k_pool + copy_chunk * 16;
    v_chunk = v_pool + copy_chunk * 16;
  }

  // Block row r's keys end at its position + 1, cut at the item's end (an absent row: none).
  __device__ int row_end_of(int r) const {
    const bool present = r < ROWS && r < work.item.num_rows;
    return present ? min(work.first_position + (work.item.first_row + r) / work.gqa + 1, work.item.key_end)
                   : work.item.key_begin;
  }

  // --- before the first tile ---

  // The block's queries into shared memory (zero past the rows and the head), a 16-byte asynchronous copy per piece;
  // they land by stage_table's barrier.
  __device__ void stage_queries() const {
    unsigned char* const queries_s = shared + kShared.queries;
    const unsigned char* const queries = static_cast<const unsigned char*>(batch.queries);
    const int head_pieces = batch.head_dim / 8;
    for (int p = threadIdx.x; p < ROWS * kQueryChunks; p += kThreads) {
      const int r = p / kQueryChunks, chunk = p % kQueryChunks;
      const bool live = r < work.item.num_rows && chunk < head_pieces;
      const int q_row = work.item.first_row + r;
      const std::size_t query_row = static_cast<std::size_t>(work.seq.query_row_offset + q_row / work.gqa);
      const std::size_t byte =
          live ? ((query_row * batch.num_query_heads + work.kv_head * work.gqa + q_row % work.gqa) * batch.head_dim +
                  chunk * 8) *
                     2
               : 0;
      ptx::copy_async_16(queries_s + r * kRowBytes + chunk * 16, queries + byte, live ? 16 : 0);
    }
    ptx::copy_async_commit();
  }

  // Byte offset in a stage of 16-byte piece `chunk` of tile key `key`'s K (kv = 0) or V (kv = 1) row.
  __device__ static int piece_offset(int kv, int key, int chunk) {
    if constexpr (kSwizzled)
      return kv * (kStageBytes / 2) + ((key / kWarpKeys) * kBoxes + chunk / 8) * kBoxBytes + (key % kWarpKeys) * 128 +
             ((chunk % 8) ^ (key % 8)) * 16;
    else
      return (kv * kTileKeys + key) * kKvRowBytes + chunk * 16;
  }

  // Zeroes the lanes past the head in every stage: padded, always, this warp's rows by the copies' lane-to-piece map
  // (each address by the thread that later copies it, in program order); swizzled, where head_dim < LANES, fenced
  // before any tensor copy.
  __device__ void zero_lanes_past_head() const {
    if constexpr (kSwizzled) {
      if (batch.head_dim < LANES) {
        for (int i = threadIdx.x; i < STAGES * kStageBytes / 16; i += kThreads)
          reinterpret_cast<uint4*>(kv_tiles)[i] = make_uint4(0, 0, 0, 0);
        ptx::fence_shared_for_tensor_copies();
      }
    } else {
#pragma unroll 1
      for (int s = 0; s < STAGES; ++s)
#pragma unroll
        for (int c = 0; c < kCopiesPerLane; ++c) {
          const int piece = lane + 32 * c;
          const int key = warp * kWarpKeys + piece / kChunksPerRow, chunk = piece % kChunksPerRow;
          unsigned char* const stage = kv_tiles + s * kStageBytes;
          for (int kv = 0; kv < 2; ++kv)
            *reinterpret_cast<uint4*>(stage + piece_offset(kv, key, chunk)) = make_uint4(0, 0, 0, 0);
        }
    }
  }

  // The block table staged, the tensor copies' barriers initialised, the queries landed: one barrier.
  __device__ void stage_table() const {
    if (table_staged) {
      const int table_count = block_div.quotient(work.item.key_end - 1) - first_block + 1;
      for (int i = threadIdx.x; i < table_count; i += kThreads) table_s[i] = table[first_block + i];
    }
    if (tensor_copies) {
      if (lane < STAGES) ptx::barrier_init(&barriers[lane * kWarps + warp], 1);  // lane 0's arrival + the bytes
      ptx::barrier_init_fence();
    }
    ptx::copy_async_wait<0>();  // the queries
    __syncthreads();
  }

  // --- copying a tile ---

  __device__ unsigned char* stage_of(int i) const { return kv_tiles + (i % STAGES) * kStageBytes; }

  // This warp's keys of tile i inside the item: a prefix of its 16, alike in every tile but the item's last.
  __device__ int warp_live_keys(int i) const {
    return min(max(min(tile, work.item.key_end - (work.item.key_begin + i * tile)) - warp * kWarpKeys, 0), kWarpKeys);
  }
  // Slot row (physical block x block_size + slot) of this warp's key `key` of tile i.
  __device__ int slot_row(int i, int key) const {
    int logical_block, slot;
    block_div.divmod(work.item.key_begin + i * tile + warp * kWarpKeys + key, logical_block, slot);
    const unsigned physical = table_staged ? table_s[logical_block - first_block] : __ldg(table + logical_block);
    return physical * batch.block_size + slot;
  }

  // 16-byte asynchronous copies of this warp's K and V rows of tile i; lane k < 16 looks up key k, shared by
  // shuffle. Keys past the item are zero-filled, never read.
  __device__ void copy_rows_async(int i) const {
    unsigned char* const stage = stage_of(i);
    const int live_keys = warp_live_keys(i);
    const unsigned looked_up =
        lane < live_keys ? static_cast<unsigned>(slot_row(i, lane)) * batch.num_kv_heads + work.kv_head : 0u;
    // A whole tile of whole rows (the bulk): no zero-fill predicate, half the general form's instructions.
    if (live_keys == kWarpKeys && live_chunks == kChunksPerRow) {
#pragma unroll
      for (int c = 0; c < kCopiesPerLane; ++c) {
        const int key = copy_first_key + c * kKeysPerCopy;
        const unsigned row = __shfl_sync(0xffffffffu, looked_up, key);
        unsigned char* const dst = stage + piece_offset(0, warp * kWarpKeys + key, copy_chunk);
        const unsigned char* const k_src = k_chunk + static_cast<std::size_t>(row) * row_stride;
        const unsigned char* const v_src = v_chunk + static_cast<std::size_t>(row) * row_stride;
        if constexpr (COPIES == TileCopies::async_evict_first) {
          ptx::copy_async_16_evict_first(dst, k_src);
          ptx::copy_async_16_evict_first(dst + kStageBytes / 2, v_src);
        } else {
          ptx::copy_async_16(dst, k_src, 16);
          ptx::copy_async_16(dst + kStageBytes / 2, v_src, 16);
        }
      }
      ptx::copy_async_commit();
      return;
    }
#pragma unroll
    for (int c = 0; c < kCopiesPerLane; ++c) {
      const int piece = lane + 32 * c;
      const int key = piece / kChunksPerRow, chunk = piece % kChunksPerRow;
      const std::size_t src = static_cast<std::size_t>(__shfl_sync(0xffffffffu, looked_up, key)) * row_stride;
      if (chunk >= live_chunks) continue;
      const bool live = key < live_keys;
      ptx::copy_async_16(stage + piece_offset(0, warp * kWarpKeys + key, chunk),
                         k_pool + (live ? src + chunk * 16 : 0), live ? 16 : 0);
      ptx::copy_async_16(stage + piece_offset(1, warp * kWarpKeys + key, chunk),
                         v_pool + (live ? src + chunk * 16 : 0), live ? 16 : 0);
    }
    ptx::copy_async_commit();
  }

  // Lane 0 copies tile i's 16 slots' K and V boxes (lanes past head_dim read as zeros) and announces their bytes; a
  // warp with no keys still arrives, so every phase completes.
  __device__ void issue_tensor_copies(int i) const {
    if (lane != 0) return;
    unsigned char* const stage = stage_of(i);
    std::uint64_t* const barrier = &barriers[(i % STAGES) * kWarps + warp];
    const int boxes = warp_live_keys(i) > 0 ? (batch.head_dim + kTensorCopyLanes - 1) / kTensorCopyLanes : 0;
    ptx::barrier_arrive_expecting(barrier, static_cast<unsigned>(boxes * 2 * kBoxBytes));
    if (boxes > 0) {
      // BUG tma_box_one_row_late: the box starts at the slot after the warp's first key.
      const int first_row = static_cast<int>(slot_row(i, 0)) + (BUG == GpuBug::tma_box_one_row_late ? 1 : 0);
      for (int b = 0; b < boxes; ++b) {
        unsigned char* const k_box = stage + piece_offset(0, warp * kWarpKeys, 8 * b);
        ptx::tensor_copy_3d(k_box, maps.k, b * kTensorCopyLanes, work.kv_head, first_row, barrier);
        ptx::tensor_copy_3d(k_box + kStageBytes / 2, maps.v, b * kTensorCopyLanes, work.kv_head, first_row, barrier);
      }
    }
  }

  __device__ void load_tile(int i) const {
    if (!tensor_copies) return copy_rows_async(i);
    issue_tensor_copies(i);
  }

  __device__ void start_pipeline() const {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      if (s < num_tiles) load_tile(s);
      else if (!tensor_copies) ptx::copy_async_commit();  // empty groups keep the wait count uniform
    }
  }

  // Tile i + STAGES into tile i's stage, right after the fold, so STAGES tiles are in flight during the next wait.
  __device__ void refill(int i) const {
    __syncwarp();  // every lane is done with tile i's stage
    // The flipped-parity mutant waits the right parity after its reads, so only they go wrong (no copy in flight at
    // exit, no arrival on a running phase).
    if constexpr (BUG == GpuBug::mbarrier_parity_flipped)
      if (tensor_copies) ptx::barrier_wait(&barriers[(i % STAGES) * kWarps + warp], (i / STAGES) & 1);
    if (i + STAGES < num_tiles) load_tile(i + STAGES);
    else if (!tensor_copies) ptx::copy_async_commit();
  }

  // Waits for this warp's tile i; after tensor copies, zeroes the rows past the item (0 times a stale V may be NaN).
  __device__ void wait_for_tile(int i) const {
    if (!tensor_copies) {
      // tiles i + 1 .. i + STAGES - 1 may still be in flight (BUG tc_cp_async_wait_one_late: tile i too)
      ptx::copy_async_wait<BUG == GpuBug::tc_cp_async_wait_one_late ? STAGES : STAGES - 1>();
    } else if constexpr (BUG == GpuBug::mbarrier_parity_flipped) {
      // The other parity: true at once while the phase runs; afterwards a bounded spin instead of a hang.
      ptx::barrier_wait_bounded(&barriers[(i % STAGES) * kWarps + warp], ((i / STAGES) & 1) ^ 1, 1024);
    } else {
      ptx::barrier_wait(&barriers[(i % STAGES) * kWarps + warp], (i / STAGES) & 1);
      const int live_keys = warp_live_keys(i);
      if (live_keys < kWarpKeys) {
        unsigned char* const stage = stage_of(i);
        const int pieces = (kWarpKeys - live_keys) * kChunksPerRow;
        for (int p = lane; p < 2 * pieces; p += 32) {  // K's dead rows, then V's
          const int kv = p / pieces, key = live_keys + p % pieces / kChunksPerRow, chunk = p % kChunksPerRow;
          *reinterpret_cast<uint4*>(stage + piece_offset(kv, warp * kWarpKeys + key, chunk)) = make_uint4(0, 0, 0, 0);
        }
        // Dead in every later tile too (warp_live_keys); the fence orders these stores before later copies.
        ptx::fence_shared_for_tensor_copies();
      }
    }
    __syncwarp();  // every lane's copies of tile i are in
  }

  // --- folding a tile ---

  // The q fragments, once the first copies are on their way.
  __device__ QueryFragments query_fragments() const {
    const unsigned char* const queries_s = shared + kShared.queries;
    QueryFragments q;
#pragma unroll
    for (int s = 0; s < kHeadSteps; ++s)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int dim = 16 * s + (kFp8 ? 4 * t + 2 * h : 8 * h + 2 * t);
        q.qb[s][h] = g < ROWS ? *reinterpret_cast<const unsigned*>(queries_s + g * kRowBytes + dim * 2) : 0u;
      }
    q.score_scale[0] = q.score_scale[1] = k_scale;
    if constexpr (kFp8) to_fp16_scores(q);
    return q;
  }

  // fp16 queries for an fp8 cache's scores, where exact: row g's q times 2^e_g (e_g = 15 - its largest |q|'s
  // exponent) is fp16 normals (11 bits hold bf16's 8) when its nonzero |q| are fp32 normals within 2^30 of each
  // other. The products stay exact, the mma's error scales by 2^e, and k_scale 2^-e_r (exact while normal) restores
  // row r's score in s k_scale's one rounding: the bf16 bound. Any row outside keeps the warp (and so every warp) bf16.
  __device__ void to_fp16_scores(QueryFragments& q) const {
    float largest = 0.0f, smallest = INFINITY;  // of this thread's |q| of row g; smallest over the nonzero ones
    bool finite = true;
#pragma unroll
    for (int s = 0; s < kHeadSteps; ++s)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const float a = fabsf(__uint_as_float((q.qb[s][h] >> (16 * half)) << 16));
          finite = finite && a <= FLT_MAX;
          largest = fmaxf(largest, a);
          if (a != 0.0f) smallest = fminf(smallest, a);
        }
    // Over the row's 4 threads (lanes 4g .. 4g + 3).
#pragma unroll
    for (int d = 1; d <= 2; d *= 2) {
      finite = __shfl_xor_sync(0xffffffffu, static_cast<int>(finite), d) != 0 && finite;
      largest = fmaxf(largest, __shfl_xor_sync(0xffffffffu, largest, d));
      smallest = fminf(smallest, __shfl_xor_sync(0xffffffffu, smallest, d));
    }
    const auto exponent = [](float a) { return static_cast<int>((__float_as_uint(a) >> 23) & 0xffu) - 127; };
    const int e = largest > 0.0f ? 15 - exponent(largest) : 0;
    bool fits = finite && (largest == 0.0f || (smallest >= FLT_MIN && exponent(largest) - exponent(smallest) < 30));
    float score_scale[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {  // rows 2t, 2t + 1: their e from a thread of theirs
      // BUG fp16_scores_row_of_fragment: row g's e, the fragment's row, where the scores' rows are 2t and 2t + 1.
      const int row_e = BUG == GpuBug::fp16_scores_row_of_fragment ? e : __shfl_sync(0xffffffffu, e, 4 * (2 * t + r));
      score_scale[r] = ldexpf(k_scale, -row_e);
      fits = fits && score_scale[r] >= FLT_MIN && score_scale[r] <= FLT_MAX;
    }
    if (!__all_sync(0xffffffffu, fits)) return;
#pragma unroll
    for (int s = 0; s < kHeadSteps; ++s)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const unsigned two = q.qb[s][h];
        const __half2 scaled = __floats2half2_rn(ldexpf(__uint_as_float(two << 16), e),
                                                 ldexpf(__uint_as_float(two & 0xffff0000u), e));
        q.qb[s][h] = *reinterpret_cast<const unsigned*>(&scaled);
      }
    q.fp16 = true;
    q.score_scale[0] = score_scale[0];
    q.score_scale[1] = score_scale[1];
  }

  // ldmatrix row addresses of the A operands: K (matrices keys 0-7 | 8-15 x dims lo, then x dims hi, of a head
  // step) and V transposed (keys 0-7 x lanes lo | hi, then keys 8-15, of a 16-lane block). A lane's key is fixed,
  // its piece of step n is 2 n + x (x = 0, 1); swizzled, at (c % 8) ^ (k % 8) in box n / 4, and as 2 n % 8 is even,
  // (2 n % 8 + x) ^ (k % 8) = (2 n % 8) ^ (x ^ k % 8): a per-lane term XORed with a constant of the unrolled n.
  // BUG swizzle_xor_of_4_rows: the reads XOR with key % 4, so keys 4-7 of every 8 read another key's piece.
  __device__ static MatrixRow matrix_row(int kv, int key, int piece) {
    constexpr int kXorRows = BUG == GpuBug::swizzle_xor_of_4_rows ? 4 : 8;
    if constexpr (kSwizzled)
      return MatrixRow{piece_offset(kv, key, 0) - (key % 8) * 16, (piece ^ (key % kXorRows)) * 16};
    else return MatrixRow{piece_offset(kv, key, piece), 0};
  }
  __device__ MatrixRow k_matrix_row() const {
    return matrix_row(0, warp * kWarpKeys + 8 * ((lane / 8) % 2) + lane % 8, lane / 16);
  }
  __device__ MatrixRow v_matrix_row() const {
    return matrix_row(1, warp * kWarpKeys + 8 * (lane / 16) + lane % 8, (lane / 8) % 2);
  }
  __device__ static int matrix_offset(const MatrixRow& r, int n) {
    if constexpr (kSwizzled) return r.start + (n / 4) * kBoxBytes + ((32 * (n % 4)) ^ r.piece_xor);
    else return r.start + 32 * n;
  }

  // S^T = K Q^T: s[2 k + e] is key warp * 16 + g + 8 k of row 2t + e. EVERY_STEP: no step tested (every_step_live).
  template <bool EVERY_STEP>
  __device__ void scores(const unsigned char* stage, const MatrixRow& k_row, const QueryFragments& q,
                         float (&s)[4]) const {
    if constexpr (kFp8) {
      scores_fp8<EVERY_STEP>(stage, k_row, q, s);
    } else {
#pragma unroll
      for (int step = 0; step < kHeadSteps; ++step) {
        if (!EVERY_STEP && 16 * step >= batch.head_dim) break;  // past the head: no mma (not exact zeros added)
        unsigned a[4];
        ptx::load_matrices_x4(a, stage + matrix_offset(k_row, step));
        Mma::mma(s[0], s[1], s[2], s[3], a, q.qb[step][0], q.qb[step][1]);
      }
    }
  }

  // From an fp8 cache: load n holds keys g | g + 8 x 16 dims of steps 2n, 2n + 1, a thread's word of a row being
  // dims 4t..4t + 3; widened (to fp16 for to_fp16_scores' queries, else T), the low pair is the mma's K indices
  // 2t, 2t + 1, the high pair 2t + 8, 2t + 9 (the queries' fragments alike).
  template <bool EVERY_STEP>
  __device__ void scores_fp8(const unsigned char* stage, const MatrixRow& k_row, const QueryFragments& q,
                             float (&s)[4]) const {
    if (q.fp16) return scores_fp8_as<EVERY_STEP, __half>(stage, k_row, q, s);
    scores_fp8_as<EVERY_STEP, T>(stage, k_row, q, s);
  }
  template <bool EVERY_STEP, typename KT>
  __device__ void scores_fp8_as(const unsigned char* stage, const MatrixRow& k_row, const QueryFragments& q,
                                float (&s)[4]) const {
#pragma unroll
    for (int n = 0; n < kHeadSteps / 2; ++n) {
      // head_dim % 16 == 0: a load's second step may be out, not its first
      if (!EVERY_STEP && 32 * n >= batch.head_dim) break;
      unsigned r[4];
      ptx::load_matrices_x4(r, stage + matrix_offset(k_row, n));
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (!EVERY_STEP && 32 * n + 16 * h >= batch.head_dim) break;
        unsigned a[4];  // the low pairs of r[2h], r[2h + 1], then the high pairs
        widen_fp8x4<C, KT>(r[2 * h], a[0], a[2]);
        widen_fp8x4<C, KT>(r[2 * h + 1], a[1], a[3]);
        tensor_core::MmaOperand<KT>::mma(s[0], s[1], s[2], s[3], a, q.qb[2 * n + h][0], q.qb[2 * n + h][1]);
      }
    }
  }

  // score[e][k]: row 2t + e's scaled score of key warp * 16 + g + 8 k (-inf where masked); each row's warp max.
  __device__ void masked_scores(int i, const QueryFragments& q, const float (&s)[4], float (&score)[2][2],
                                float (&warp_max)[2]) const {
    const int t0 = work.item.key_begin + i * tile;
    // Row 2t + e attends to this tile's keys [skipped, row_keys): the first `skipped` lie before its window.
    bool live[2][2];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int row_keys = max(0, min(row_end[e] - t0, tile));
      const int skipped = max(0, min(row_begin[e] - t0, tile));
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        const int key = warp * kWarpKeys + g + 8 * k;
        live[e][k] = skipped <= key && key < row_keys;
      }
    }
    // The four logits, the options behind one uniform branch (a branch per logit would serialise the two rows'
    // shuffle chains below) and on live keys only (an absent row's zero score takes the soft cap's slow division).
    float logit[2][2];
#pragma unroll
    for (int e = 0; e < 2; ++e)
#pragma unroll
      for (int k = 0; k < 2; ++k) logit[e][k] = (kFp8 ? s[2 * k + e] * q.score_scale[e] : s[2 * k + e]) * batch.scale;
    if (logit_arithmetic) {
#pragma unroll
      for (int e = 0; e < 2; ++e)
#pragma unroll
        for (int k = 0; k < 2; ++k)
          if (live[e][k])
            logit[e][k] = with_logit_options(batch, logit[e][k], row_slopes[e], t0 + warp * kWarpKeys + g + 8 * k,
                                             row_positions[e]);
    }
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      // Select, not multiply: a masked key's score is -inf whatever its K holds. Then the max over the 8 threads of t.
#pragma unroll
      for (int k = 0; k < 2; ++k) score[e][k] = live[e][k] ? logit[e][k] : -INFINITY;
      warp_max[e] = fmaxf(score[e][0], score[e][1]);
      warp_max[e] = fmaxf(warp_max[e], __shfl_xor_sync(0xffffffffu, warp_max[e], 4));
      warp_max[e] = fmaxf(warp_max[e], __shfl_xor_sync(0xffffffffu, warp_max[e], 8));
      if constexpr (BUG != GpuBug::tc_warp_max_missing_step)  // BUG: lanes 0-15 and 16-31 keep their own max
        warp_max[e] = fmaxf(warp_max[e], __shfl_xor_sync(0xffffffffu, warp_max[e], 16));
    }
  }

  // Rows 2t, 2t + 1's tile max over the warps: the one barrier per tile (the other parity's slots are rewritten only
  // after the next one).
  __device__ void block_tile_max(int i, const float (&warp_max)[2], float (&tile_max)[2]) const {
    float* const tile_max_par = tile_max_s + (i & 1) * kWarps * 8;
    if (g == 0) *reinterpret_cast<float2*>(tile_max_par + warp * 8 + 2 * t) = make_float2(warp_max[0], warp_max[1]);
    __syncthreads();
    tile_max[0] = tile_max[1] = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float2 m = *reinterpret_cast<const float2*>(tile_max_par + w * 8 + 2 * t);
      tile_max[0] = fmaxf(tile_max[0], m.x);
      tile_max[1] = fmaxf(tile_max[1], m.y);
    }
  }

  // A fully masked tile changes no row (factor 1, or 0 on the empty state; weights 0). No exit around the exps
  // (mma.sync needs the whole warp); the multiplies are skipped where each row of the warp has a factor of exactly 1
  // or no key yet (lanes 0 or NaN, which 0 keeps): one vote for 32 multiplies, the bits unchanged.
  __device__ static void rescale(RowStates& rows, const float (&tile_max)[2]) {
    float alpha[2];
    bool changes = false;
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const bool folded = rows.run_max[e] != -INFINITY;
      alpha[e] = raise_running_max(rows.run_max[e], rows.run_den[e], tile_max[e]);
      changes = changes || (folded && alpha[e] != 1.0f);
    }
    if (!__any_sync(0xffffffffu, changes)) return;
#pragma unroll
    for (int e = 0; e < 2; ++e) rows.acc[e].scale_lanes(alpha[e], 2 * kLaneBlocks);
  }

  // The weights (added to the denominator in key order) split into hi + lo, then O^T += V^T P^T over the warp's 16
  // keys, hi then lo: lane block j's 16 lanes are M, the block's rows N.
  template <bool EVERY_STEP>
  __device__ void accumulate_values(const unsigned char* stage, const MatrixRow& v_row, const float (&score)[2][2],
                                    RowStates& rows) const {
    tensor_core::SplitWeight<VT> w[2][2];
#pragma unroll
    for (int e = 0; e < 2; ++e)
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        const float p = key_weight(score[e][k], rows.run_max[e]);
        rows.run_den[e] += p;
        w[e][k] = tensor_core::split_weight<VT>(p);
      }
    // P^T's B fragments want row g's keys 2t, 2t + 1 | 2t + 8, 2t + 9; the thread holds keys g | g + 8 of rows 2t,
    // 2t + 1: the transposed 8x8 fragments.
    using tensor_core::pack;
    const unsigned p_hi0 = ptx::transpose_8x8(pack(w[0][0].hi, w[1][0].hi));
    const unsigned p_hi1 = ptx::transpose_8x8(pack(w[0][1].hi, w[1][1].hi));
    const unsigned p_lo0 = ptx::transpose_8x8(pack(w[0][0].lo, w[1][0].lo));
    const unsigned p_lo1 = ptx::transpose_8x8(pack(w[0][1].lo, w[1][1].lo));
    if constexpr (kFp8) {
      values_fp8<EVERY_STEP>(stage, v_row, p_hi0, p_hi1, p_lo0, p_lo1, rows);
    } else {
#pragma unroll
      for (int j = 0; j < kLaneBlocks; ++j) {
        if (!EVERY_STEP && 16 * j >= batch.head_dim) break;
        unsigned a[4];
        ptx::load_matrices_x4_transposed(a, stage + matrix_offset(v_row, j));
        float& o0 = rows.acc[0].o[2 * j];      // lane 16 j + g,     row 2t
        float& o1 = rows.acc[1].o[2 * j];      // lane 16 j + g,     row 2t + 1
        float& o2 = rows.acc[0].o[2 * j + 1];  // lane 16 j + g + 8, row 2t
        float& o3 = rows.acc[1].o[2 * j + 1];  // lane 16 j + g + 8, row 2t + 1
        Mma::mma(o0, o1, o2, o3, a, p_hi0, p_hi1);
        Mma::mma(o0, o1, o2, o3, a, p_lo0, p_lo1);
      }
    }
  }

  // The values from an fp8 cache, in VT: load n (transposed) gives a thread dims 2g, 2g + 1 of keys 2t, 2t + 1 (and
  // 2t + 8, 2t + 9) of lane blocks 2n, 2n + 1; the widening pairs one dim's keys, so M row g is dim 2g and row
  // g + 8 dim 2g + 1 (write_result puts them back).
  template <bool EVERY_STEP>
  __device__ void values_fp8(const unsigned char* stage, const MatrixRow& v_row, unsigned p_hi0, unsigned p_hi1,
                             unsigned p_lo0, unsigned p_lo1, RowStates& rows) const {
#pragma unroll
    for (int n = 0; n < kLaneBlocks / 2; ++n) {
      if (!EVERY_STEP && 32 * n >= batch.head_dim) break;
      unsigned r[4];  // keys 0-7 of blocks 2n | 2n + 1, then keys 8-15
      ptx::load_matrices_x4_transposed(r, stage + matrix_offset(v_row, n));
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int j = 2 * n + h;
        if (!EVERY_STEP && 16 * j >= batch.head_dim) break;
        unsigned a[4];  // bytes reordered so that each pair is one dim's two keys
        widen_fp8x4<C, VT>(__byte_perm(r[h], 0, 0x3120), a[0], a[1]);
        widen_fp8x4<C, VT>(__byte_perm(r[2 + h], 0, 0x3120), a[2], a[3]);
        float& o0 = rows.acc[0].o[2 * j];      // dim 16 j + 2g,     row 2t
        float& o1 = rows.acc[1].o[2 * j];      // dim 16 j + 2g,     row 2t + 1
        float& o2 = rows.acc[0].o[2 * j + 1];  // dim 16 j + 2g + 1, row 2t
        float& o3 = rows.acc[1].o[2 * j + 1];  // dim 16 j + 2g + 1, row 2t + 1
        ValuesMma::mma(o0, o1, o2, o3, a, p_hi0, p_hi1);
        ValuesMma::mma(o0, o1, o2, o3, a, p_lo0, p_lo1);
      }
    }
  }

  // Whether the head reaches the last 16-lane block: then fold_tiles<true> tests no step (straight-line code).
  __device__ bool every_step_live() const { return batch.head_dim > LANES - 16; }

  template <bool EVERY_STEP>
  __device__ void fold_tiles(const QueryFragments& q, RowStates& rows) const {
    const MatrixRow k_row = k_matrix_row();
    const MatrixRow v_row = v_matrix_row();
    for (int i = 0; i < num_tiles; ++i) {
      wait_for_tile(i);
      const unsigned char* const stage = stage_of(i);
      float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      scores<EVERY_STEP>(stage, k_row, q, s);
      float score[2][2], warp_max[2], tile_max[2];
      masked_scores(i, q, s, score, warp_max);
      block_tile_max(i, warp_max, tile_max);
      rescale(rows, tile_max);
      accumulate_values<EVERY_STEP>(stage, v_row, score, rows);
      refill(i);
    }
  }

  // --- after the last tile ---

  // The warps' sums meet in the K/V space; the epilogue adds them in warp order.
  __device__ void write_result(RowStates& rows, const DevicePlan& plan) const {
    ptx::copy_async_wait<0>();
    __syncthreads();
    constexpr int kSummedRow = tensor_core::summed_row_floats(LANES);
    float* const group_acc = reinterpret_cast<float*>(kv_tiles);  // [kWarps][ROWS][kSummedRow]
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      // The row's denominator over the 8 threads of its t: the same bits in each.
      rows.run_den[e] += __shfl_xor_sync(0xffffffffu, rows.run_den[e], 4);
      rows.run_den[e] += __shfl_xor_sync(0xffffffffu, rows.run_den[e], 8);
      rows.run_den[e] += __shfl_xor_sync(0xffffffffu, rows.run_den[e], 16);
      const int r = 2 * t + e;
      if (r >= ROWS) continue;
      float* const row_acc = group_acc + (warp * ROWS + r) * kSummedRow;
#pragma unroll
      for (int j = 0; j < kLaneBlocks; ++j) {
        if constexpr (kFp8) {  // the V scale, one rounding of each sum; dims 2g, 2g + 1 (values_fp8)
          *reinterpret_cast<float2*>(row_acc + 16 * j + 2 * g) =
              make_float2(rows.acc[e].o[2 * j] * v_scale, rows.acc[e].o[2 * j + 1] * v_scale);
        } else {
          row_acc[16 * j + g] = rows.acc[e].o[2 * j];
          row_acc[16 * j + g + 8] = rows.acc[e].o[2 * j + 1];
        }
      }
      if (g == 0) {
        den_s[warp * ROWS + r] = rows.run_den[e];
        if (warp == 0) max_s[r] = rows.run_max[e];
      }
    }
    __syncthreads();
    write_item_result<T, ROWS, LANES, kWarps, kThreads, kSummedRow>(batch, plan, work, group_acc, den_s, max_s);
  }
};

template <Storage S, int LANES, int ROWS, int STAGES, TileCopies COPIES, GpuBug BUG = GpuBug::none,
          KvCache C = KvCache::same>
__global__ void __launch_bounds__(tensor_core::kThreads,
                                  (tensor_core::min_blocks<LANES, ROWS, STAGES, tensor_core_kv_bytes(C)>()))
    tensor_core_attention_kernel(const DeviceBatch batch, const DevicePlan plan, const FastDivmod block_div,
                                 const __grid_constant__ KvTensorMaps maps) {
  extern __shared__ __align__(1024) unsigned char tensor_core_shared[];
  using Block = TensorCoreBlock<S, LANES, ROWS, STAGES, COPIES, BUG, C>;
  ptx::allow_dependent_launch();  // a split-K merge may start preparing now
  const Block block(batch, plan, block_div, maps, tensor_core_shared);
  block.stage_queries();
  block.zero_lanes_past_head();
  block.stage_table();

  typename Block::RowStates rows;
  rows.acc[0].init(2 * Block::kLaneBlocks);
  rows.acc[1].init(2 * Block::kLaneBlocks);
  block.start_pipeline();
  const typename Block::QueryFragments q = block.query_fragments();
  if (block.every_step_live()) block.template fold_tiles<true>(q, rows);
  else block.template fold_tiles<false>(q, rows);
  block.write_result(rows, plan);
}

}  // namespace pacheck::cuda::kernels
