// The tensor-core form of the paged-attention kernel, for bf16 storage with head dims that are a multiple of 8
// (whole 16-byte rows). Same work items, plan, partial states and online-softmax steps as attention_kernel in
// paged_attention_kernel.cuh; only the two inner products move from fp32 fused multiply-adds on the CUDA cores
// to mma.sync (bf16 inputs, fp32 accumulators), which is what lets decode at GQA 8 reach the memory bandwidth:
// 2 x head_dim x 8 multiply-adds per key are 4 per byte of K/V, more than half the H200's fp32 peak at 4.4 TB/s.
// C++17 CUDA.
//
// A block is 4 warps. A tile is up to 64 keys; warp w owns keys [16 w, 16 w + 16) of every tile: it copies their
// K and V rows into shared memory (STAGES tiles in flight) and reads back only those, so a warp never waits for
// another's copies. The copies are tensor copies where the layout's TileCopies ask for them and the block size and
// the item allow (16 keys = 16 consecutive slots of one block: one instruction per 64 lanes, kv_tensor_maps.h),
// 16-byte asynchronous copies otherwise. A tensor copy reads the whole 16-slot run, so in an
// item's last tile it may read slots past the item's last key (in the same block, so in the pool); their rows are
// zeroed before use, as the asynchronous copies zero-fill them without reading. Per tile:
//   scores   S^T[key, row] = K Q^T by mma.m16n8k16, transposed so that no operand is padding: the warp's 16
//            keys are the M rows, the block's rows (at most 8) the N columns, the head the K dimension; each
//            thread ends up with keys g and g + 8 (g = lane / 4) of rows 2t and 2t + 1 (t = lane % 4);
//   max      a row's tile max over the 8 threads that hold it (shuffles) and over the warps (shared memory: the
//            one barrier per tile), so every thread of a row keeps the same running max;
//   weights  raise_running_max and key_weight (online_softmax.h) on each thread's own keys, every row rescaled
//            every tile, no branch around an exp; its share of the denominator sums them in fp32;
//   values   O^T[lane, row] += V^T P^T by mma, 16 lanes a block as the M rows: the fp32 weights are split
//            exactly into bf16 hi + lo (two mma: the weights enter with 16 significant bits, not bf16's 8),
//            transposed into the B operand's layout in registers (movmatrix), and the accumulator fragments are
//            held as two OnlineSoftmaxStates' lanes (one per row), which scale_lanes rescales.
// (Until 2026-11-30 the products ran untransposed, with the rows as M: half of every scores mma and three
// quarters of every values mma multiplied padding. Same arithmetic per element, half the mma, and the wide
// layout's registers went from 168 with a spill to 123; no faster on the H200 (reports/gpu/issue8-perf.md,
// session 14): the tensor cores were not what bounded it.)
// Arithmetic, for the error model (cuda/kernel_error_model.cpp, oracle/ERROR_MODEL.md "Tensor cores"): an mma
// forms C + sum of 16 exact products per output element; the model takes its error to be at most 72 u times
// |C| + sum |products| (the alignment-and-truncation behaviour measured on NVIDIA tensor cores, with a factor 2
// to spare), a logit passes through ceil(head_dim / 16) of them, an accumulator term through two per tile, and
// the hi + lo split leaves a relative weight error of at most 2^-18 = 64 u in the numerator.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "cuda/kv_tensor_maps.h"
#include "cuda/paged_attention_kernel.cuh"

namespace pacheck::cuda::kernels {

// --- tensor-core primitives -------------------------------------------------------------------------------------

// D = A B + D for one m16n8k16 tile: A 16x16 bf16 (row-major, 4 registers of 2), B 16x8 bf16 (2 registers), D
// 16x8 fp32 (4 registers). Fragment ownership (g = lane / 4, t = lane % 4): a0 = A[g][2t..2t+1],
// a1 = A[g+8][2t..], a2 = A[g][2t+8..], a3 = A[g+8][2t+8..]; b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g];
// d0, d1 = D[g][2t..2t+1], d2, d3 = D[g+8][2t..2t+1].
__device__ inline void mma_bf16_16x8x16(float& d0, float& d1, float& d2, float& d3, unsigned a0, unsigned a1,
                                        unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Four 8x8 bf16 matrices from shared memory: lane l gives the address of row l % 8 of matrix l / 8 (16 bytes),
// and receives r[m] = elements (l / 4, 2 (l % 4) .. + 1) of matrix m; with .trans, elements (2 (l % 4) .. + 1,
// l / 4).
__device__ inline void load_matrices_x4(unsigned (&r)[4], const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row_address)));
}
__device__ inline void load_matrices_x4_transposed(unsigned (&r)[4], const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row_address)));
}

__device__ inline unsigned bf16_bits(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }
// Two bf16 as an mma operand register: `first` (the lower column or row index) in the low half.
__device__ inline unsigned pack_bf16(__nv_bfloat16 first, __nv_bfloat16 second) {
  return bf16_bits(first) | (bf16_bits(second) << 16);
}

