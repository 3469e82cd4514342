// The CUDA-core attention kernel: fp32 fused multiply-adds for every storage type and head dim the tensor-core kernel
// does not take (fp32; fp16 and bf16 with head dims not a multiple of 8). C++17 CUDA.
//
// A block of kCudaCoreThreads threads holds all of its ROWS rows. Thread (dim chunk c, key group g) owns head lanes
// [8c, 8c + 8) of every row and the keys t of each tile with t % key_groups == g; it copies those lanes of its keys'
// K and V rows into shared memory (16-byte asynchronous copies, STAGES tiles in flight) and reads back only what it
// copied, so a tile needs no barrier before use. Per tile:
//   scores   partial dot products of the thread's keys with its rows (q in registers), summed over the key's dim
//            chunks by a butterfly of shuffles; each thread's largest score per row goes to shared memory;
//   (barrier: the one per tile)
//   weights  each row's tile max from the key groups' maxima; the rescale factor and the keys' weights, computed by
//            the row's holders and shuffled to the others;
//   values   o += p v over the thread's keys for its lanes of its rows; the holders add the weights to their share
//            of the denominator.
// At the end epilogue.cuh adds the key groups' sums in group order.
//
// Arithmetic (the error models of cuda_variants.cpp): a logit is fp32 fused multiply-adds in lane order, a butterfly
// sum over the dim chunks (padding adds exact zeros), one multiply by the scale: within gamma_{head_dim} plus the
// scale's rounding. Weights: the exact tile max, raise_running_max (exactly 1 where a finite max stays) and
// key_weight (exactly 0 for a masked key), CUDA's expf (2 ulp), no fast-math intrinsics. Sums: each key group
// accumulates p v (and p) in position order. Masked keys never reach a multiply (score -inf, weight 0, the value
// loop skips them); keys outside the item are never loaded (their rows zero-filled), nor their table entries read.
// Logit options after the scale in fp32 (block_work.cuh); a window sets each row's first key; a sink joins in the
// epilogue.
#pragma once

#include <cstdint>

#include "cuda/block_work.cuh"
#include "cuda/epilogue.cuh"
#include "cuda/fast_divmod.h"
#include "cuda/launch_rules.h"
#include "cuda/paged_attention.h"
#include "cuda/ptx.cuh"
#include "cuda/storage.cuh"
#include "variants/online_softmax.h"

namespace pacheck::cuda::kernels {

__host__ __device__ constexpr int log2_of(int x) { return x <= 1 ? 0 : 1 + log2_of(x / 2); }

// The ROWS partial dot products of one key over the LANES_PER_KEY lanes holding its dim chunks, summed by a
// butterfly (xor distances LANES_PER_KEY/2, ..., 1); while more than one value is live each step halves them (a lane
// keeps one half, sends the other, adds its partner's). Then every lane holds kHeld dot products, rows
// [first_held_row, + kHeld), lanes differing only in the non-halving steps' bits the same rows (the holder: those bits
// zero). Each sum is formed in one lane or symmetrically in two (addition commutes): every holder has the same bits.
template <int ROWS, int LANES_PER_KEY>
struct KeyButterfly {
  static constexpr int kSteps = log2_of(LANES_PER_KEY);
  static constexpr int kHalvings = log2_of(ROWS) < kSteps ? log2_of(ROWS) : kSteps;
  static constexpr int kHeld = ROWS >> kHalvings;
  static constexpr int kDuplicateBits = (LANES_PER_KEY >> kHalvings) - 1;  // zero in holders

