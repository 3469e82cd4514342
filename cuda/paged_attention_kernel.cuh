// The paged-attention kernels as templates (see paged_attention.h for what a block owns, kernel_layout.h for how
// its threads share the work). paged_attention.cu instantiates the production layouts; the benchmark may
// instantiate others. C++17 CUDA.
//
// Arithmetic, which the variants' error models (cuda_fused.cpp, cuda_splitk.cpp) account for:
//   logits   fp32: each thread's lanes by fused multiply-adds in lane order, then a butterfly sum over the key's
//            dim chunks (zero padding lanes add exact zeros), then one multiply by the scale: a head_dim-term
//            dot product in some order, within gamma_{head_dim}, plus the scale's rounding.
//   weights  per tile: the tile max (exact), raise_running_max (one expf per row: exactly 1 where a finite max
//            stays) and key_weight (one expf per key: exactly 0 for a masked key): CUDA's expf, 2 ulp; no
//            fast-math intrinsics anywhere.
//   sums     each key group accumulates p * v (and its row holders p) over its keys in position order, rescaled
//            with the rest of the state; the groups' sums are added once at the end, in group order.
// Masked keys (past the context, past the row's position, past the split) never reach a multiply: scores are
// -inf, weights exactly 0, and the value loop skips a row's keys past its last. Keys past the item's range are
// never loaded (their shared-memory rows are zero-filled; the tensor-core kernel's tensor copies may read them
// within the last 16-slot run, then zero them) and table entries past the range are never read.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cuda/cuda_check.h"
#include "cuda/fast_divmod.h"
#include "cuda/kernel_layout.h"
#include "cuda/kv_tensor_maps.h"
#include "cuda/paged_attention.h"
#include "variants/online_softmax.h"

namespace pacheck::cuda::kernels {

// --- storage types ----------------------------------------------------------------------------------------------

template <typename T>
struct StorageOps;

template <>
struct StorageOps<float> {
  __device__ static float to_float(float x) { return x; }
  __device__ static float from_float(float x) { return x; }
  // Eight consecutive elements at a 16-byte aligned shared-memory address.
  __device__ static void load8(const unsigned char* p, float out[8]) {
    const float4 a = reinterpret_cast<const float4*>(p)[0];
    const float4 b = reinterpret_cast<const float4*>(p)[1];
    out[0] = a.x; out[1] = a.y; out[2] = a.z; out[3] = a.w;
    out[4] = b.x; out[5] = b.y; out[6] = b.z; out[7] = b.w;
  }
};

template <>
struct StorageOps<__nv_bfloat16> {
  __device__ static float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ static __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
  // bf16 is the top half of an fp32: widening is a shift or a mask, exact.
  __device__ static void load8(const unsigned char* p, float out[8]) {
    const uint4 w = *reinterpret_cast<const uint4*>(p);
    const unsigned words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      out[2 * i] = __uint_as_float(words[i] << 16);
      out[2 * i + 1] = __uint_as_float(words[i] & 0xffff0000u);
    }
  }
};

template <>
struct StorageOps<__half> {
  __device__ static float to_float(__half x) { return __half2float(x); }
  __device__ static __half from_float(float x) { return __float2half_rn(x); }
  __device__ static void load8(const unsigned char* p, float out[8]) {
    const uint4 w = *reinterpret_cast<const uint4*>(p);
    const unsigned words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __half2_raw raw;
      raw.x = static_cast<unsigned short>(words[i] & 0xffffu);
      raw.y = static_cast<unsigned short>(words[i] >> 16);
      const float2 f = __half22float2(__half2(raw));
      out[2 * i] = f.x;
      out[2 * i + 1] = f.y;
    }
  }
};

// --- asynchronous copies ----------------------------------------------------------------------------------------

// The shared-state-space address of a generic pointer into shared memory, as PTX's shared-memory operands take it.
__device__ inline unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared without passing through registers; src_bytes = 0 reads nothing and writes zeros.
__device__ inline void copy_async_16(void* shared_dst, const void* global_src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared_dst)), "l"(global_src),
               "r"(src_bytes)
               : "memory");
}
// copy_async_16 of a whole 16 bytes under an L2 evict-first policy: the lines it brings in are the first to go. For
// K and V, which a kernel reads once, so that streaming them through the L2 evicts other data (an earlier kernel's
// dirty lines, which would then be written back inside this one) as little as possible. The policy is made in the
// same asm block; ptxas hoists it out of the loop. ptxas 13.0 can drop its definition and leave the copies reading
// an unwritten uniform register (an illegal instruction at run time): see TileCopies::async_evict_first for where
// it is safe to call, and reports/gpu/sass_descriptor_check.py, which finds such copies in a build.
__device__ inline void copy_async_16_evict_first(void* shared_dst, const void* global_src) {
  asm volatile(
      "{\n .reg .b64 policy;\n createpolicy.fractional.L2::evict_first.b64 policy, 1.0;\n"
      " cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, 16, policy;\n}\n" ::"r"(shared_address(shared_dst)),
      "l"(global_src)
      : "memory");
}
__device__ inline void copy_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most `Pending` of this thread's most recent copy groups are still in flight; the finished
// copies are then visible to this thread.
template <int Pending>
__device__ inline void copy_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// --- programmatic dependent launch (sm_90) ----------------------------------------------------------------------