// The 8x8 bf16 matrix whose fragment each lane holds (lane l: row l / 4, columns 2 (l % 4), + 1, the lower column
// in the low half, as ldmatrix delivers it) transposed: lane l receives row l / 4 of the transpose.
__device__ inline unsigned transpose_8x8(unsigned fragment) {
  unsigned transposed;
  asm("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(transposed) : "r"(fragment));
  return transposed;
}

// An fp32 weight as hi + lo with hi = bf16(p) and lo = bf16(p - hi): p - hi is exact in fp32, so hi + lo differs
// from p by at most lo's rounding, 2^-9 |p - hi| <= 2^-18 |p|.
struct SplitWeight {
  __nv_bfloat16 hi, lo;
};
__device__ inline SplitWeight split_weight(float p) {
  const __nv_bfloat16 hi = __float2bfloat16_rn(p);
  return {hi, __float2bfloat16_rn(p - __bfloat162float(hi))};
}

// --- tensor copies (sm_90's copy engine) ---------------------------------------------------------------------

// A tensor copy moves a box of a pool (kv_tensor_maps.h: 16 slots of one KV head, 64 lanes) into shared memory in
// one instruction and reports its bytes to an mbarrier in shared memory; the warp that owns the box waits on the
// barrier's phase. Copies and barrier run in the "async proxy": generic stores to bytes that a copy writes later
// must be fenced first (fence_shared_for_tensor_copies).
__device__ inline void barrier_init(std::uint64_t* barrier, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(arrivals) : "memory");
}
__device__ inline void barrier_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
__device__ inline void fence_shared_for_tensor_copies() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// One arrival that also announces `bytes` of copies: the phase completes once they have all landed.
__device__ inline void barrier_arrive_expecting(std::uint64_t* barrier, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(bytes)
               : "memory");
}
// The box at (lane, kv head, slot row) of `map` to shared_dst (1024-byte aligned for the 128-byte swizzle).
__device__ inline void tensor_copy(void* shared_dst, const CUtensorMap& map, int lane, int kv_head, int slot_row,
                                   std::uint64_t* barrier) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(shared_address(shared_dst)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(lane), "r"(kv_head), "r"(slot_row), "r"(shared_address(barrier))
      : "memory");
}
// Until the barrier's phase of this parity has completed; its copies are then visible to this thread.
__device__ inline void barrier_wait(std::uint64_t* barrier, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(shared_address(barrier)), "r"(parity)
        : "memory");
  } while (!done);
}

// --- layout -----------------------------------------------------------------------------------------------------

namespace tensor_core {

// How the swizzled layout's tiles reach shared memory (the padded layout always uses 16-byte asynchronous
// copies):
//   tensor  K and V by tensor copies where the launch and the item allow them (16-byte asynchronous copies
//           otherwise);
//   async   K and V by 16-byte asynchronous copies, whose addresses every lane computes (no mbarriers);
//   async_evict_first
//           as async, with a whole tile's copies under an L2 evict-first policy (copy_async_16_evict_first), so
//           that streaming K and V evicts little else from the L2: the wide layout in grids of one wave (see
//           paged_attention.h). Not in the padded layout: there ptxas 13.0 dropped the policy's definition, and
//           the catalogue met illegal-instruction faults (session 27 of reports/gpu/issue8-perf.md).
// production_copies (below) says which the production layouts use, but for the one-wave layout at 128 lanes,
// WideEvictFirstTensorCoreLayout. (Until session 20 another form copied K by tensor copies and V asynchronously:
// the production deep and wide layouts of session 18.)
enum class TileCopies { tensor, async, async_evict_first };

inline constexpr int kWarps = 4;
inline constexpr int kThreads = 32 * kWarps;
inline constexpr int kTileKeys = 64;
inline constexpr int kWarpKeys = kTileKeys / kWarps;  // one mma K step of the values product
static_assert(kWarpKeys == 16, "a warp's keys are one m16n8k16 K dimension");

// Two layouts of a stage's K and V rows:
//   padded    [stage][K, V][key][row_bytes]: rows padded by 16 bytes, so that ldmatrix's 8 rows fall in distinct
//             banks;
//   swizzled  [stage][K, V][warp][64-lane box][16 keys][128 bytes], 16-byte piece c of key k's row stored at piece
//             c ^ (k % 8): the tensor copies' 128-byte swizzle, which keeps ldmatrix free of conflicts unpadded.
//             Each box is 2 KB at a 1024-byte aligned offset, as the swizzle requires.
struct SharedLayout {
  int kv;        // the stages' K and V rows; after the last tile the warps' accumulators
  int table;     // staged block-table entries
  int queries;   // [rows][row_bytes]: the block's queries, padded rows (zero past the head)
  int tile_max;  // [2 parities][warps][8 rows]
  int row_sums;  // [warps][rows] denominators, then [rows] maxima
  int barriers;  // [stage][warp] mbarriers of the tensor copies (8 bytes each)
  int total;
};
__host__ __device__ constexpr int row_bytes(int lanes) { return lanes * 2 + 16; }  // +16: ldmatrix without conflicts
// The floats of a row of a warp's sums in shared memory at the end: 4 more than the lanes, so that a store
// instruction's 4 rows (one per t) fall in distinct banks, (2t + e) * (lanes + 4) differing by 8t modulo the 32
// banks, where rows of `lanes` floats put them all in one (a 4-way conflict at 8 rows). On top of the four-lane
// write_item_result, split-K at batch 1, GQA 8 took another 0.7-1.0% less time at 32k and 2.1-2.4% at 8k
// (reports/gpu/issue8-perf.md, session 26, call 2).
__host__ __device__ constexpr int summed_row_floats(int lanes) { return lanes + 4; }
inline constexpr int kBoxBytes = kTensorCopyKeys * kTensorCopyLanes * 2;
__host__ __device__ constexpr int stage_bytes(int lanes, bool swizzled) {
  return 2 * kTileKeys * (swizzled ? lanes * 2 : row_bytes(lanes));
}
__host__ __device__ constexpr SharedLayout shared_layout(int lanes, int rows, int stages, int table_entries,
                                                         bool swizzled) {
  SharedLayout s{};
  const int kv = stages * stage_bytes(lanes, swizzled);
  const int sums = kWarps * rows * summed_row_floats(lanes) * 4;
  s.kv = 0;
  s.table = layout::round_up(kv > sums ? kv : sums, 16);
  s.queries = s.table + table_entries * 4;
  s.tile_max = s.queries + rows * row_bytes(lanes);
  s.row_sums = s.tile_max + 2 * kWarps * 8 * 4;
  s.barriers = s.row_sums + layout::round_up((kWarps + 1) * rows * 4, 16);
  s.total = s.barriers + stages * kWarps * 8;
  return s;
}

}  // namespace tensor_core