  // BUG butterfly_width_too_narrow: each shuffle's width is its xor distance (a partner past it gives its own value).
  template <GpuBug BUG = GpuBug::none>
  __device__ static void reduce(float (&v)[ROWS], int lane) {
    constexpr bool kNarrow = BUG == GpuBug::butterfly_width_too_narrow;
#pragma unroll
    for (int step = 0; step < kSteps; ++step) {
      const int mask = LANES_PER_KEY >> (step + 1);
      if (step < kHalvings) {
        const int half = ROWS >> (step + 1);
        const bool upper = (lane & mask) != 0;
#pragma unroll
        for (int i = 0; i < half; ++i) {
          const float send = upper ? v[i] : v[i + half];
          const float keep = upper ? v[i + half] : v[i];
          v[i] = keep + __shfl_xor_sync(0xffffffffu, send, mask, kNarrow ? mask : 32);
        }
      } else {
        v[0] += __shfl_xor_sync(0xffffffffu, v[0], mask, kNarrow ? mask : 32);
      }
    }
  }
  __device__ static int first_held_row(int lane) {
    int row = 0;
#pragma unroll
    for (int h = 1; h <= kHalvings; ++h)
      if (lane & (LANES_PER_KEY >> h)) row += ROWS >> h;
    return row;
  }
  // The lane (counted within the key's lanes) that holds row r, as slot r % kHeld.
  __host__ __device__ static constexpr int holder(int r) {
    int lane = 0;
    for (int h = 1; h <= kHalvings; ++h)
      if ((r >> (log2_of(ROWS) - h)) & 1) lane |= LANES_PER_KEY >> h;
    return lane;
  }
};

namespace cuda_core {

// Tile rows padded by 16 bytes: the two keys a warp reads at once fall in different banks.
__host__ __device__ constexpr int row_bytes(int lanes, int element_bytes) { return lanes * element_bytes + 16; }

struct SharedLayout {
  int kv;        // K tiles, V tiles; after the last tile, the key groups' accumulators
  int table;     // staged block-table entries
  int tile_max;  // [2][rows][key_groups] fp32: each key group's largest score per row, by tile parity
  int row_sums;  // [key_groups][rows] denominators, then [rows] maxima
  int total;
};
template <typename T, int LANES, int ROWS>
__host__ __device__ constexpr SharedLayout shared_layout() {
  constexpr int element_bytes = sizeof(T);
  constexpr int groups = cuda_core_key_groups(LANES);
  constexpr int tile_keys = cuda_core_tile_keys(LANES, element_bytes);
  SharedLayout s{};
  const int kv = cuda_core_stages(ROWS) * 2 * tile_keys * row_bytes(LANES, element_bytes);
  const int sums = groups * ROWS * LANES * 4;
  s.kv = 0;
  s.table = round_up(kv > sums ? kv : sums, 16);
  s.tile_max = s.table + kTableEntries * 4;
  s.row_sums = s.tile_max + 2 * ROWS * groups * 4;
  s.total = s.row_sums + round_up((groups + 1) * ROWS * 4, 16);
  return s;
}

}  // namespace cuda_core

// Blocks per multiprocessor the registers must allow: as many as shared memory fits (up to 4) for 4 rows, 2 for 8.
template <typename T, int LANES, int ROWS>
constexpr int cuda_core_min_blocks() {
  if (ROWS > 4) return 2;
  const int shared = cuda_core::shared_layout<T, LANES, ROWS>().total + 1024;
  const int fit = 227 * 1024 / shared;
  return fit < 2 ? 2 : fit > 4 ? 4 : fit;
}

// BUG split_start_rounded_up: a split item starts at its first whole KV block, skipping the keys before it.
template <GpuBug BUG>
__device__ inline BlockWork with_bug(BlockWork work, int block_size) {
  if constexpr (BUG == GpuBug::split_start_rounded_up)
    work.item.key_begin = min(round_up(work.item.key_begin, block_size), work.item.key_end);
  return work;
}

template <typename T, int LANES, int ROWS, GpuBug BUG = GpuBug::none>
__global__ void __launch_bounds__(kCudaCoreThreads, cuda_core_min_blocks<T, LANES, ROWS>())
    cuda_core_attention_kernel(const DeviceBatch batch, const DevicePlan plan, const FastDivmod block_div) {
  using Ops = StorageOps<T>;
  constexpr int LPT = kCudaCoreLanesPerThread;
  constexpr int TILE_KEYS = cuda_core_tile_keys(LANES, sizeof(T));
  constexpr int STAGES = cuda_core_stages(ROWS);
  constexpr int kElement = sizeof(T);
  constexpr int kRowBytes = cuda_core::row_bytes(LANES, kElement);
  constexpr int kLanesPerKey = LANES / LPT;
  constexpr int kKeyGroups = cuda_core_key_groups(LANES);
  constexpr int kKeysPerThread = TILE_KEYS / kKeyGroups;   // per tile
  constexpr int kChunkBytes = LPT * kElement;  // a thread's lanes of one K or V row
  constexpr int kCopiesPerChunk = kChunkBytes / 16;
  constexpr cuda_core::SharedLayout kShared = cuda_core::shared_layout<T, LANES, ROWS>();
  static_assert(LPT % 8 == 0 && LANES % LPT == 0 && kLanesPerKey <= 32, "whole 8-lane loads, a key within a warp");
  using Butterfly = KeyButterfly<ROWS, kLanesPerKey>;
  constexpr int kHeld = Butterfly::kHeld;
  static_assert(TILE_KEYS % kKeyGroups == 0, "every key group takes the same number of keys per tile");
  static_assert(kRowBytes % 16 == 0 && kChunkBytes % 16 == 0, "copies are 16 bytes");
  static_assert(STAGES >= 2, "one tile is folded while the next ones land");

  extern __shared__ __align__(16) unsigned char shared[];
  unsigned char* const kv_tiles = shared + kShared.kv;
  int* const table_s = reinterpret_cast<int*>(shared + kShared.table);
  float* const tile_max_s = reinterpret_cast<float*>(shared + kShared.tile_max);  // [2][ROWS][kKeyGroups]
  float* const den_s = reinterpret_cast<float*>(shared + kShared.row_sums);       // [kKeyGroups][ROWS]
  float* const max_s = den_s + kKeyGroups * ROWS;                                 // [ROWS]

  ptx::allow_dependent_launch();  // a split-K merge may start preparing now
  const BlockWork work = with_bug<BUG>(load_block_work(batch, plan), batch.block_size);
  const WorkItem& item = work.item;
  const int kv_head = work.kv_head;
  const SequenceMeta& seq = work.seq;
  const int head_dim = batch.head_dim;
  const int gqa = work.gqa;
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int dim_chunk = tid % kLanesPerKey;
  const int key_group = tid / kLanesPerKey;
  const int key_lane0 = lane - dim_chunk;  // the warp lane of this key's dim chunk 0
  const bool holds_rows = (dim_chunk & Butterfly::kDuplicateBits) == 0;
  const int first_held_row = Butterfly::first_held_row(dim_chunk);
  const int tile = max(1, min(plan.tile_size, TILE_KEYS));
  const int first_position = work.first_position;

  // Row r attends to keys [row_begin, row_end): from the item's first or its window's start to its position + 1.
  int row_end[ROWS], row_begin[ROWS];
  int begin_max = item.key_begin;  // the present rows' latest row_begin: every row sees the keys from here on
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const int token = (item.first_row + r) / gqa;
    row_end[r] = r < item.num_rows ? min(first_position + token + 1, item.key_end) : item.key_begin;
    row_begin[r] = row_first_key(batch, work, r);
    if (r < item.num_rows) begin_max = max(begin_max, row_begin[r]);
  }
  // The first keys, ALiBi slopes and positions of the rows the lane holds (it scores those only).
  const bool logit_arithmetic = has_logit_arithmetic(batch);
  float held_slope[kHeld];
  int held_position[kHeld], held_begin[kHeld];
#pragma unroll
  for (int h = 0; h < kHeld; ++h) {
    held_slope[h] = row_alibi_slope(batch, work, first_held_row + h);
    held_position[h] = row_position(work, first_held_row + h);
    held_begin[h] = row_first_key(batch, work, first_held_row + h);
  }