// The split-K merge kernel is launched as a programmatic dependent of the attention kernel: its blocks may start
// once every attention block has called allow_dependent_launch, work out which partial states they merge (from
// the plan, which the attention kernel does not write), and only then wait for the attention grid to complete
// and its stores to be visible. That hides the merge's launch and its chain of index loads behind the attention
// kernel's tail. Without a dependent launch both are no-ops in effect (the wait returns at once).
__device__ inline void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ inline void wait_for_prerequisite_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// --- the dot-product butterfly ----------------------------------------------------------------------------------

__host__ __device__ constexpr int log2_of(int x) { return x <= 1 ? 0 : 1 + log2_of(x / 2); }

// The ROWS partial dot products of one key, spread over the LANES_PER_KEY consecutive lanes that hold its dim
// chunks, summed by a butterfly (xor distances LANES_PER_KEY/2, ..., 1). While more than one value is live each
// step halves them: a lane keeps one half, sends the other and adds its partner's. Afterwards every lane holds
// kHeld complete dot products, rows [first_held_row, + kHeld); lanes differing only in the bits of the later,
// non-halving steps hold the same rows (the holder is the one with those bits zero). Each sum is formed in one
// lane, or symmetrically in two (IEEE addition commutes), so every lane holding a row holds the same bits.
template <int ROWS, int LANES_PER_KEY>
struct KeyButterfly {
  static constexpr int kSteps = log2_of(LANES_PER_KEY);
  static constexpr int kHalvings = log2_of(ROWS) < kSteps ? log2_of(ROWS) : kSteps;
  static constexpr int kHeld = ROWS >> kHalvings;
  // Lane bits of the non-halving steps: holders have them zero.
  static constexpr int kDuplicateBits = (LANES_PER_KEY >> kHalvings) - 1;

  __device__ static void reduce(float (&v)[ROWS], int lane) {
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
          v[i] = keep + __shfl_xor_sync(0xffffffffu, send, mask);
        }
      } else {
        v[0] += __shfl_xor_sync(0xffffffffu, v[0], mask);
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

// --- a block's work item ---------------------------------------------------------------------------------------

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

// --- the end of a work item -------------------------------------------------------------------------------------

// N consecutive lanes of E as one aligned access (one 16-byte load for 4 floats).
template <typename E, int N>
struct alignas(N * sizeof(E)) AlignedLanes {
  E element[N];
};
// Whether the batch's output (of T) starts aligned for AlignedLanes<T, N> stores at every multiple of N lanes:
// cudaMalloc's always does; an output one element past it does not.
template <typename T, int N>
__device__ inline bool output_aligned_for_lanes(const DeviceBatch& batch) {
  return reinterpret_cast<std::uintptr_t>(batch.output) % (N * sizeof(T)) == 0;
}

// The last step of every attention kernel, once the key groups' sums are in shared memory (group_acc
// [kKeyGroups][kRows][kRowStride], the first LANES floats of a row used; den_s [kKeyGroups][kRows]; max_s [kRows]):
// each output element of the item's rows is the sum of its key groups' accumulators in group order, likewise its
// denominator; fused, it is normalised and stored in the output dtype; split-K, stored as the item's partial state
// (max, denominator, fp32 accumulator). A thread takes N consecutive lanes of a row at a time (write_item_result
// picks N): the same sums per element whatever N is.
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
      const std::size_t slot = (static_cast<std::size_t>(blockIdx.x) * batch.num_kv_heads + work.kv_head) * kRows + r;
      *reinterpret_cast<Lanes*>(plan.partial_acc + slot * head_dim + j) = o;
      if (j == 0) {
        plan.partial_max[slot] = max_s[r];
        plan.partial_denominator[slot] = d;
      }
    }
  }
}

// Four lanes a thread (16-byte loads of the sums, 16-byte stores of a partial state) where the head dim is a
// multiple of 4 and the output is aligned for them (every tensor-core launch, whose head dims are multiples of 8,
// when the output came from cudaMalloc), a lane a thread otherwise; the test
// GpuFused.AnOutputAlignedOnlyToItsElementGetsTheSameBits checks that both give the same bits. The partial states'
// scratch is cudaMalloc's. A split-K block's end is on the path to the merge: against a lane a thread, split-K at
// batch 1, 32k took 0-0.7% (GQA 4) and 0.7-1.7% (GQA 8) less time, at 8k 0.6-3.2%; fused at batch 1-8 within
// +1.3%, where split-K is the kernel to run (reports/gpu/issue8-perf.md, session 26, calls 1-2).
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

// --- the attention kernel ---------------------------------------------------------------------------------------