// --- the kernel -------------------------------------------------------------------------------------------------

// Blocks per multiprocessor the registers must allow: as many as the shared memory fits, at most 3.
template <int LANES, int ROWS, int STAGES, int TABLE, bool SWIZZLED>
constexpr int tensor_core_min_blocks() {
  const int fit = 227 * 1024 / (tensor_core::shared_layout(LANES, ROWS, STAGES, TABLE, SWIZZLED).total + 1024);
  return fit < 1 ? 1 : fit > 3 ? 3 : fit;
}

// STAGES tiles sit in shared memory: one is folded while the others land. The first TABLE entries of the item's
// block table are staged in shared memory; an item with more reads its table from global memory (through L1).
// SWIZZLED (64 lanes and wider): the swizzled layout, which tensor copies need. With COPIES = tensor, where
// `maps` are usable and the item starts at a multiple of 16 keys, each warp's 16 keys of a tile arrive as tensor
// copies (one per 64 lanes of K and of V, issued by one lane) instead of 16-byte asynchronous copies whose
// addresses every lane computes: about a sixth of the instructions of a tile, and the copy engine does the address
// arithmetic. Other items, COPIES = async or async_evict_first and the padded layout use the asynchronous
// copies.
template <int LANES, int ROWS, int STAGES, int TABLE, bool SWIZZLED, tensor_core::TileCopies COPIES>
__global__ void __launch_bounds__(tensor_core::kThreads,
                                  (tensor_core_min_blocks<LANES, ROWS, STAGES, TABLE, SWIZZLED>()))
    tensor_core_attention_kernel(const DeviceBatch batch, const DevicePlan plan, const FastDivmod block_div,
                                 const __grid_constant__ KvTensorMaps maps) {
  using namespace tensor_core;
  constexpr int kRowBytes = row_bytes(LANES);
  constexpr int kChunksPerRow = LANES * 2 / 16;   // 16-byte pieces of a K or V row
  constexpr int kHeadSteps = LANES / 16;          // mma K steps of a dot product
  constexpr int kLaneBlocks = LANES / 16;         // mma M blocks of the output lanes
  constexpr int kCopiesPerLane = kWarpKeys * kChunksPerRow / 32;
  constexpr int kBoxes = LANES / kTensorCopyLanes;  // swizzled layout: 64-lane boxes per row
  constexpr int kStageBytes = stage_bytes(LANES, SWIZZLED);
  constexpr SharedLayout kShared = shared_layout(LANES, ROWS, STAGES, TABLE, SWIZZLED);
  static_assert(ROWS <= 8, "the block's rows are M rows 0..7 of the mma");
  static_assert(LANES % 16 == 0 && kCopiesPerLane * 32 == kWarpKeys * kChunksPerRow, "whole mma steps and copies");
  static_assert(STAGES >= 2, "one tile is folded while the next ones land");
  static_assert(!SWIZZLED || (LANES % kTensorCopyLanes == 0 && kWarpKeys == kTensorCopyKeys),
                "the swizzled layout holds whole 64-lane boxes of a warp's 16 keys");
  static_assert(SWIZZLED || COPIES != TileCopies::tensor, "tensor copies need the swizzled layout");
  static_assert(SWIZZLED || COPIES != TileCopies::async_evict_first,
                "ptxas 13.0 drops the L2 policy of the padded layout's copies (see TileCopies)");

  extern __shared__ __align__(1024) unsigned char tensor_core_shared[];
  unsigned char* const shared = tensor_core_shared;
  unsigned char* const kv_tiles = shared + kShared.kv;
  int* const table_s = reinterpret_cast<int*>(shared + kShared.table);
  float* const tile_max_s = reinterpret_cast<float*>(shared + kShared.tile_max);  // [2][kWarps][8]
  float* const den_s = reinterpret_cast<float*>(shared + kShared.row_sums);       // [kWarps][ROWS]
  float* const max_s = den_s + kWarps * ROWS;                                     // [ROWS]
  std::uint64_t* const barriers = reinterpret_cast<std::uint64_t*>(shared + kShared.barriers);  // [STAGES][kWarps]

  allow_dependent_launch();  // a split-K merge may start preparing now (see wait_for_prerequisite_grids)
  const BlockWork work = load_block_work(batch, plan);
  const WorkItem& item = work.item;
  const int kv_head = work.kv_head;
  const SequenceMeta& seq = work.seq;
  const int head_dim = batch.head_dim;
  const int gqa = work.gqa;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int g = lane / 4;  // the row of this thread's q fragment; its keys g and g + 8 of the scores
  const int t = lane % 4;  // its rows 2t, 2t + 1 of the scores, weights and accumulator
  const int tile = max(1, min(plan.tile_size, kTileKeys));
  const int first_position = work.first_position;
  // Block row r attends to keys [item.key_begin, end): its own position + 1, cut at the item's end (an absent
  // row: none).
  const auto row_end_of = [&](int r) {
    const bool present = r < ROWS && r < item.num_rows;
    return present ? min(first_position + (item.first_row + r) / gqa + 1, item.key_end) : item.key_begin;
  };
  const int row_end[2] = {row_end_of(2 * t), row_end_of(2 * t + 1)};
  // The host allowed tensor copies for the launch (block size and tile multiples of 16); this item's warp tiles
  // are then whole runs of 16 slots of one block if it starts at a multiple of 16. The swizzle needs the stages
  // 1024-byte aligned, which the declaration asks for; should a toolchain not honour it, fail loudly rather than
  // read misplaced rows (or fall back to a silently slower path).
  const bool tensor_copies = COPIES == TileCopies::tensor && maps.usable && item.key_begin % kWarpKeys == 0;
  if (tensor_copies && shared_address(kv_tiles) % 1024 != 0) __trap();

  // The block's queries, staged in shared memory (row r at queries_s + r kRowBytes, zero past the block's rows and
  // past the head) by one 16-byte asynchronous copy per piece (launch_attention checks that the queries are 16-byte
  // aligned; head_dim is a multiple of 8, so every row is). They land with the table, before the barrier below.
  // A block's first copies wait for the table, whose loads waited behind the queries' while each thread loaded its
  // fragments from global memory (32 loads, then 16: the table staged 0.5-0.8 us sooner; session 19). One copy a
  // thread took 3% off cuda_fused at batch 1-8 (reports/gpu/issue8-perf.md, session 23).
  unsigned char* const queries_s = shared + kShared.queries;
  {
    const unsigned char* const queries = static_cast<const unsigned char*>(batch.queries);
    const int head_pieces = head_dim / 8;  // 16-byte pieces of a query row
    for (int p = threadIdx.x; p < ROWS * kChunksPerRow; p += kThreads) {
      const int r = p / kChunksPerRow, chunk = p % kChunksPerRow;
      const bool live = r < item.num_rows && chunk < head_pieces;
      const int q_row = item.first_row + r;
      const std::size_t query_row = static_cast<std::size_t>(seq.query_row_offset + q_row / gqa);
      const std::size_t byte =
          live ? ((query_row * batch.num_query_heads + kv_head * gqa + q_row % gqa) * head_dim + chunk * 8) * 2 : 0;
      copy_async_16(queries_s + r * kRowBytes + chunk * 16, queries + byte, live ? 16 : 0);
    }
    copy_async_commit();
  }

  // Byte offset in a stage of 16-byte piece `chunk` of tile key `key`'s K row (kv = 0) or V row (kv = 1).
  const auto piece_offset = [](int kv, int key, int chunk) {
    if constexpr (SWIZZLED)
      return kv * (kStageBytes / 2) + ((key / kWarpKeys) * kBoxes + chunk / 8) * kBoxBytes + (key % kWarpKeys) * 128 +
             ((chunk % 8) ^ (key % 8)) * 16;
    else
      return (kv * kTileKeys + key) * kRowBytes + chunk * 16;
  };

  // Zero the lanes past the head in every stage: copies read and write only live pieces. (Until session 25 the
  // 8-row kernels at 128 lanes zero-filled the others instead, as that measured faster in session 20; since whole
  // tiles have their own copy loop (session 21) skipping is faster there too: cuda_fused at GQA 8, batch 1 and 8,
  // took 1.3-2.8% less time, everything else within noise; reports/gpu/issue8-perf.md, session 25.) Padded: this
  // warp's rows, with the same lane-to-piece map as the copies, so each address is written by one thread in
  // program order (always done: the 16-byte row padding is never written). Swizzled: only when head_dim < LANES,
  // every byte of the stages, fenced before any tensor copy writes them.
  if constexpr (SWIZZLED) {
    if (head_dim < LANES) {
      for (int i = threadIdx.x; i < STAGES * kStageBytes / 16; i += kThreads)
        reinterpret_cast<uint4*>(kv_tiles)[i] = make_uint4(0, 0, 0, 0);
      fence_shared_for_tensor_copies();
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
  const int first_block = block_div.quotient(item.key_begin);
  const int table_count = block_div.quotient(item.key_end - 1) - first_block + 1;
  const bool table_staged = table_count <= TABLE;
  const std::int32_t* const table = batch.block_tables + seq.table_offset;
  if (table_staged)
    for (int i = threadIdx.x; i < table_count; i += kThreads) table_s[i] = table[first_block + i];
  if (tensor_copies) {
    if (lane < STAGES) barrier_init(&barriers[lane * kWarps + warp], 1);  // lane 0's arrival + the copies' bytes
    barrier_init_fence();
  }
  copy_async_wait<0>();  // this thread's pieces of the queries
  __syncthreads();

  const int live_chunks = head_dim * 2 / 16;
  const std::size_t kv_head_stride = static_cast<std::size_t>(head_dim) * 2;  // bytes per (slot, head)
  const unsigned char* const k_pool = static_cast<const unsigned char*>(batch.k_pool);
  const unsigned char* const v_pool = static_cast<const unsigned char*>(batch.v_pool);
  const int num_tiles = (item.key_end - item.key_begin + tile - 1) / tile;
  // This warp's keys of tile i that lie in the item: a prefix of its 16, the same in every tile but the item's
  // last (16, or 0 for a warp past a tile shorter than 64 keys).
  const auto warp_live_keys = [&](int i) {
    return min(max(min(tile, item.key_end - (item.key_begin + i * tile)) - warp * kWarpKeys, 0), kWarpKeys);
  };
  // Slot row (physical block x block_size + slot) of this warp's key `key` of tile i, through the block table.
  const auto slot_row = [&](int i, int key) {
    int logical_block, slot;
    block_div.divmod(item.key_begin + i * tile + warp * kWarpKeys + key, logical_block, slot);
    const unsigned physical = table_staged ? table_s[logical_block - first_block] : __ldg(table + logical_block);
    return physical * batch.block_size + slot;
  };
  // A lane's pieces of a tile: piece lane + 32 c is chunk lane % kChunksPerRow of key lane / kChunksPerRow +
  // c kKeysPerCopy, so its chunk, and where that chunk starts in a row of the pools, are the same in every copy.
  static_assert(32 % kChunksPerRow == 0, "a copy instruction covers whole rows");
  constexpr int kKeysPerCopy = 32 / kChunksPerRow;
  const int copy_chunk = lane % kChunksPerRow, copy_first_key = lane / kChunksPerRow;
  const unsigned char* const k_chunk = k_pool + copy_chunk * 16;
  const unsigned char* const v_chunk = v_pool + copy_chunk * 16;
  const unsigned row_stride = static_cast<unsigned>(head_dim) * 2;  // bytes per (slot, head)
  // 16-byte asynchronous copies of this warp's K and V rows of tile i. Lane k < 16 looks up key k; the lanes share
  // the vector indices by shuffle. Keys past the item are zero-filled, never read from the pools.
  const auto copy_rows_async = [&](int i) {
    unsigned char* const stage = kv_tiles + (i % STAGES) * kStageBytes;
    const int live_keys = warp_live_keys(i);
    const unsigned looked_up =
        lane < live_keys ? static_cast<unsigned>(slot_row(i, lane)) * batch.num_kv_heads + kv_head : 0u;
    // A whole tile of whole rows (at tile = 64 and head_dim = LANES, every tile but an item's last): every piece
    // is read, so a copy's addresses are one multiply-add from its key's row and a swizzled offset, with no
    // zero-fill predicate. This is the loop's bulk: in the SASS of the 4-row wide kernel the general form below
    // took about 190 of the loop's 544 instructions a tile, this one about 90 (reports/gpu/issue8-perf.md,
    // session 21).
    if (live_keys == kWarpKeys && live_chunks == kChunksPerRow) {
#pragma unroll
      for (int c = 0; c < kCopiesPerLane; ++c) {
        const int key = copy_first_key + c * kKeysPerCopy;
        const unsigned row = __shfl_sync(0xffffffffu, looked_up, key);
        unsigned char* const dst = stage + piece_offset(0, warp * kWarpKeys + key, copy_chunk);
        const unsigned char* const k_src = k_chunk + static_cast<std::size_t>(row) * row_stride;
        const unsigned char* const v_src = v_chunk + static_cast<std::size_t>(row) * row_stride;
        if constexpr (COPIES == TileCopies::async_evict_first) {
          copy_async_16_evict_first(dst, k_src);
          copy_async_16_evict_first(dst + kStageBytes / 2, v_src);
        } else {
          copy_async_16(dst, k_src, 16);
          copy_async_16(dst + kStageBytes / 2, v_src, 16);
        }
      }
      copy_async_commit();
      return;
    }
#pragma unroll
    for (int c = 0; c < kCopiesPerLane; ++c) {
      const int piece = lane + 32 * c;
      const int key = piece / kChunksPerRow, chunk = piece % kChunksPerRow;
      const std::size_t src = static_cast<std::size_t>(__shfl_sync(0xffffffffu, looked_up, key)) * kv_head_stride;
      if (chunk >= live_chunks) continue;
      const bool live = key < live_keys;
      copy_async_16(stage + piece_offset(0, warp * kWarpKeys + key, chunk), k_pool + (live ? src + chunk * 16 : 0),
                    live ? 16 : 0);
      copy_async_16(stage + piece_offset(1, warp * kWarpKeys + key, chunk), v_pool + (live ? src + chunk * 16 : 0),
                    live ? 16 : 0);
    }
    copy_async_commit();
  };
  // Starts the copies of this warp's keys of tile i.
  const auto load_tile = [&](int i) {
    if (!tensor_copies) return copy_rows_async(i);
    // Lane 0 copies the 16 slots' K and V boxes (lanes past head_dim read as zeros) and announces their bytes; a
    // warp with no keys here still arrives, so that every phase completes. Dead rows are zeroed on arrival.
    if (lane == 0) {
      unsigned char* const stage = kv_tiles + (i % STAGES) * kStageBytes;
      std::uint64_t* const barrier = &barriers[(i % STAGES) * kWarps + warp];
      const int boxes = warp_live_keys(i) > 0 ? (head_dim + kTensorCopyLanes - 1) / kTensorCopyLanes : 0;
      barrier_arrive_expecting(barrier, static_cast<unsigned>(boxes * 2 * kBoxBytes));
      if (boxes > 0) {
        const int first_row = static_cast<int>(slot_row(i, 0));
        for (int b = 0; b < boxes; ++b) {
          unsigned char* const k_box = stage + piece_offset(0, warp * kWarpKeys, 8 * b);
          tensor_copy(k_box, maps.k, b * kTensorCopyLanes, kv_head, first_row, barrier);
          tensor_copy(k_box + kStageBytes / 2, maps.v, b * kTensorCopyLanes, kv_head, first_row, barrier);
        }
      }
    }
  };
  // Tile i is in shared memory for this warp: this thread's asynchronous copies have landed, or its tensor copies
  // have (the rows of keys past the item zeroed, as the asynchronous copies zero-fill them: a 0 weight times stale
  // or poisoned V would be NaN).
  const auto wait_for_tile = [&](int i) {
    if (!tensor_copies) {
      copy_async_wait<STAGES - 1>();  // tiles i + 1 .. i + STAGES - 1 may still be in flight
      return;
    }
    barrier_wait(&barriers[(i % STAGES) * kWarps + warp], (i / STAGES) & 1);
    const int live_keys = warp_live_keys(i);
    if (live_keys < kWarpKeys) {
      unsigned char* const stage = kv_tiles + (i % STAGES) * kStageBytes;
      const int pieces = (kWarpKeys - live_keys) * kChunksPerRow;
      for (int p = lane; p < 2 * pieces; p += 32) {  // K's dead rows, then V's
        const int kv = p / pieces, key = live_keys + p % pieces / kChunksPerRow, chunk = p % kChunksPerRow;
        *reinterpret_cast<uint4*>(stage + piece_offset(kv, warp * kWarpKeys + key, chunk)) = make_uint4(0, 0, 0, 0);
      }
      // A row dead here is dead in every later tile of the item (see warp_live_keys): no tensor copy writes it
      // again, and the fence orders these stores before any that did.
      fence_shared_for_tensor_copies();
    }
  };

  // The state of rows 2t + e (e = 0, 1): the running max (the same in every thread of the row), this thread's
  // share of the denominator (the weights of its own keys), and its accumulator lanes 16 j + g and 16 j + g + 8 as
  // acc[e].o[2 j] and acc[e].o[2 j + 1].
  float run_max[2] = {-INFINITY, -INFINITY}, run_den[2] = {0.0f, 0.0f};
  OnlineSoftmaxState<2 * kLaneBlocks> acc[2];
  acc[0].init(2 * kLaneBlocks);
  acc[1].init(2 * kLaneBlocks);

  // Every stage starts filling; afterwards a warp refills the stage of each tile it has folded (below).
#pragma unroll
  for (int s = 0; s < STAGES; ++s) {
    if (s < num_tiles) load_tile(s);
    else if (!tensor_copies) copy_async_commit();  // empty commit groups keep the wait count uniform
  }

  // Row g's q as mma B fragments of the scores (N columns: the block's rows, zero past them):
  // qb[s] = dims 16 s + 2t, + 1 and 16 s + 8 + 2t, + 1 (little-endian: the lower dim in the low half, as pack_bf16
  // places the lower index), read from the staged rows once the first copies are on their way.
  unsigned qb[kHeadSteps][2];
#pragma unroll
  for (int s = 0; s < kHeadSteps; ++s)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      qb[s][h] = g < ROWS ? *reinterpret_cast<const unsigned*>(queries_s + g * kRowBytes + (16 * s + 8 * h + 2 * t) * 2)
                          : 0u;

  // ldmatrix row addresses. K and V are both A operands (16 M rows): K of the scores (matrices: keys 0-7 | 8-15 x
  // dims lo, then the same x dims hi of a head step), V of the values transposed (matrices: keys 0-7 x lanes lo |
  // hi, then keys 8-15, of a 16-lane block). A lane's key is fixed, and its piece of step or lane block n is
  // 2 n + x, x = 0 or 1. Swizzled, piece c of key k sits at (c % 8) ^ (k % 8) in box c / 8 = n / 4, and since
  // 2 n % 8 is even, (2 n % 8 + x) ^ (k % 8) = (2 n % 8) ^ (x ^ k % 8): a per-lane term XORed with a constant of
  // the (unrolled) n.
  const int k_matrix_key = warp * kWarpKeys + 8 * ((lane / 8) % 2) + lane % 8, k_matrix_piece = lane / 16;
  const int v_matrix_key = warp * kWarpKeys + 8 * (lane / 16) + lane % 8, v_matrix_piece = (lane / 8) % 2;
  struct MatrixRow {
    int start;      // swizzled: where the key's row starts; padded: where the lane's piece of n = 0 is
    int piece_xor;  // swizzled: (x ^ key % 8) * 16
  };
  const auto matrix_row = [&](int kv, int key, int piece) {
    if constexpr (SWIZZLED) return MatrixRow{piece_offset(kv, key, 0) - (key % 8) * 16, (piece ^ (key % 8)) * 16};
    else return MatrixRow{piece_offset(kv, key, piece), 0};
  };
  const MatrixRow k_row = matrix_row(0, k_matrix_key, k_matrix_piece);
  const MatrixRow v_row = matrix_row(1, v_matrix_key, v_matrix_piece);
  const auto matrix_offset = [&](const MatrixRow& r, int n) {
    if constexpr (SWIZZLED) return r.start + (n / 4) * kBoxBytes + ((32 * (n % 4)) ^ r.piece_xor);
    else return r.start + 32 * n;
  };

  for (int i = 0; i < num_tiles; ++i) {
    const int t0 = item.key_begin + i * tile;
    wait_for_tile(i);
    __syncwarp();  // every lane's copies of tile i are in
    const unsigned char* const stage = kv_tiles + (i % STAGES) * kStageBytes;

    // Scores transposed, S^T = K Q^T: the warp's 16 keys are the M rows, the block's rows the N columns.
    // s[2 k + e] is key warp * 16 + g + 8 k of row 2t + e.
    float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int step = 0; step < kHeadSteps; ++step) {
      if (16 * step >= head_dim) break;  // zero lanes past the head: no mma at all, not exact zeros added
      unsigned a[4];
      load_matrices_x4(a, stage + matrix_offset(k_row, step));
      mma_bf16_16x8x16(s[0], s[1], s[2], s[3], a[0], a[1], a[2], a[3], qb[step][0], qb[step][1]);
    }
    float score[2][2];  // [e][k]: row 2t + e, key warp * 16 + g + 8 k
    float thread_max[2];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int row_keys = max(0, min(row_end[e] - t0, tile));  // keys of this tile the row attends to: a prefix
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        // Select, not multiply: a masked key's score is -inf whatever its K holds.
        score[e][k] = warp * kWarpKeys + g + 8 * k < row_keys ? s[2 * k + e] * batch.scale : -INFINITY;
      }
      // The row's max over the warp's keys: over this thread's two, then over the 8 threads of its t.
      thread_max[e] = fmaxf(score[e][0], score[e][1]);
      thread_max[e] = fmaxf(thread_max[e], __shfl_xor_sync(0xffffffffu, thread_max[e], 4));
      thread_max[e] = fmaxf(thread_max[e], __shfl_xor_sync(0xffffffffu, thread_max[e], 8));
      thread_max[e] = fmaxf(thread_max[e], __shfl_xor_sync(0xffffffffu, thread_max[e], 16));
    }
    float* const tile_max_par = tile_max_s + (i & 1) * kWarps * 8;
    if (g == 0) *reinterpret_cast<float2*>(tile_max_par + warp * 8 + 2 * t) = make_float2(thread_max[0], thread_max[1]);
    // Every warp's maxima are in (the other parity's slots are rewritten only after the next barrier, once
    // everyone has read them).
    __syncthreads();
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float2 m = *reinterpret_cast<const float2*>(tile_max_par + w * 8 + 2 * t);
      tile_max[0] = fmaxf(tile_max[0], m.x);
      tile_max[1] = fmaxf(tile_max[1], m.y);
    }
    // A tile fully masked for a row changes nothing of its state: its factor is 1 (0 on the empty state, whose sums
    // are 0) and its weights below are all 0. No early exit and no branch: mma.sync needs every lane of the warp,
    // the warp's other rows may have keys here, and the exps of a thread's two rows and four weights, each chosen
    // on its argument, run side by side (cuda_fused took 15-23% less time at batch 1-8 than with a branch around
    // each; session 21).
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const float alpha = raise_running_max(run_max[e], run_den[e], tile_max[e]);
      acc[e].scale_lanes(alpha, 2 * kLaneBlocks);
    }

    // Weights and their share of the denominator in key order, split into bf16 hi + lo.
    SplitWeight w[2][2];
