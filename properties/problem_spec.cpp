#include "properties/problem_spec.h"
#include "properties/splitmix.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

namespace pacheck {

const char* value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::normal: return "normal";
    case ValueKind::all_negative: return "all_negative";
    case ValueKind::extremely_negative: return "extremely_negative";
    case ValueKind::identical_keys: return "identical_keys";
    case ValueKind::integer_valued: return "integer_valued";
    case ValueKind::near_range: return "near_range";
    case ValueKind::below_sentinel: return "below_sentinel";
  }
  return "?";
}

const char* poison_name(Poison poison) {
  switch (poison) {
    case Poison::none: return "none";
    case Poison::nan: return "nan";
    case Poison::pos_inf: return "+inf";
    case Poison::neg_inf: return "-inf";
    case Poison::huge: return "huge";
  }
  return "?";
}

namespace {

using Rng = SplitMix;

float poison_value(Poison poison, DType dtype) {
  switch (poison) {
    case Poison::nan: return std::numeric_limits<float>::quiet_NaN();
    case Poison::pos_inf: return INFINITY;
    case Poison::neg_inf: return -INFINITY;
    case Poison::huge: return static_cast<float>(float_format(dtype).max_finite);
    case Poison::none: break;
  }
  return 0.0f;
}

// Lays out the tables: shuffled physical placement in a pool with spare blocks, optional shared prefix blocks.
void place_blocks(const ProblemSpec& spec, Problem& p, Rng& rng) {
  // A fork's context is at most the first sequence's (it shares the first one's blocks).
  std::vector<SequenceSpec> shapes = spec.sequences;
  if (spec.forked)
    for (std::size_t s = 1; s < shapes.size(); ++s) {
      shapes[s].context_len = std::min(shapes[s].context_len, shapes[0].context_len);
      shapes[s].num_queries = std::min(shapes[s].num_queries, shapes[s].context_len);
    }
  std::vector<int> needed;
  for (const SequenceSpec& s : shapes) needed.push_back((s.context_len + spec.block_size - 1) / spec.block_size);
  // Shared prefix: later sequences reuse the first sequence's leading blocks that are full in both.
  std::vector<int> shared(shapes.size(), 0);
  if (spec.forked) {
    for (std::size_t s = 1; s < shapes.size(); ++s) shared[s] = needed[s];  // every block, the partial tail too
  } else if (spec.shared_prefix) {
    for (std::size_t s = 1; s < shapes.size(); ++s)
      shared[s] = std::min(shapes[0].context_len, shapes[s].context_len) / spec.block_size;
  }
  int distinct = 0;
  for (std::size_t s = 0; s < needed.size(); ++s) distinct += needed[s] - shared[s];
  const bool poisoned_padding = spec.table_padding > 0 && !spec.padding_invalid;
  p.num_blocks = distinct + spec.spare_blocks + (poisoned_padding && spec.spare_blocks == 0 ? 1 : 0);
  const std::vector<int> physical = rng.permutation(p.num_blocks);
  int next = 0;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    Sequence seq;
    seq.context_len = shapes[s].context_len;
    seq.num_queries = shapes[s].num_queries;
    for (int b = 0; b < needed[s]; ++b)
      seq.block_table.push_back(b < shared[s] ? p.sequences[0].block_table[b] : physical[next++]);
    p.sequences.push_back(std::move(seq));
  }
  // Padding: ids a kernel must never follow. Poisoned padding points at unreferenced (poisoned) blocks, the way a
  // recycled table row does; invalid padding holds ids outside the pool.
  const int invalid_ids[] = {-1, p.num_blocks, std::numeric_limits<std::int32_t>::max(),
                             std::numeric_limits<std::int32_t>::min()};
  for (Sequence& seq : p.sequences) {
    for (int k = 0; k < spec.table_padding; ++k) {
      seq.block_table.push_back(spec.padding_invalid ? invalid_ids[rng.below(4)]
                                                     : physical[next + rng.below(p.num_blocks - next)]);
    }
  }
}