// Blocks per multiprocessor the register allocation must leave room for: as many as shared memory allows (up to
// 4) for four rows per thread, 2 otherwise.
template <typename T, int LANES, int ROWS_PER_THREAD, int ROW_SETS, int TILE_KEYS, int STAGES, int LPT>
constexpr int min_resident_blocks() {
  if (ROW_SETS > 1 || ROWS_PER_THREAD > 4) return 2;
  const int shared =
      layout::shared_layout(LANES, sizeof(T), ROWS_PER_THREAD * ROW_SETS, TILE_KEYS, STAGES, LPT).total + 1024;
  const int fit = 227 * 1024 / shared;
  return fit < 2 ? 2 : fit > 4 ? 4 : fit;
}

template <typename T, int LANES, int ROWS_PER_THREAD, int ROW_SETS, int TILE_KEYS, int STAGES, int LPT>
__global__ void __launch_bounds__(layout::kThreads * ROW_SETS,
                                  min_resident_blocks<T, LANES, ROWS_PER_THREAD, ROW_SETS, TILE_KEYS, STAGES, LPT>())
    attention_kernel(const DeviceBatch batch, const DevicePlan plan, const FastDivmod block_div) {
  using Ops = StorageOps<T>;
  constexpr int kElement = sizeof(T);
  constexpr int kRows = ROWS_PER_THREAD * ROW_SETS;  // the block's rows
  constexpr int kBlockThreads = layout::kThreads * ROW_SETS;
  constexpr int kRowBytes = layout::row_bytes(LANES, kElement);
  constexpr int kLanesPerKey = layout::dim_chunks(LANES, LPT);
  constexpr int kKeyGroups = layout::key_groups(LANES, LPT);
  constexpr int kKeysPerThread = TILE_KEYS / kKeyGroups;  // per tile
  constexpr int kChunkBytes = LPT * kElement;  // a thread's lanes of one K or V row
  constexpr int kCopiesPerChunk = kChunkBytes / 16;
  constexpr layout::SharedLayout kShared = layout::shared_layout(LANES, kElement, kRows, TILE_KEYS, STAGES, LPT);
  static_assert(LPT % 8 == 0 && LANES % LPT == 0 && kLanesPerKey <= 32, "whole 8-lane loads, a key within a warp");
  using Butterfly = KeyButterfly<ROWS_PER_THREAD, kLanesPerKey>;
  constexpr int kHeld = Butterfly::kHeld;
  static_assert(TILE_KEYS % kKeyGroups == 0, "every key group takes the same number of keys per tile");
  static_assert(kRowBytes % 16 == 0 && kChunkBytes % 16 == 0, "copies are 16 bytes");
  static_assert(STAGES >= 2, "one tile is folded while the next ones land");
  static_assert(ROW_SETS == 1 || ROW_SETS == 2, "one set copies K, the other V");

  extern __shared__ __align__(16) unsigned char shared[];
  unsigned char* const kv_tiles = shared + kShared.kv;
  int* const table_s = reinterpret_cast<int*>(shared + kShared.table);
  float* const tile_max_s = reinterpret_cast<float*>(shared + kShared.tile_max);  // [2][kRows][kKeyGroups]
  float* const den_s = reinterpret_cast<float*>(shared + kShared.row_sums);       // [kKeyGroups][kRows]
  float* const max_s = den_s + kKeyGroups * kRows;                                // [kRows]

  allow_dependent_launch();  // a split-K merge may start preparing now (see wait_for_prerequisite_grids)
  const BlockWork work = load_block_work(batch, plan);
  const WorkItem& item = work.item;
  const int kv_head = work.kv_head;
  const SequenceMeta& seq = work.seq;
  const int head_dim = batch.head_dim;
  const int gqa = work.gqa;
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int row_set = tid / layout::kThreads;
  const int set_tid = tid % layout::kThreads;
  const int dim_chunk = set_tid % kLanesPerKey;
  const int key_group = set_tid / kLanesPerKey;
  const int key_lane0 = lane - dim_chunk;  // the warp lane of this key's dim chunk 0
  const int first_row = row_set * ROWS_PER_THREAD;  // this thread's rows: [first_row, + ROWS_PER_THREAD)
  const bool holds_rows = (dim_chunk & Butterfly::kDuplicateBits) == 0;
  const int first_held_row = Butterfly::first_held_row(dim_chunk);  // counted within this thread's rows
  const int tile = max(1, min(plan.tile_size, TILE_KEYS));
  const int first_position = work.first_position;
  // With one row set a thread copies the K and V lanes it reads itself; with two, set 0 copies K, set 1 V.
  constexpr bool kSharedCopies = ROW_SETS > 1;
  const bool copies_k = !kSharedCopies || row_set == 0;
  const bool copies_v = !kSharedCopies || row_set == 1;

  // Each row attends to keys [item.key_begin, row_end): its own position + 1, cut at the item's end.
  int row_end[ROWS_PER_THREAD];
#pragma unroll
  for (int r = 0; r < ROWS_PER_THREAD; ++r) {
    const int block_row = first_row + r;
    const int token = (item.first_row + block_row) / gqa;
    row_end[r] = block_row < item.num_rows ? min(first_position + token + 1, item.key_end) : item.key_begin;
  }

  // This thread's lanes of q for its rows, in fp32 registers (zero past the head and for absent rows).
  float q[ROWS_PER_THREAD][LPT];
  const T* const queries = static_cast<const T*>(batch.queries);
#pragma unroll
  for (int r = 0; r < ROWS_PER_THREAD; ++r) {
    const int block_row = first_row + r;
    const int row = item.first_row + block_row;
    const std::size_t query_row = static_cast<std::size_t>(seq.query_row_offset + row / gqa);
    const std::size_t base = (query_row * batch.num_query_heads + kv_head * gqa + row % gqa) * head_dim;
#pragma unroll
    for (int j = 0; j < LPT; ++j) {
      const int lane_j = dim_chunk * LPT + j;
      q[r][j] = block_row < item.num_rows && lane_j < head_dim ? Ops::to_float(queries[base + lane_j]) : 0.0f;
    }
  }

  // Zero the chunks this thread copies in every stage (lanes past the head stay zero), stage the block table.
#pragma unroll
  for (int kv = 0; kv < 2; ++kv) {
    if (kv == 0 ? !copies_k : !copies_v) continue;
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
  const bool table_staged = table_count <= layout::kTableEntries;
  const std::int32_t* const table = batch.block_tables + seq.table_offset;
  if (table_staged)
    for (int i = tid; i < table_count; i += kBlockThreads) table_s[i] = table[first_block + i];
  __syncthreads();

  const bool vector_copy = (head_dim * kElement) % 16 == 0;
  const int row_bytes_live = head_dim * kElement;
  const std::size_t kv_head_stride = static_cast<std::size_t>(head_dim) * kElement;  // bytes per (slot, head)
  const unsigned char* const k_pool = static_cast<const unsigned char*>(batch.k_pool);
  const unsigned char* const v_pool = static_cast<const unsigned char*>(batch.v_pool);
  const int num_tiles = (item.key_end - item.key_begin + tile - 1) / tile;

  // Index of key `position`'s (block, slot, kv_head) vector in the pools, through the block table. It fits 32
  // bits (launch_attention checks); the byte offset may not.
  const auto vector_index = [&](int position) {
    int logical_block, slot;
    block_div.divmod(position, logical_block, slot);
    const unsigned physical = table_staged ? table_s[logical_block - first_block] : __ldg(table + logical_block);
    return (physical * batch.block_size + slot) * batch.num_kv_heads + kv_head;
  };
  static_assert(kKeysPerThread <= kLanesPerKey, "each of a key group's keys is looked up by one of its lanes");

  // Starts the copy of this thread's chunks of its keys of tile i; keys past the item's range (or past the
  // tile, when the tile_size knob is below TILE_KEYS) are zero-filled, never read from the pools.
  const auto load_tile = [&](int i) {
    const int t0 = item.key_begin + i * tile;
    const int count = min(tile, item.key_end - t0);
    unsigned char* const k_stage = kv_tiles + (i % STAGES) * TILE_KEYS * kRowBytes;
    unsigned char* const v_stage = k_stage + STAGES * TILE_KEYS * kRowBytes;
    // Every lane of a key group copies the same keys: lane k of the group looks up key k and shares the index.
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
          if (copies_k) copy_async_16(k_stage + dst + c * 16, k_pool + (live ? src + byte : 0), live ? 16 : 0);
          if (copies_v) copy_async_16(v_stage + dst + c * 16, v_pool + (live ? src + byte : 0), live ? 16 : 0);
        }
      } else {  // rows that are not a multiple of 16 bytes: element by element
#pragma unroll
        for (int j = 0; j < LPT; ++j) {
          const int lane_j = dim_chunk * LPT + j;
          if (lane_j >= head_dim) break;
          if (copies_k)
            *reinterpret_cast<T*>(k_stage + dst + j * kElement) =
                live ? *reinterpret_cast<const T*>(k_pool + src + lane_j * kElement) : Ops::from_float(0.0f);
          if (copies_v)
            *reinterpret_cast<T*>(v_stage + dst + j * kElement) =
                live ? *reinterpret_cast<const T*>(v_pool + src + lane_j * kElement) : Ops::from_float(0.0f);
        }
      }
    }
    copy_async_commit();
  };

  // The state: (m, this key group's share of d) for the rows this lane holds; o for its lanes of its rows.
  float run_max[kHeld], run_den[kHeld];
