// The launch interface of my_cuda_attention's kernel: device pointers and shapes, no pacheck types (C++17).
#pragma once

#include <cstdint>

// Everything on the device: K and V pools of [num_blocks][block_size][kv_heads][head_dim] floats, queries and output
// of [query_rows][query_heads][head_dim] floats.
struct DeviceAttention {
  const float* k_pool = nullptr;
  const float* v_pool = nullptr;
  const float* queries = nullptr;
  float* output = nullptr;
  const std::int32_t* block_tables = nullptr;  // every sequence's block table, one after another
  const int* row_table_offset = nullptr;       // per query row: where its sequence's table starts in block_tables
  const int* row_position = nullptr;           // per query row: its position; it attends to keys 0..=position
  int query_rows = 0;
  int query_heads = 0;
  int kv_heads = 0;
  int head_dim = 0;  // at most kMaxHeadDim
  int block_size = 0;
  float scale = 1.0f;
};

inline constexpr int kMaxHeadDim = 256;

// Launches one warp per (query row, query head) on the default stream; the caller checks the launch and waits.
void launch_my_cuda_attention(const DeviceAttention& attention);
