// The attention kernel's layout as compile-time arithmetic, shared by the kernel (paged_attention_kernel.cuh), the
// planner and the variants' error models (which need the number of key groups). C++17, host and device.
//
// A block has one or two row sets of kThreads threads. Thread (dim chunk c, key group g) of a set owns head lanes
// [c L, c L + L) (L = lanes_per_thread, 8 or 16) of its set's rows and the keys t of each tile with
// t % key_groups == g. It copies those lanes of its keys' K and V rows into shared memory (16-byte asynchronous
// copies, `stages` tiles in flight; with two row sets one copies K and the other V). With one row set (the
// production shape) a thread reads back only what it copied, so a tile needs no barrier before its use. Per tile:
//   scores   the thread's partial dot products of its keys with its rows (q in registers), summed over the key's
//            dim chunks by a butterfly of shuffles that leaves each lane whole dot products of some rows; the
//            thread's largest score per row goes to shared memory;
//   (barrier: the one per tile)
//   weights  each row's tile max from the key groups' maxima; the rescale factor and every key's weight
//            (online_softmax.h steps), computed by the lanes that hold the row and shuffled to the others;
//   values   o += p v over the thread's keys, for its lanes of its rows; the holders of a row add its weights to
//            their share of the denominator.
// At the end the key groups' sums meet in shared memory and are added in group order.
#pragma once

#if defined(__CUDACC__)
#define PACHECK_LAYOUT_HD __host__ __device__
#else
#define PACHECK_LAYOUT_HD
#endif

namespace pacheck::cuda::layout {

inline constexpr int kThreads = 128;  // per row set
inline constexpr int kTableEntries = 2048;  // block-table entries staged in shared memory (more: read from L2)
inline constexpr int kMaxRows = 8;          // rows (query heads x tokens) a block holds at most

// The head-lane capacity of the layout that serves head_dim (head_dim <= lanes).
PACHECK_LAYOUT_HD constexpr int lanes_for(int head_dim) {
  return head_dim <= 32 ? 32 : head_dim <= 64 ? 64 : head_dim <= 128 ? 128 : 256;
}
// Threads per key (each holds lanes_per_thread head lanes) and key groups per row set.
PACHECK_LAYOUT_HD constexpr int dim_chunks(int lanes, int lanes_per_thread) { return lanes / lanes_per_thread; }
PACHECK_LAYOUT_HD constexpr int key_groups(int lanes, int lanes_per_thread) {
  return kThreads / dim_chunks(lanes, lanes_per_thread);
}
// Tile rows are padded by 16 bytes so that the two keys a warp reads at once fall in different banks.
PACHECK_LAYOUT_HD constexpr int row_bytes(int lanes, int element_bytes) { return lanes * element_bytes + 16; }

// How a kernel instantiation spreads a block's rows over threads and how deep its copy pipeline is: each thread
// holds rows_per_thread rows; row_sets groups of kThreads threads (each group covering every key) hold the
// block's rows_per_thread x row_sets rows; tile_keys keys per tile, `stages` tiles in shared memory.
struct KernelShape {
  int rows_per_thread;
  int row_sets;
  int tile_keys;
  int stages;
  int lanes_per_thread;
};
// The production shape: one row set holding every row of the block (4 or 8), 8 lanes per thread, 32-key tiles;
// two tiles in shared memory for 4 rows (about 45 KB and 128 registers a thread: four blocks per multiprocessor),
// three for 8 rows (whose registers allow two blocks anyway). Measured against the alternatives in cuda/bench
// (reports/gpu/issue8-perf.md).
PACHECK_LAYOUT_HD constexpr KernelShape production_shape(int lanes, int element_bytes, int row_capacity) {
  return KernelShape{row_capacity, 1, lanes * element_bytes >= 1024 ? 16 : 32, row_capacity == 4 ? 2 : 3, 8};
}

PACHECK_LAYOUT_HD constexpr int round_up(int x, int to) { return (x + to - 1) / to * to; }

// Byte offsets of the shared-memory regions.
struct SharedLayout {
  int kv;          // K tiles then V tiles; after the last tile, the key groups' accumulators
  int table;       // staged block-table entries
  int tile_max;    // [2][rows][key_groups] fp32: each key group's largest score per row, by tile parity
  int row_sums;    // [key_groups][rows] denominators, then [rows] maxima
  int total;
};
PACHECK_LAYOUT_HD constexpr SharedLayout shared_layout(int lanes, int element_bytes, int rows, int tile_keys,
                                                       int stages, int lanes_per_thread) {
  SharedLayout s{};
  const int groups = key_groups(lanes, lanes_per_thread);
  const int kv = stages * 2 * tile_keys * row_bytes(lanes, element_bytes);
  const int sums = groups * rows * lanes * 4;
  s.kv = 0;
  s.table = round_up(kv > sums ? kv : sums, 16);
  s.tile_max = s.table + kTableEntries * 4;
  s.row_sums = s.tile_max + 2 * rows * groups * 4;
  s.total = s.row_sums + round_up((groups + 1) * rows * 4, 16);
  return s;
}

}  // namespace pacheck::cuda::layout