#pragma unroll
  for (int h = 0; h < kHeld; ++h) {
    run_max[h] = -INFINITY;
    run_den[h] = 0.0f;
  }
  OnlineSoftmaxState<LPT> acc[ROWS_PER_THREAD];
#pragma unroll
  for (int r = 0; r < ROWS_PER_THREAD; ++r) acc[r].init(LPT);

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < num_tiles) load_tile(s);
    else copy_async_commit();  // empty groups keep the wait count uniform
  }

  for (int i = 0; i < num_tiles; ++i) {
    const int t0 = item.key_begin + i * tile;
    copy_async_wait<STAGES - 2>();  // this thread's copies of tile i have landed
    // One row set: the stage tile i + STAGES - 1 reuses held this thread's own tile i - 1, already folded. Two:
    // wait for the other set's copies of tile i and for everyone to be done with tile i - 1.
    if constexpr (kSharedCopies) __syncthreads();
    if (i + STAGES - 1 < num_tiles) load_tile(i + STAGES - 1);
    else copy_async_commit();
    const unsigned char* const k_stage = kv_tiles + (i % STAGES) * TILE_KEYS * kRowBytes;
    const unsigned char* const v_stage = k_stage + STAGES * TILE_KEYS * kRowBytes;
    int keys[ROWS_PER_THREAD];  // keys of this tile each row attends to: a prefix of the tile
    int keys_min = tile, keys_max = 0;  // over the present rows (absent rows have none and weigh 0 anyway)
#pragma unroll
    for (int r = 0; r < ROWS_PER_THREAD; ++r) {
      keys[r] = max(0, min(row_end[r] - t0, tile));
      if (first_row + r < item.num_rows) keys_min = min(keys_min, keys[r]);
      keys_max = max(keys_max, keys[r]);
    }
    int held_keys[kHeld];  // keys[] of the rows this lane holds, picked with constant indices (no local memory)
#pragma unroll
    for (int h = 0; h < kHeld; ++h) {
      held_keys[h] = 0;
#pragma unroll
      for (int r = 0; r < ROWS_PER_THREAD; ++r)
        if (r == first_held_row + h) held_keys[h] = keys[r];
    }

    // Scores of this thread's keys for the rows it holds, and their maxima.
    float score[kKeysPerThread][kHeld];
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
      float dot[ROWS_PER_THREAD];
#pragma unroll
      for (int r = 0; r < ROWS_PER_THREAD; ++r) {
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < LPT; ++j) s = fmaf(q[r][j], kx[j], s);
        dot[r] = s;
      }
      Butterfly::reduce(dot, lane);