  // This thread's lanes of q for its rows, in fp32 registers (zero past the head and for absent rows).
  float q[ROWS][LPT];
  const T* const queries = static_cast<const T*>(batch.queries);
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const int row = item.first_row + r;
    const std::size_t query_row = static_cast<std::size_t>(seq.query_row_offset + row / gqa);
    const std::size_t base = (query_row * batch.num_query_heads + kv_head * gqa + row % gqa) * head_dim;
#pragma unroll
    for (int j = 0; j < LPT; ++j) {
      const int lane_j = dim_chunk * LPT + j;
      q[r][j] = r < item.num_rows && lane_j < head_dim ? Ops::to_float(queries[base + lane_j]) : 0.0f;
    }
  }

  // Zero the chunks this thread copies in every stage (lanes past the head stay zero); stage the block table.
#pragma unroll
  for (int kv = 0; kv < 2; ++kv) {
    for (int s = 0; s < STAGES; ++s)
#pragma unroll
      for (int k = 0; k < kKeysPerThread; ++k)
#pragma unroll
        for (int c = 0; c < kCopiesPerChunk; ++c)
          *reinterpret_cast<uint4*>(kv_tiles +
                                    ((kv * STAGES + s) * TILE_KEYS + key_group + k * kKeyGroups) * kRowBytes +
                                    dim_chunk * kChunkBytes + c * 16) = make_uint4(0, 0, 0, 0);
  }
  const int first_block = block_div.quotient(item.key_begin);
  const int table_count = block_div.quotient(item.key_end - 1) - first_block + 1;
  const bool table_staged = table_count <= kTableEntries;
  const std::int32_t* const table = batch.block_tables + seq.table_offset;
  if (table_staged)
    for (int i = tid; i < table_count; i += kCudaCoreThreads) table_s[i] = table[first_block + i];
  __syncthreads();

  const bool vector_copy = (head_dim * kElement) % 16 == 0;
  const int row_bytes_live = head_dim * kElement;
  const std::size_t kv_head_stride = static_cast<std::size_t>(head_dim) * kElement;  // bytes per (slot, head)
  const unsigned char* const k_pool = static_cast<const unsigned char*>(batch.k_pool);
  const unsigned char* const v_pool = static_cast<const unsigned char*>(batch.v_pool);
  const int num_tiles = (item.key_end - item.key_begin + tile - 1) / tile;

  // Key `position`'s (block, slot, kv_head) vector index: 32 bits (launch_attention checks), its byte offset maybe not.
  const auto vector_index = [&](int position) {
    int logical_block, slot;
    block_div.divmod(position, logical_block, slot);
    const unsigned physical = table_staged ? table_s[logical_block - first_block] : __ldg(table + logical_block);
    return (physical * batch.block_size + slot) * batch.num_kv_heads + kv_head;
  };
  static_assert(kKeysPerThread <= kLanesPerKey, "each of a key group's keys is looked up by one of its lanes");

  // Starts copying this thread's chunks of its keys of tile i; keys past the item or the tile are zero-filled.
  const auto load_tile = [&](int i) {
    const int t0 = item.key_begin + i * tile;
    const int count = min(tile, item.key_end - t0);
    unsigned char* const k_stage = kv_tiles + (i % STAGES) * TILE_KEYS * kRowBytes;
    unsigned char* const v_stage = k_stage + STAGES * TILE_KEYS * kRowBytes;
    // A key group's lanes copy the same keys: lane k looks up key k and shares the index.
    unsigned looked_up = 0;
    if (dim_chunk < kKeysPerThread && key_group + dim_chunk * kKeyGroups < count)
      looked_up = vector_index(t0 + key_group + dim_chunk * kKeyGroups);
#pragma unroll
    for (int k = 0; k < kKeysPerThread; ++k) {
      const int t = key_group + k * kKeyGroups;
      const int dst = t * kRowBytes + dim_chunk * kChunkBytes;
      const bool live = t < count;
      const std::size_t src =
          static_cast<std::size_t>(__shfl_sync(0xffffffffu, looked_up, key_lane0 + k)) * kv_head_stride;
      if (vector_copy) {
#pragma unroll
        for (int c = 0; c < kCopiesPerChunk; ++c) {
          const int byte = dim_chunk * kChunkBytes + c * 16;
          if (byte >= row_bytes_live) break;
          ptx::copy_async_16(k_stage + dst + c * 16, k_pool + (live ? src + byte : 0), live ? 16 : 0);
          ptx::copy_async_16(v_stage + dst + c * 16, v_pool + (live ? src + byte : 0), live ? 16 : 0);
        }
      } else {  // rows that are not a multiple of 16 bytes: element by element
#pragma unroll
        for (int j = 0; j < LPT; ++j) {
          const int lane_j = dim_chunk * LPT + j;
          if (lane_j >= head_dim) break;
          *reinterpret_cast<T*>(k_stage + dst + j * kElement) =
              live ? *reinterpret_cast<const T*>(k_pool + src + lane_j * kElement) : Ops::from_float(0.0f);
          *reinterpret_cast<T*>(v_stage + dst + j * kElement) =
              live ? *reinterpret_cast<const T*>(v_pool + src + lane_j * kElement) : Ops::from_float(0.0f);
        }
      }
    }
    ptx::copy_async_commit();
  };

  // The state: (m, the key group's share of d) of the rows the lane holds; o for its lanes of its rows.
  float run_max[kHeld], run_den[kHeld];
