// The CPU model of a paged-attention launch grid, shared by the CPU variants: one program per (sequence, query
// token, query head) row, the fp32 score of a key, masked reads through the block table.
#pragma once

#include <algorithm>
#include <cstddef>

#include "problem/problem.h"
#include "variants/online_softmax.h"
#include "variants/variant.h"

namespace pacheck {

// CPU variants keep a whole head in one online-softmax state.
inline constexpr int kCpuMaxHeadDim = 512;
using CpuSoftmaxState = OnlineSoftmaxState<kCpuMaxHeadDim>;

// Every dtype, mode, logit option and fp8 format, heads up to kCpuMaxHeadDim.
inline Capabilities cpu_capabilities() {
  Capabilities c;
  c.dtypes = {DType::f32, DType::f16, DType::bf16};
  c.modes = {Mode::decode, Mode::prefill, Mode::continuation};
  c.max_head_dim = kCpuMaxHeadDim;
  c.logit_options = LogitOptionSupport::all();
  c.fp8_caches = {Fp8Format::e4m3, Fp8Format::e5m2};
  return c;
}

// One program of the grid.
struct RowProgram {
  int sequence = 0;
  int token = 0;       // new query token index within its sequence
  int query_head = 0;
  int kv_head = 0;
  int position = 0;    // the query's position in its sequence: it attends to keys first_key ..= position
  int first_key = 0;   // 0, or the start of its sliding window
  int context_len = 0;
  std::size_t row = 0;     // index into OracleResult::rows
  std::size_t offset = 0;  // of the query vector, and of the output vector
};

template <typename Body>
void for_each_row(const Problem& p, Body&& body) {
  RowProgram r;
  for (r.sequence = 0; r.sequence < static_cast<int>(p.sequences.size()); ++r.sequence) {
    const Sequence& seq = p.sequences[r.sequence];
    r.context_len = seq.context_len;
    for (r.token = 0; r.token < seq.num_queries; ++r.token) {
      r.position = seq.first_query_position() + r.token;
      r.first_key = p.first_visible_key(r.position);
      for (r.query_head = 0; r.query_head < p.num_query_heads; ++r.query_head) {
        r.kv_head = p.kv_head_of(r.query_head);
        r.offset = p.query_offset(r.sequence, r.token, r.query_head);
        r.row = r.offset / p.head_dim;
        body(r);
      }
    }
  }
}

// The fp32 logit: a sequential dot product, then the scale.
inline float score_fp32(const float* q, const float* k, int head_dim, float scale) {
  float dot = 0.0f;
  for (int i = 0; i < head_dim; ++i) dot += q[i] * k[i];
  return dot * scale;
}

// The fp32 logit of key `key` with the problem's logit options, in problem.h's order.
inline float logit_fp32(const Problem& p, const RowProgram& row, const float* q, const float* k, int key) {
  float s = score_fp32(q, k, p.head_dim, p.scale());
  const LogitOptions& o = p.options;
  if (o.soft_cap) s = soft_capped(s, *o.soft_cap);
  if (!o.alibi_slopes.empty()) s = alibi_biased(s, o.alibi_slopes[row.query_head], key, row.position);
  return s;
}

// An fp8 cache's vector in fp32: each element times the head's scale, one rounding each.
inline const float* dequantised(const float* stored, float scale, int head_dim, float* out) {
  for (int i = 0; i < head_dim; ++i) out[i] = stored[i] * scale;
  return out;
}

// Masked loads: lanes past the context read nothing (not even the table) and yield a zero row, like `other=0`. An
// fp8 cache's vector is dequantised into a buffer valid until the next load.
struct MaskedKvReader {
  const Problem& problem;
  const RowProgram& row;
  float zeros[kCpuMaxHeadDim] = {};
  mutable float key_buffer[kCpuMaxHeadDim] = {};
  mutable float value_buffer[kCpuMaxHeadDim] = {};

  bool in_bounds(int position) const { return position < row.context_len; }
  const float* key(int position) const {
    if (!in_bounds(position)) return zeros;
    const float* stored = &problem.k_pool[problem.kv_offset(row.sequence, position, row.kv_head)];
    const std::optional<Fp8Cache>& fp8 = problem.fp8_cache;
    return fp8 ? dequantised(stored, fp8->k_scale(row.kv_head), problem.head_dim, key_buffer) : stored;
  }
  const float* value(int position) const {
    if (!in_bounds(position)) return zeros;
    const float* stored = &problem.v_pool[problem.kv_offset(row.sequence, position, row.kv_head)];
    const std::optional<Fp8Cache>& fp8 = problem.fp8_cache;
    return fp8 ? dequantised(stored, fp8->v_scale(row.kv_head), problem.head_dim, value_buffer) : stored;
  }
};

// Folds keys [begin, end) into the state, tile_size keys at a time, masking the ragged tail, the causal future and
// the keys before the window: cpu_streaming's loop.
inline void fold_key_range(const Problem& p, const RowProgram& row, int begin, int end, int tile_size,
                           CpuSoftmaxState& state) {
  const MaskedKvReader reader{p, row};
  const float* q = &p.queries[row.offset];
  float scores[kCpuMaxHeadDim];  // tiles larger than this are walked in chunks: same arithmetic per chunk
  const int step = std::min(tile_size, kCpuMaxHeadDim);
  for (int tile = begin; tile < end; tile += step) {
    for (int lane = 0; lane < step; ++lane) {
      const int t = tile + lane;
      const float s = logit_fp32(p, row, q, reader.key(t), t);
      // Out of bounds, future, before the window or past the range: weight exactly zero.
      const bool masked = !reader.in_bounds(t) || t > row.position || t < row.first_key || t >= end;
      scores[lane] = masked ? -INFINITY : s;
    }
    state.fold(scores, step, [&](int lane) { return reader.value(tile + lane); }, p.head_dim);
  }
}

// Folds the row's sink (a logit with a zero value) as a tile of one key; -inf (none) changes nothing.
inline void fold_sink(const Problem& p, const RowProgram& row, CpuSoftmaxState& state) {
  static const float zeros[kCpuMaxHeadDim] = {};
  const float sink = p.sink(row.query_head);
  state.fold(&sink, 1, [&](int) { return zeros; }, p.head_dim);
}

inline void store_output(const Problem& p, const RowProgram& row, const CpuSoftmaxState& state, float* out) {
  float normalized[kCpuMaxHeadDim];
  state.normalize(normalized, p.head_dim);
  for (int j = 0; j < p.head_dim; ++j) out[row.offset + j] = round_to_dtype_f(normalized[j], p.dtype);
}

}  // namespace pacheck