#pragma unroll
      for (int h = 0; h < kHeld; ++h) {
        // Select, not multiply: a masked key's score is -inf whatever its K holds.
        score[k][h] = t < held_keys[h] ? dot[h] * batch.scale : -INFINITY;
        thread_max[h] = fmaxf(thread_max[h], score[k][h]);
      }
    }
    float* const tile_max_par = tile_max_s + (i & 1) * kRows * kKeyGroups;
    if (holds_rows) {
#pragma unroll
      for (int h = 0; h < kHeld; ++h)
        tile_max_par[(first_row + first_held_row + h) * kKeyGroups + key_group] = thread_max[h];
    }
    // Every key group's maxima are in (the other parity's slots are rewritten only after the next barrier, once
    // everyone has read them).
    __syncthreads();

    // Weights of this thread's keys for the rows it holds; the rescale factor of each of its rows from its holder.
    float own_alpha[kHeld];
    float weight[kKeysPerThread][kHeld];
#pragma unroll
    for (int h = 0; h < kHeld; ++h) {
      const float* const maxima = tile_max_par + (first_row + first_held_row + h) * kKeyGroups;
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
      // Both steps take masked values as they are (variants/online_softmax.h): a fully masked tile leaves the
      // running max alone (factor 1, or 0 on a still empty state), a masked key weighs exactly 0. An empty state's
      // sums are 0 (or NaN), which a factor of 1 leaves as a factor of 0 does; 1 keeps the rescale below skipped
      // for rows that have no key yet, or never get one (rows past the item's, rows before their split).
      const bool empty = run_max[h] == -INFINITY;
      const float alpha = raise_running_max(run_max[h], run_den[h], tile_max);
      own_alpha[h] = empty ? 1.0f : alpha;
#pragma unroll
      for (int k = 0; k < kKeysPerThread; ++k) weight[k][h] = key_weight(score[k][h], run_max[h]);
    }
    float alpha[ROWS_PER_THREAD];
    bool rescale = false;
#pragma unroll
    for (int r = 0; r < ROWS_PER_THREAD; ++r) {
      alpha[r] = __shfl_sync(0xffffffffu, own_alpha[r % kHeld], key_lane0 + Butterfly::holder(r));
      rescale |= alpha[r] != 1.0f;
    }
    if (rescale) {  // multiplying by exactly 1 changes nothing, so skipping it is exact
#pragma unroll
      for (int r = 0; r < ROWS_PER_THREAD; ++r) acc[r].scale_lanes(alpha[r], LPT);
    }

    // Values: o += p v over this thread's keys; a row's keys past its last are skipped (V never multiplied).
#pragma unroll
    for (int k = 0; k < kKeysPerThread; ++k) {
      const int t = key_group + k * kKeyGroups;
      float p[ROWS_PER_THREAD];
#pragma unroll
      for (int r = 0; r < ROWS_PER_THREAD; ++r)
        p[r] = __shfl_sync(0xffffffffu, weight[k][r % kHeld], key_lane0 + Butterfly::holder(r));
#pragma unroll
      for (int h = 0; h < kHeld; ++h) run_den[h] += weight[k][h];  // masked weights are exactly 0
      if (t >= keys_max) continue;
      float vx[LPT];
#pragma unroll
      for (int c = 0; c < LPT / 8; ++c)
        Ops::load8(v_stage + t * kRowBytes + dim_chunk * kChunkBytes + c * 8 * kElement, vx + 8 * c);
      if (t < keys_min) {
#pragma unroll
        for (int r = 0; r < ROWS_PER_THREAD; ++r) acc[r].add_weighted(p[r], vx, LPT);
      } else {
#pragma unroll
        for (int r = 0; r < ROWS_PER_THREAD; ++r)
          if (t < keys[r]) acc[r].add_weighted(p[r], vx, LPT);
      }
    }
  }

  // The key groups' sums meet in shared memory (the K/V space is free once every thread is past its last tile),
  // then each output element is their sum in group order: normalised (fused) or a partial state (split-K).
  __syncthreads();
  float* const group_acc = reinterpret_cast<float*>(kv_tiles);  // [kKeyGroups][kRows][LANES]