#pragma unroll
  for (int h = 0; h < kHeld; ++h) {
    run_max[h] = -INFINITY;
    run_den[h] = 0.0f;
  }
  OnlineSoftmaxState<LPT> acc[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) acc[r].init(LPT);

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < num_tiles) load_tile(s);
    else ptx::copy_async_commit();  // empty groups keep the wait count uniform
  }

  for (int i = 0; i < num_tiles; ++i) {
    const int t0 = item.key_begin + i * tile;
    // this thread's copies of tile i landed (BUG cp_async_wait_one_late: one group too many may be pending)
    ptx::copy_async_wait<BUG == GpuBug::cp_async_wait_one_late ? STAGES - 1 : STAGES - 2>();
    // Tile i + STAGES - 1's stage held this thread's own, folded tile i - 1: no barrier.
    if (i + STAGES - 1 < num_tiles) load_tile(i + STAGES - 1);
    else ptx::copy_async_commit();
    const unsigned char* const k_stage = kv_tiles + (i % STAGES) * TILE_KEYS * kRowBytes;
    const unsigned char* const v_stage = k_stage + STAGES * TILE_KEYS * kRowBytes;
    int keys[ROWS];  // this tile's keys before each row's end (the row's: those from its row_begin)
    int keys_min = tile, keys_max = 0;  // over the present rows (absent rows have none)
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      keys[r] = max(0, min(row_end[r] - t0, tile));
      if (r < item.num_rows) keys_min = min(keys_min, keys[r]);
      keys_max = max(keys_max, keys[r]);
    }
    int held_keys[kHeld];  // keys[] of the rows the lane holds, by constant indices (no local memory)