#pragma unroll
    for (int e = 0; e < 2; ++e)
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        const float p = key_weight(score[e][k], run_max[e]);
        run_den[e] += p;
        w[e][k] = split_weight(p);
      }
    // P^T as the B operand of the values (K: the warp's 16 keys, N: the rows) wants row g's keys 2t, 2t + 1 |
    // 2t + 8, 2t + 9; this thread holds keys g | g + 8 of rows 2t, 2t + 1, the transposed 8x8 fragments.
    const unsigned p_hi0 = transpose_8x8(pack_bf16(w[0][0].hi, w[1][0].hi));
    const unsigned p_hi1 = transpose_8x8(pack_bf16(w[0][1].hi, w[1][1].hi));
    const unsigned p_lo0 = transpose_8x8(pack_bf16(w[0][0].lo, w[1][0].lo));
    const unsigned p_lo1 = transpose_8x8(pack_bf16(w[0][1].lo, w[1][1].lo));

    // Values transposed, O^T += V^T P^T over the warp's 16 keys, hi then lo: lane block j's 16 lanes are the M
    // rows, the block's rows the N columns.
#pragma unroll
    for (int j = 0; j < kLaneBlocks; ++j) {
      if (16 * j >= head_dim) break;
      unsigned a[4];
      load_matrices_x4_transposed(a, stage + matrix_offset(v_row, j));
      float& o0 = acc[0].o[2 * j];      // lane 16 j + g,     row 2t
      float& o1 = acc[1].o[2 * j];      // lane 16 j + g,     row 2t + 1
      float& o2 = acc[0].o[2 * j + 1];  // lane 16 j + g + 8, row 2t
      float& o3 = acc[1].o[2 * j + 1];  // lane 16 j + g + 8, row 2t + 1
      mma_bf16_16x8x16(o0, o1, o2, o3, a[0], a[1], a[2], a[3], p_hi0, p_hi1);
      mma_bf16_16x8x16(o0, o1, o2, o3, a[0], a[1], a[2], a[3], p_lo0, p_lo1);
    }

    // Tile i + STAGES into the stage tile i leaves, issued now rather than after the next wait, so that STAGES
    // tiles are in flight while the warp waits for tile i + 1 (about 1% faster for the fused kernel at batch 256,
    // 8k, and at batch 64 with GQA 8: reports/gpu/issue8-perf.md, session 17).
    __syncwarp();  // every lane is done with tile i's stage
    if (i + STAGES < num_tiles) load_tile(i + STAGES);
    else if (!tensor_copies) copy_async_commit();
  }

  // The warps' sums meet in shared memory (the K/V space is free once every warp is past its last tile).
  copy_async_wait<0>();
  __syncthreads();
  constexpr int kSummedRow = summed_row_floats(LANES);
  float* const group_acc = reinterpret_cast<float*>(kv_tiles);  // [kWarps][ROWS][kSummedRow]
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    // The row's denominator share over the 8 threads of its t: the same bits in each of them.
    run_den[e] += __shfl_xor_sync(0xffffffffu, run_den[e], 4);
    run_den[e] += __shfl_xor_sync(0xffffffffu, run_den[e], 8);
    run_den[e] += __shfl_xor_sync(0xffffffffu, run_den[e], 16);
    const int r = 2 * t + e;
    if (r >= ROWS) continue;
    float* const row_acc = group_acc + (warp * ROWS + r) * kSummedRow;