#pragma unroll
  for (int r = 0; r < ROWS_PER_THREAD; ++r) {
    float4* const dst =
        reinterpret_cast<float4*>(group_acc + (key_group * kRows + first_row + r) * LANES + dim_chunk * LPT);
#pragma unroll
    for (int c = 0; c < LPT / 4; ++c)
      dst[c] = make_float4(acc[r].o[4 * c], acc[r].o[4 * c + 1], acc[r].o[4 * c + 2], acc[r].o[4 * c + 3]);
  }
  if (holds_rows) {
#pragma unroll
    for (int h = 0; h < kHeld; ++h) {
      den_s[key_group * kRows + first_row + first_held_row + h] = run_den[h];
      if (key_group == 0) max_s[first_row + first_held_row + h] = run_max[h];
    }
  }
  __syncthreads();
  write_item_result<T, kRows, LANES, kKeyGroups, kBlockThreads>(batch, plan, work, group_acc, den_s,
                                                                 max_s);
}

// --- the split-K reduce -----------------------------------------------------------------------------------------

// One output row (query token, query head) per MergeShape::kThreadsPerRow threads: merges the row's non-empty
// splits in split order with the online-softmax merge, then normalises. Thread j of a row holds head lanes
// [kLanesPerThread j, kLanesPerThread (j + 1)) of the accumulator; every warp of a row reads and shares (m, d) and
// computes the factors itself, which keeps the warps free of any barrier. LANES_PER_THREAD is 1 (the lanes shape)
// or 4 (warps), chosen per launch (merge_shape_for in paged_attention.h); kLanesPerThread caps it at LANES / 32 so
// that a row is whole warps (2 lanes a thread at 64 lanes).
// A block is one row of the lanes shape (four of the warps shape), 128 threads at 128 lanes. Blocks of two or four
// rows (256 or 512 threads) took 1.6-2.4 us longer at batch 1, 8k and 32k; rows over blocks of one or two warps up
// to 4% longer (reports/gpu/issue8-perf.md, session 24). The likely reason for the first (from ptxas's register
// counts, not profiled): the merge's blocks start early, as dependents of the attention kernel, only where they fit
// beside the attention blocks. Beside two wide blocks (168 registers x 128 threads each) 22,528 registers remain;
// a 128-thread merge block (138 registers) takes 18,432, the larger blocks more than that.
template <int LANES, int LANES_PER_THREAD>
struct MergeShape {
  static constexpr int kLanesPerThread = LANES_PER_THREAD < LANES / 32 ? LANES_PER_THREAD : LANES / 32;
  static constexpr int kThreadsPerRow = LANES / kLanesPerThread;  // whole warps
  static constexpr int kBlockThreads = kThreadsPerRow > 128 ? kThreadsPerRow : 128;
  static constexpr int kRowsPerBlock = kBlockThreads / kThreadsPerRow;
};