#pragma unroll
    for (int h = 0; h < kHeld; ++h) {
      held_keys[h] = 0;
#pragma unroll
      for (int r = 0; r < ROWS; ++r)
        if (r == first_held_row + h) held_keys[h] = keys[r];
    }

    float score[kKeysPerThread][kHeld];  // this thread's keys' scores for the rows it holds
    float thread_max[kHeld];
#pragma unroll
    for (int h = 0; h < kHeld; ++h) thread_max[h] = -INFINITY;
#pragma unroll
    for (int k = 0; k < kKeysPerThread; ++k) {
      const int t = key_group + k * kKeyGroups;
      float kx[LPT];
#pragma unroll
      for (int c = 0; c < LPT / 8; ++c)
        Ops::load8(k_stage + t * kRowBytes + dim_chunk * kChunkBytes + c * 8 * kElement, kx + 8 * c);
      float dot[ROWS];
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < LPT; ++j) s = fmaf(q[r][j], kx[j], s);
        dot[r] = s;
      }
      Butterfly::template reduce<BUG>(dot, lane);
#pragma unroll
      for (int h = 0; h < kHeld; ++h) {
        // Select, not multiply: a masked key's score is -inf whatever its K holds (the options apply before).
        float s = dot[h] * batch.scale;
        if (logit_arithmetic) s = with_logit_options(batch, s, held_slope[h], t0 + t, held_position[h]);
        score[k][h] = held_begin[h] <= t0 + t && t < held_keys[h] ? s : -INFINITY;
        thread_max[h] = fmaxf(thread_max[h], score[k][h]);
      }
    }
    float* const tile_max_par = tile_max_s + (i & 1) * ROWS * kKeyGroups;
    if (holds_rows) {
#pragma unroll
      for (int h = 0; h < kHeld; ++h)
        tile_max_par[(first_held_row + h) * kKeyGroups + key_group] = thread_max[h];
    }
    // Every key group's maxima are in (the other parity's are rewritten only after the next barrier).
    // BUG tile_max_barrier_missing: no barrier, the key groups drift apart.
    if constexpr (BUG != GpuBug::tile_max_barrier_missing) __syncthreads();

    // Weights of this thread's keys for the rows it holds; each row's rescale factor from its holder.
    float own_alpha[kHeld];
    float weight[kKeysPerThread][kHeld];
