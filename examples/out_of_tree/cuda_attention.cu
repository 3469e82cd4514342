// my_cuda_attention's kernel: a warp per (query row, query head) folds the row's keys one at a time into pacheck's
// online-softmax state (variants/online_softmax.h), fp32 on the CUDA cores.
#include "cuda_attention.h"

#include <cstddef>

#include "variants/online_softmax.h"

namespace {

constexpr int kWarp = 32;
constexpr int kLanesPerThread = kMaxHeadDim / kWarp;  // thread `lane` holds head lanes lane, lane + 32, ...

// One thread's lanes of a row of head_dim floats, as OnlineSoftmaxState::fold reads a key's V.
struct ThreadLanes {
  const float* row;
  int lane;
  __host__ __device__ float operator[](int j) const { return row[lane + kWarp * j]; }
};

__global__ void my_cuda_attention_kernel(DeviceAttention a) {
  const int query_row = blockIdx.x / a.query_heads;
  const int head = blockIdx.x % a.query_heads;
  const int kv_head = head / (a.query_heads / a.kv_heads);
  const int lane = threadIdx.x;
  const int lanes = lane < a.head_dim ? (a.head_dim - lane + kWarp - 1) / kWarp : 0;

  const std::size_t row = static_cast<std::size_t>(query_row) * a.query_heads + head;
  const float* query = a.queries + row * a.head_dim;
  float q[kLanesPerThread];
  for (int j = 0; j < lanes; ++j) q[j] = query[lane + kWarp * j];

  pacheck::OnlineSoftmaxState<kLanesPerThread> state;
  state.init(lanes);
  const std::int32_t* table = a.block_tables + a.row_table_offset[query_row];
  for (int t = 0; t <= a.row_position[query_row]; ++t) {
    const std::size_t slot =
        (static_cast<std::size_t>(table[t / a.block_size]) * a.block_size + t % a.block_size) * a.kv_heads + kv_head;
    const float* key = a.k_pool + slot * a.head_dim;
    float dot = 0.0f;
    for (int j = 0; j < lanes; ++j) dot += q[j] * key[lane + kWarp * j];
    for (int offset = kWarp / 2; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
    const float score = dot * a.scale;  // every lane holds the same score, so every lane keeps the same (m, d)
    const ThreadLanes value{a.v_pool + slot * a.head_dim, lane};
    state.fold(&score, 1, [&](int) { return value; }, lanes);
  }
  float* out = a.output + row * a.head_dim;
  for (int j = 0; j < lanes; ++j) out[lane + kWarp * j] = state.o[j] / state.d;
}

}  // namespace

void launch_my_cuda_attention(const DeviceAttention& attention) {
  const int blocks = attention.query_rows * attention.query_heads;
  if (blocks > 0) my_cuda_attention_kernel<<<blocks, kWarp>>>(attention);
}