// Fills q, k, v for referenced slots according to the value kind; returns nothing, writes p.
void fill_values(const ProblemSpec& spec, Problem& p, Rng& rng) {
  const DType dt = spec.dtype;
  const auto round = [&](double x) { return round_to_dtype_f(x, dt); };
  const int d = p.head_dim;
  const double sq = std::sqrt(spec.spread);
  int max_context = 1;
  for (const Sequence& s : p.sequences) max_context = std::max(max_context, s.context_len);
  // near_range: V as large as the dtype allows while n * |v| stays inside fp32 (see OracleResult::fits_fp32).
  const double v_limit = std::min(float_format(dt).max_finite, static_cast<double>(FLT_MAX) / 4096 / max_context);
  std::vector<float> fixed_key(d);
  for (float& x : fixed_key) x = round(rng.normal());

  const auto q_value = [&](int) -> double {
    switch (spec.values) {
      case ValueKind::normal: return sq * rng.normal();
      case ValueKind::all_negative: return 1 + rng.uniform();
      case ValueKind::extremely_negative: return 30 + 10 * rng.uniform();
      case ValueKind::integer_valued: return rng.below(7) - 3;
      case ValueKind::below_sentinel: return 250 + 50 * rng.uniform();
      default: return rng.normal();
    }
  };
  const auto k_value = [&](int i) -> double {
    switch (spec.values) {
      case ValueKind::normal: return sq * rng.normal();
      case ValueKind::all_negative: return -(2 + 8 * rng.uniform());
      case ValueKind::extremely_negative: return -(30 + 10 * rng.uniform()) * std::sqrt(static_cast<double>(d)) / d * 10;
      case ValueKind::identical_keys: return fixed_key[i];
      case ValueKind::integer_valued: return rng.below(7) - 3;
      // q in [250, 300] and k in -[250, 300]: every product at least 62,500, so with the default scale
      // 1/sqrt(head_dim) every logit is below -62,500 * sqrt(head_dim) < -6e4, in every dtype.
      case ValueKind::below_sentinel: return -(250 + 50 * rng.uniform());
      default: return rng.normal();
    }
  };
  const auto v_value = [&]() -> double {
    switch (spec.values) {
      case ValueKind::integer_valued: return rng.below(17) - 8;
      case ValueKind::near_range: return (0.5 + 0.5 * rng.uniform()) * v_limit * (rng.below(2) ? 1 : -1);
      default: return rng.normal();
    }
  };

  p.k_pool.assign(p.pool_size(), 0.0f);
  p.v_pool.assign(p.pool_size(), 0.0f);
  std::vector<char> referenced(p.pool_size() / d, 0);  // per (block, slot, kv head)
  for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s) {
    for (int t = 0; t < p.sequences[s].context_len; ++t) {
      for (int h = 0; h < p.num_kv_heads; ++h) {
        const std::size_t off = p.kv_offset(s, t, h);
        if (referenced[off / d]) continue;  // a shared prefix slot keeps its first value
        referenced[off / d] = 1;
        for (int i = 0; i < d; ++i) {
          p.k_pool[off + i] = round(k_value(i));
          p.v_pool[off + i] = round(v_value());
        }
      }
    }
  }
  const float poison = poison_value(spec.poison, dt);
  for (std::size_t slot = 0; slot < referenced.size(); ++slot) {
    if (referenced[slot]) continue;
    for (int i = 0; i < d; ++i) p.k_pool[slot * d + i] = p.v_pool[slot * d + i] = poison;
  }
  p.queries.resize(static_cast<std::size_t>(p.total_queries()) * p.num_query_heads * d);
  for (std::size_t i = 0; i < p.queries.size(); ++i) p.queries[i] = round(q_value(static_cast<int>(i % d)));
}

}  // namespace

Problem materialize(const ProblemSpec& spec) {
  Problem p;
  p.dtype = spec.dtype;
  p.num_kv_heads = spec.num_kv_heads;
  p.num_query_heads = spec.num_kv_heads * spec.gqa_ratio;
  p.head_dim = spec.head_dim;
  p.block_size = spec.block_size;
  p.explicit_scale = spec.explicit_scale;
  Rng rng(spec.seed);
  place_blocks(spec, p, rng);
  fill_values(spec, p, rng);
  return p;
}

std::string describe(const ProblemSpec& spec) {
  std::ostringstream out;
  out << "values=" << value_kind_name(spec.values) << " spread=" << spec.spread << " poison=" << poison_name(spec.poison)
      << " spare_blocks=" << spec.spare_blocks << " shared_prefix=" << spec.shared_prefix << " forked=" << spec.forked
      << " table_padding=" << spec.table_padding << (spec.padding_invalid ? " (invalid ids)" : " (poisoned blocks)")
      << " seed=" << spec.seed;
  return out.str();
}

}  // namespace pacheck