#pragma unroll
    for (int h = 0; h < kHeld; ++h) {
      const float* const maxima = tile_max_par + (first_held_row + h) * kKeyGroups;
      float tile_max = -INFINITY;
      if constexpr (kKeyGroups % 4 == 0) {
#pragma unroll
        for (int g = 0; g < kKeyGroups; g += 4) {
          const float4 m4 = *reinterpret_cast<const float4*>(maxima + g);
          tile_max = fmaxf(fmaxf(tile_max, fmaxf(m4.x, m4.y)), fmaxf(m4.z, m4.w));
        }
      } else {
#pragma unroll
        for (int g = 0; g < kKeyGroups; ++g) tile_max = fmaxf(tile_max, maxima[g]);
      }
      // A fully masked tile leaves the running max (factor 1, or 0 on an empty state), a masked key weighs 0. An
      // empty state's sums (0 or NaN) stay alike under 1 as under 0; 1 keeps the rescale skipped for keyless rows.
      const bool empty = run_max[h] == -INFINITY;
      const float alpha = raise_running_max(run_max[h], run_den[h], tile_max);
      own_alpha[h] = empty ? 1.0f : alpha;
#pragma unroll
      for (int k = 0; k < kKeysPerThread; ++k) weight[k][h] = key_weight(score[k][h], run_max[h]);
    }
    float alpha[ROWS];
    bool rescale = false;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      alpha[r] = __shfl_sync(0xffffffffu, own_alpha[r % kHeld], key_lane0 + Butterfly::holder(r));
      rescale |= alpha[r] != 1.0f;
    }
    if (rescale) {  // multiplying by exactly 1 changes nothing, so skipping it is exact
#pragma unroll
      for (int r = 0; r < ROWS; ++r) acc[r].scale_lanes(alpha[r], LPT);
    }

    // Values: o += p v over this thread's keys; a row's keys past its last are skipped (V never multiplied).
#pragma unroll
    for (int k = 0; k < kKeysPerThread; ++k) {
      const int t = key_group + k * kKeyGroups;
      float p[ROWS];
#pragma unroll
      for (int r = 0; r < ROWS; ++r)
        p[r] = __shfl_sync(0xffffffffu, weight[k][r % kHeld], key_lane0 + Butterfly::holder(r));
      if constexpr (BUG == GpuBug::p_rounded_to_bf16) {  // the denominator keeps the fp32 weights
#pragma unroll
        for (int r = 0; r < ROWS; ++r) p[r] = __bfloat162float(__float2bfloat16_rn(p[r]));
      }
#pragma unroll
      for (int h = 0; h < kHeld; ++h) run_den[h] += weight[k][h];  // masked weights are exactly 0
      if (t >= keys_max) continue;
      float vx[LPT];
#pragma unroll
      for (int c = 0; c < LPT / 8; ++c)
        Ops::load8(v_stage + t * kRowBytes + dim_chunk * kChunkBytes + c * 8 * kElement, vx + 8 * c);
      if (begin_max <= t0 + t && t < keys_min) {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) acc[r].add_weighted(p[r], vx, LPT);
      } else {
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
          if (row_begin[r] <= t0 + t && t < keys[r]) acc[r].add_weighted(p[r], vx, LPT);
      }
    }
  }

  // The key groups' sums meet in the K/V space (free after the last tile). The mutant that waits one group late
  // drains its copies first, so none lands in the sums.
  if constexpr (BUG == GpuBug::cp_async_wait_one_late) ptx::copy_async_wait<0>();
  __syncthreads();
  float* const group_acc = reinterpret_cast<float*>(kv_tiles);  // [kKeyGroups][ROWS][LANES]
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    float4* const dst =
        reinterpret_cast<float4*>(group_acc + (key_group * ROWS + r) * LANES + dim_chunk * LPT);
#pragma unroll
    for (int c = 0; c < LPT / 4; ++c)
      dst[c] = make_float4(acc[r].o[4 * c], acc[r].o[4 * c + 1], acc[r].o[4 * c + 2], acc[r].o[4 * c + 3]);
  }
  if (holds_rows) {
#pragma unroll
    for (int h = 0; h < kHeld; ++h) {
      den_s[key_group * ROWS + first_held_row + h] = run_den[h];
      if (key_group == 0) max_s[first_held_row + h] = run_max[h];
    }
  }
  __syncthreads();
  write_item_result<T, ROWS, LANES, kKeyGroups, kCudaCoreThreads>(batch, plan, work, group_acc, den_s, max_s);
}

}  // namespace pacheck::cuda::kernels
