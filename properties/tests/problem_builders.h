// Small hand-built problems for the example-based tests.
#pragma once

#include <numeric>
#include <vector>

#include "problem/problem.h"

namespace pacheck::testing {

// One sequence, MHA with `heads` heads, the identity block table, every value filled by `fill(index)` and
// rounded to the dtype.
template <typename Fill>
Problem single_sequence(int context_len, int num_queries, int heads, int head_dim, int block_size, Fill fill,
                        DType dtype = DType::f32) {
  Problem p;
  p.dtype = dtype;
  p.num_query_heads = heads;
  p.num_kv_heads = heads;
  p.head_dim = head_dim;
  p.block_size = block_size;
  p.num_blocks = (context_len + block_size - 1) / block_size;
  Sequence s;
  s.context_len = context_len;
  s.num_queries = num_queries;
  s.block_table.resize(p.num_blocks);
  std::iota(s.block_table.begin(), s.block_table.end(), 0);
  p.sequences.push_back(s);
  p.k_pool.resize(p.pool_size());
  p.v_pool.resize(p.pool_size());
  p.queries.resize(static_cast<std::size_t>(num_queries) * heads * head_dim);
  int i = 0;
  for (float& x : p.k_pool) x = round_to_dtype_f(fill(i++), dtype);
  for (float& x : p.v_pool) x = round_to_dtype_f(fill(i++), dtype);
  for (float& x : p.queries) x = round_to_dtype_f(fill(i++), dtype);
  return p;
}

// A deterministic, irregular fill: values in about [-2, 2].
inline double wobble(int i) { return 2.0 * std::sin(0.7 * i + 0.3 * (i % 7)) * std::cos(0.11 * i); }

}  // namespace pacheck::testing