#pragma unroll
    for (int j = 0; j < kLaneBlocks; ++j) {
      row_acc[16 * j + g] = acc[e].o[2 * j];
      row_acc[16 * j + g + 8] = acc[e].o[2 * j + 1];
    }
    if (g == 0) {
      den_s[warp * ROWS + r] = run_den[e];
      if (warp == 0) max_s[r] = run_max[e];
    }
  }
  __syncthreads();
  write_item_result<__nv_bfloat16, ROWS, LANES, kWarps, kThreads, kSummedRow>(batch, plan, work, group_acc, den_s,
                                                                              max_s);
}

// --- launching --------------------------------------------------------------------------------------------------

template <int LANES, int ROWS, int STAGES, int TABLE, bool SWIZZLED,
          tensor_core::TileCopies COPIES = SWIZZLED ? tensor_core::TileCopies::tensor : tensor_core::TileCopies::async>
using TensorCoreLayout =
    AttentionLauncher<tensor_core_attention_kernel<LANES, ROWS, STAGES, TABLE, SWIZZLED, COPIES>, __nv_bfloat16,
                      LANES, ROWS, tensor_core::kThreads,
                      tensor_core::shared_layout(LANES, ROWS, STAGES, TABLE, SWIZZLED).total, /*TENSOR_MAPS=*/true,
                      /*ENCODE_MAPS=*/COPIES == tensor_core::TileCopies::tensor>;