template <typename T, int LANES, int LANES_PER_THREAD>
__global__ void __launch_bounds__(MergeShape<LANES, LANES_PER_THREAD>::kBlockThreads)
    merge_splits_kernel(const DeviceBatch batch, const DevicePlan plan) {
  using Shape = MergeShape<LANES, LANES_PER_THREAD>;
  constexpr int kPerThread = Shape::kLanesPerThread;
  static_assert(Shape::kThreadsPerRow % 32 == 0, "a warp holds part of one row only");
  const int row_index =
      static_cast<int>(blockIdx.x) * Shape::kRowsPerBlock + static_cast<int>(threadIdx.x) / Shape::kThreadsPerRow;
  const int first_lane = static_cast<int>(threadIdx.x) % Shape::kThreadsPerRow * kPerThread;
  const int lane = threadIdx.x & 31;
  if (row_index >= batch.total_queries * batch.num_query_heads) return;  // whole warps
  const int query_row = row_index / batch.num_query_heads;
  const int query_head = row_index % batch.num_query_heads;
  const int s = batch.sequence_of_query_row[query_row];
  const SequenceMeta seq = batch.sequences[s];
  const int token = query_row - seq.query_row_offset;
  const int gqa = batch.num_query_heads / batch.num_kv_heads;
  const int kv_head = query_head / gqa;
  const int row = token * gqa + query_head % gqa;
  const int chunk = row / plan.rows_per_chunk;
  const int r = row % plan.rows_per_chunk;
  const int first_item = plan.chunk_first_item[plan.chunk_offsets[s] + chunk];
  const int position = seq.context_len - seq.num_queries + token;
  const int used_splits = position / plan.split_sizes[s] + 1;  // splits holding a key at or before the query
  const int head_dim = batch.head_dim;
  // Whole vectors of kPerThread lanes where the row length keeps them aligned and each is all inside the head or
  // all past it; other shapes go element by element. The output is stored so only where its start is aligned for
  // them too, as write_item_result does.
  const bool whole_vectors = head_dim % kPerThread == 0;
  const bool whole_output_vectors = whole_vectors && output_aligned_for_lanes<T, kPerThread>(batch);
  // The partial-state slot of split k of this row: [item][KV head][row].
  const std::size_t first_slot =
      (static_cast<std::size_t>(first_item) * batch.num_kv_heads + kv_head) * plan.row_capacity + r;
  const std::size_t split_stride = static_cast<std::size_t>(batch.num_kv_heads) * plan.row_capacity;
  const auto slot_of = [&](int split) { return first_slot + split * split_stride; };

  // Everything above came from the plan; the partial states below are the attention kernel's output.
  wait_for_prerequisite_grids();

  // Partials are read kBatch at a time, every load in flight together (lane b reads split b's (m, d), which the
  // lanes then share by shuffle), and merged with merge_in_order's steps: in split order, the operations of
  // successive merges, but with the batch's exps side by side rather than one merge's chain after another, each
  // part's two factors computed in one lane only (the same expf of the same values wherever it runs). Slots past
  // the row's last split are not read: they stay empty states, which merging skips (the identity). A row's last
  // few splits (or its only ones) are merged as a batch of 4, so that a one-split row does not step through 16
  // parts. 16 per batch measured faster than 8 or 32 (reports/gpu/issue8-perf.md).
  constexpr int kBatch = 16;
  constexpr int kShortBatch = 4;
  static_assert(kBatch <= 32, "a batch's (m, d) fit one per lane");
  using State = OnlineSoftmaxState<kPerThread>;
  State merged;
  merged.init(kPerThread);
  const auto merge_batch = [&](int k0, auto parts_constant) {
    constexpr int kParts = decltype(parts_constant)::value;
    float lane_max = -INFINITY, lane_denominator = 0.0f;
    if (lane < kParts && k0 + lane < used_splits) {
      lane_max = plan.partial_max[slot_of(k0 + lane)];
      lane_denominator = plan.partial_denominator[slot_of(k0 + lane)];
    }
    State part[kParts];
#pragma unroll
    for (int b = 0; b < kParts; ++b) {
      part[b].init(kPerThread);
      if (k0 + b >= used_splits || first_lane >= head_dim) continue;
      const float* const acc = plan.partial_acc + slot_of(k0 + b) * head_dim + first_lane;
      if (whole_vectors) {
        const auto v = *reinterpret_cast<const AlignedLanes<float, kPerThread>*>(acc);
#pragma unroll
        for (int i = 0; i < kPerThread; ++i) part[b].o[i] = v.element[i];
      } else {
#pragma unroll
        for (int i = 0; i < kPerThread; ++i)
          if (first_lane + i < head_dim) part[b].o[i] = acc[i];
      }
    }
    // Only now the shuffles, which wait for the (m, d) loads: the accumulator loads above are already in flight.
    float part_max[kParts], before[kParts];
#pragma unroll
    for (int b = 0; b < kParts; ++b) {
      part[b].m = part_max[b] = __shfl_sync(0xffffffffu, lane_max, b);
      part[b].d = __shfl_sync(0xffffffffu, lane_denominator, b);
    }
    const float merged_max = State::merge_maxima(merged.m, part_max, before);
    // Lane i < kParts computes part i's two factors (the other lanes' are never read).
    const int i = lane % kParts;
    float lane_before = before[0];
#pragma unroll
    for (int b = 1; b < kParts; ++b) lane_before = b == i ? before[b] : lane_before;
    const float lane_self_factor = State::merge_self_factor(lane_before, lane_max);
    const float lane_other_factor = State::merge_other_factor(lane_before, lane_max);
    float self_factor[kParts], other_factor[kParts];
#pragma unroll
    for (int b = 0; b < kParts; ++b) {
      self_factor[b] = __shfl_sync(0xffffffffu, lane_self_factor, b);
      other_factor[b] = __shfl_sync(0xffffffffu, lane_other_factor, b);
    }
    merged.apply_merges_in_order(part, self_factor, other_factor, merged_max, kPerThread);
  };
  for (int k0 = 0; k0 < used_splits; k0 += kBatch) {
    if (used_splits - k0 <= kShortBatch)
      merge_batch(k0, std::integral_constant<int, kShortBatch>{});
    else
      merge_batch(k0, std::integral_constant<int, kBatch>{});
  }
  if (first_lane >= head_dim) return;
  float out[kPerThread];
  merged.normalize(out, kPerThread);
  const std::size_t output_row = static_cast<std::size_t>(query_row) * batch.num_query_heads + query_head;
  T* const output = static_cast<T*>(batch.output) + output_row * head_dim + first_lane;
  if (whole_output_vectors) {
    AlignedLanes<T, kPerThread> v;
#pragma unroll
    for (int e = 0; e < kPerThread; ++e) v.element[e] = StorageOps<T>::from_float(out[e]);
    *reinterpret_cast<AlignedLanes<T, kPerThread>*>(output) = v;
  } else {
#pragma unroll
    for (int e = 0; e < kPerThread; ++e)
      if (first_lane + e < head_dim) output[e] = StorageOps<T>::from_float(out[e]);
  }
}