// Three 64-key tiles in shared memory (32 KB each at 128 lanes) leave room for two blocks per multiprocessor
// (the deep layout of paged_attention.h); at 256 lanes two tiles take one multiprocessor's worth. Measured against
// the alternatives in cuda/bench (--layouts; reports/gpu/issue8-perf.md).
template <int LANES>
inline constexpr int kTensorCoreStages = LANES >= 256 ? 2 : 3;

// The copies of a production layout (paged_attention.h; reports/gpu/issue8-perf.md, session 20):
//   128 lanes: async, in the deep and wide layouts (async_evict_first in the one-wave layout: session 27). Against
//     the copies before (K by tensor copies, V too within one wave)
//     cuda_fused ran 9-13% faster at GQA 4 and batch 1-8, 4-5% at GQA 4 and batch 64, 3-4% at GQA 8 and batch 1-8;
//     cuda_splitk at batch 1, 32k 1.6-6.6% (GQA 4) and 1.4-5.1% (GQA 8);
//   64 and 256 lanes: tensor (not measured otherwise);
//   32 lanes: async (the padded layout: its rows are narrower than the swizzle).
constexpr tensor_core::TileCopies production_copies(int lanes) {
  return lanes == 128 || lanes < kTensorCopyLanes ? tensor_core::TileCopies::async : tensor_core::TileCopies::tensor;
}