// --- launching one layout ---------------------------------------------------------------------------------------

// Launching one instantiation of an attention kernel: blocks over 48 KB of shared memory must be allowed it first
// (once per process); the grid is (work items, KV heads); a split-K plan is followed by the merge kernel.
// TENSOR_MAPS: the kernel takes the pools' tensor maps (kv_tensor_maps.h) as its last argument; ENCODE_MAPS: it
// may copy with them, so they are encoded for each launch (two driver calls on the host); otherwise it is given
// maps marked unusable, which it never reads.
template <auto KERNEL, typename T, int LANES, int ROWS, int THREADS, int SHARED, bool TENSOR_MAPS = false,
          bool ENCODE_MAPS = TENSOR_MAPS>
struct AttentionLauncher {
  static constexpr int kRows = ROWS;
  static constexpr int kThreads = THREADS;
  static constexpr int kShared = SHARED;

  static void configure() {
    static const cudaError_t configured =
        cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED);
    cuda_check(configured, "setting the attention kernel's shared-memory size (" + std::to_string(SHARED) + " bytes)");
  }
  static int resident_blocks_per_multiprocessor() {
    configure();
    int blocks = 0;
    cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, KERNEL, THREADS, SHARED),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return blocks;
  }
  static void launch(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
    if (plan.row_capacity != ROWS)
      throw std::invalid_argument("plan for " + std::to_string(plan.row_capacity) + " rows per block, kernel for " +
                                  std::to_string(ROWS));
    configure();
    const dim3 grid(static_cast<unsigned>(plan.num_items), static_cast<unsigned>(batch.num_kv_heads));
    if constexpr (TENSOR_MAPS) {
      const KvTensorMaps maps = ENCODE_MAPS ? describe_kv_pools(batch, plan.tile_size) : KvTensorMaps{};
      KERNEL<<<grid, THREADS, SHARED, stream>>>(batch, plan, FastDivmod(batch.block_size), maps);
    } else {
      KERNEL<<<grid, THREADS, SHARED, stream>>>(batch, plan, FastDivmod(batch.block_size));
    }
    check_launch("the paged attention kernel");
    if (plan.split_k) {
      if (merge_shape_for(batch) == MergeShapeChoice::lanes) return launch_merge<1>(batch, plan, stream);
      launch_merge<4>(batch, plan, stream);
    }
  }

 private:
  template <int LANES_PER_THREAD>
  static void launch_merge(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
    using Shape = MergeShape<LANES, LANES_PER_THREAD>;
    const long long rows = static_cast<long long>(batch.total_queries) * batch.num_query_heads;
    // A programmatic dependent launch (see allow_dependent_launch): the merge's blocks may start before the
    // attention kernel ends, and wait for it before reading the partial states.
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(static_cast<unsigned>((rows + Shape::kRowsPerBlock - 1) / Shape::kRowsPerBlock));
    config.blockDim = dim3(Shape::kBlockThreads);
    config.stream = stream;
    cudaLaunchAttribute dependent_launch = {};
    dependent_launch.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent_launch.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &dependent_launch;
    config.numAttrs = 1;
    cuda_check(cudaLaunchKernelEx(&config, merge_splits_kernel<T, LANES, LANES_PER_THREAD>, batch, plan),
               "launching the split-K merge kernel");
  }
};

// The CUDA-core kernel in one layout (kernel_layout.h's KernelShape as template arguments).
template <typename T, int LANES, int ROWS_PER_THREAD, int ROW_SETS, int TILE_KEYS, int STAGES, int LPT>
using KernelLayout = AttentionLauncher<
    attention_kernel<T, LANES, ROWS_PER_THREAD, ROW_SETS, TILE_KEYS, STAGES, LPT>, T, LANES, ROWS_PER_THREAD * ROW_SETS,
    layout::kThreads * ROW_SETS,
    layout::shared_layout(LANES, sizeof(T), ROWS_PER_THREAD * ROW_SETS, TILE_KEYS, STAGES, LPT).total>;

// The production layout for a storage type, head capacity and row capacity (4 or 8).
template <typename T, int LANES, int ROW_CAPACITY>
using ProductionLayout =
    KernelLayout<T, LANES, layout::production_shape(LANES, sizeof(T), ROW_CAPACITY).rows_per_thread,
                 layout::production_shape(LANES, sizeof(T), ROW_CAPACITY).row_sets,
                 layout::production_shape(LANES, sizeof(T), ROW_CAPACITY).tile_keys,
                 layout::production_shape(LANES, sizeof(T), ROW_CAPACITY).stages,
                 layout::production_shape(LANES, sizeof(T), ROW_CAPACITY).lanes_per_thread>;

}  // namespace pacheck::cuda::kernels