// 64 lanes and wider: the swizzled layout (the 32-lane rows are narrower than the swizzle).
template <int LANES, int ROWS>
using ProductionTensorCoreLayout = TensorCoreLayout<LANES, ROWS, kTensorCoreStages<LANES>, layout::kTableEntries,
                                                    (LANES >= kTensorCopyLanes), production_copies(LANES)>;
// The wide layout at 128 lanes: two tiles (64 KB) and the whole staged table, 73 KB: three blocks per
// multiprocessor.
template <int ROWS>
using WideTensorCoreLayout = TensorCoreLayout<128, ROWS, 2, layout::kTableEntries, true, production_copies(128)>;
// The wide layout with a whole tile's K and V copies under an L2 evict-first policy: production's choice for grids
// of one wave (paged_attention.h).
template <int ROWS>
using WideEvictFirstTensorCoreLayout =
    TensorCoreLayout<128, ROWS, 2, layout::kTableEntries, true, tensor_core::TileCopies::async_evict_first>;
// The wide layout with K and V by tensor copies (sessions 13-19's layout for grids within one wave): kept for
// pinning (tests, benchmark), no longer a production choice.
template <int ROWS>
using WideKvTmaTensorCoreLayout =
    TensorCoreLayout<128, ROWS, 2, layout::kTableEntries, true, tensor_core::TileCopies::tensor>;
static_assert(tensor_core_min_blocks<128, 8, 2, layout::kTableEntries, true>() == 3, "the wide layout fits three");
static_assert(tensor_core_min_blocks<128, 8, 3, layout::kTableEntries, true>() == 2, "the deep layout fits two");

}  // namespace pacheck::cuda::kernels
