#include "properties/problem_spec.h"
#include "properties/splitmix.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

namespace pacheck {

namespace {

// The name of enum value `e` in `names`, listed in the enum's order.
template <typename E, std::size_t N>
const char* name_in(E e, const char* const (&names)[N]) {
  const auto i = static_cast<std::size_t>(e);
  return i < N ? names[i] : "?";
}

}  // namespace

const char* value_kind_name(ValueKind kind) {
  return name_in(kind, {"normal", "all_negative", "extremely_negative", "identical_keys", "integer_valued",
                        "near_range", "below_sentinel"});
}
const char* poison_name(Poison poison) { return name_in(poison, {"none", "nan", "+inf", "-inf", "huge"}); }
const char* window_choice_name(WindowChoice choice) {
  return name_in(choice, {"none", "one", "block_size", "context", "beyond", "inside"});
}
const char* soft_cap_choice_name(SoftCapChoice choice) {
  return name_in(choice, {"none", "saturating", "curved", "gemma", "linear"});
}
const char* alibi_choice_name(AlibiChoice choice) { return name_in(choice, {"none", "geometric", "steep"}); }
const char* sink_choice_name(SinkChoice choice) { return name_in(choice, {"-inf", "among", "far_above", "far_below"}); }
const char* fp8_scale_choice_name(Fp8ScaleChoice choice) {
  return name_in(choice, {"amax", "amax-per-head", "power-of-two", "underflowing"});
}

namespace {

using Rng = SplitMix;

// Calls f(kv_head, offset) for the K/V vector of every referenced (sequence, key, KV head), shared ones once each
// time they are referenced.
template <typename F>
void for_each_referenced(const Problem& p, F&& f) {
  for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s)
    for (int t = 0; t < p.sequences[s].context_len; ++t)
      for (int h = 0; h < p.num_kv_heads; ++h) f(h, p.kv_offset(s, t, h));
}

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
  std::vector<SequenceSpec> shapes = spec.sequences;
  if (spec.forked)
    for (std::size_t s = 1; s < shapes.size(); ++s) {
      shapes[s].context_len = std::min(shapes[s].context_len, shapes[0].context_len);
      shapes[s].num_queries = std::min(shapes[s].num_queries, shapes[s].context_len);
    }
  std::vector<int> needed;
  for (const SequenceSpec& s : shapes) needed.push_back((s.context_len + spec.block_size - 1) / spec.block_size);
  // Shared prefix: later sequences reuse the first's leading blocks that are full in both.
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
  // Padding, which a kernel must never follow: unreferenced (poisoned) blocks, as in a recycled table row, or ids
  // outside the pool.
  const int invalid_ids[] = {-1, p.num_blocks, std::numeric_limits<std::int32_t>::max(),
                             std::numeric_limits<std::int32_t>::min()};
  for (Sequence& seq : p.sequences) {
    for (int k = 0; k < spec.table_padding; ++k) {
      seq.block_table.push_back(spec.padding_invalid ? invalid_ids[rng.below(4)]
                                                     : physical[next + rng.below(p.num_blocks - next)]);
    }
  }
}

// Fills q, k, v of the referenced slots by the value kind, and the poison elsewhere.
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
      // q, -k in [250, 300]: each product >= 62,500, so at scale 1/sqrt(d) every logit < -62,500 sqrt(d) < -6e4.
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
  for_each_referenced(p, [&](int, std::size_t off) {
    if (referenced[off / d]) return;  // a shared prefix slot keeps its first value
    referenced[off / d] = 1;
    for (int i = 0; i < d; ++i) {
      p.k_pool[off + i] = round(k_value(i));
      p.v_pool[off + i] = round(v_value());
    }
  });
  const float poison = poison_value(spec.poison, dt);
  for (std::size_t slot = 0; slot < referenced.size(); ++slot) {
    if (referenced[slot]) continue;
    for (int i = 0; i < d; ++i) p.k_pool[slot * d + i] = p.v_pool[slot * d + i] = poison;
  }
  p.queries.resize(static_cast<std::size_t>(p.total_queries()) * p.num_query_heads * d);
  for (std::size_t i = 0; i < p.queries.size(); ++i) p.queries[i] = round(q_value(static_cast<int>(i % d)));
}

// The size of the plain logits scale * q . k over referenced slots: `typical` = |scale| sqrt(d) rms(q) rms(k) (that
// of unrelated vectors), `bound` = |scale| d max|q| max|k| (above every one).
struct LogitSize {
  double typical = 0;
  double bound = 0;
};

LogitSize logit_size(const Problem& p) {
  const int d = p.head_dim;
  double q_sq = 0, q_max = 0, k_sq = 0, k_max = 0;
  for (float x : p.queries) {
    q_sq += static_cast<double>(x) * x;
    q_max = std::max(q_max, std::fabs(static_cast<double>(x)));
  }
  std::size_t k_count = 0;
  for_each_referenced(p, [&](int, std::size_t off) {
    for (int i = 0; i < d; ++i) {
      const double k = p.k_pool[off + i];
      k_sq += k * k;
      k_max = std::max(k_max, std::fabs(k));
    }
    k_count += d;
  });
  const double scale = std::fabs(static_cast<double>(p.scale()));
  LogitSize size;
  size.typical = scale * std::sqrt(static_cast<double>(d)) * std::sqrt(q_sq / std::max<std::size_t>(1, p.queries.size())) *
                 std::sqrt(k_sq / std::max<std::size_t>(1, k_count));
  size.bound = scale * d * q_max * k_max;
  return size;
}

// x clamped to [2^-20, FLT_MAX / 4] (1 if x is not positive and finite): a cap or sink that validates and stays
// finite.
float positive_float(double x) {
  if (!(x > 0) || !std::isfinite(x)) return 1.0f;
  return static_cast<float>(std::clamp(x, std::ldexp(1.0, -20), static_cast<double>(FLT_MAX) / 4));
}

// The logit of a random visible (query, key) pair with the options resolved so far: a sink "among" the logits.
double sampled_logit(const Problem& p, Rng& rng, int query_head) {
  const int s = rng.below(static_cast<int>(p.sequences.size()));
  const Sequence& seq = p.sequences[s];
  const int token = rng.below(seq.num_queries);
  const int position = seq.first_query_position() + token;
  const int key = p.first_visible_key(position) + rng.below(position - p.first_visible_key(position) + 1);
  const float* q = &p.queries[p.query_offset(s, token, query_head)];
  const float* k = &p.k_pool[p.kv_offset(s, key, p.kv_head_of(query_head))];
  double logit = 0;
  for (int i = 0; i < p.head_dim; ++i) logit += static_cast<double>(q[i]) * k[i];
  logit *= p.scale();
  const LogitOptions& o = p.options;
  if (o.soft_cap) logit = *o.soft_cap * std::tanh(logit / *o.soft_cap);
  if (!o.alibi_slopes.empty()) logit += static_cast<double>(o.alibi_slopes[query_head]) * (key - position);
  return logit;
}

// Resolves the option choices against the materialised problem, in problem.h's order (so a sink among the logits
// sees the cap and biases).
void resolve_options(const LogitOptionSpec& spec, Problem& p, Rng& rng) {
  int longest = 1;
  for (const Sequence& s : p.sequences) longest = std::max(longest, s.context_len);
  LogitOptions& o = p.options;
  switch (spec.window) {
    case WindowChoice::none: break;
    case WindowChoice::one: o.window = 1; break;
    case WindowChoice::block_size: o.window = p.block_size; break;
    case WindowChoice::context:
      o.window = p.sequences[rng.below(static_cast<int>(p.sequences.size()))].context_len;
      break;
    case WindowChoice::beyond: o.window = longest + 1 + rng.below(p.block_size); break;
    case WindowChoice::inside: o.window = 1 + rng.below(longest); break;
  }
  const LogitSize size = logit_size(p);
  const double jitter = 1 + rng.uniform();  // so that the cap is no fixed fraction of the logits
  switch (spec.soft_cap) {
    case SoftCapChoice::none: break;
    case SoftCapChoice::saturating: o.soft_cap = positive_float(size.typical / 16 * jitter); break;
    case SoftCapChoice::curved: o.soft_cap = positive_float(size.typical * jitter); break;
    case SoftCapChoice::gemma: o.soft_cap = 50.0f; break;
    case SoftCapChoice::linear: o.soft_cap = positive_float(size.bound * 64 * jitter); break;
  }
  if (spec.alibi != AlibiChoice::none) {
    const int heads = p.num_query_heads;
    const double steepness = spec.alibi == AlibiChoice::steep ? 8 : 0;
    for (int h = 0; h < heads; ++h)
      o.alibi_slopes.push_back(static_cast<float>(std::exp2(steepness - 8.0 * (h + 1) / heads)));
  }
  if (!spec.sinks.empty()) {
    // Logits lie within `bound` of 0, biases lower them by at most steepest slope x longest distance; 128 more puts
    // a weight below fp32's smallest subnormal.
    double steepest = 0;
    for (float slope : o.alibi_slopes) steepest = std::max(steepest, std::fabs(static_cast<double>(slope)));
    const double far = 2 * size.bound + 128, below = far + steepest * longest;
    for (int h = 0; h < p.num_query_heads; ++h) {
      switch (spec.sinks[h % spec.sinks.size()]) {
        case SinkChoice::minus_infinity: o.sinks.push_back(-INFINITY); break;
        case SinkChoice::among: o.sinks.push_back(static_cast<float>(sampled_logit(p, rng, h))); break;
        case SinkChoice::far_above: o.sinks.push_back(positive_float(far)); break;
        case SinkChoice::far_below: o.sinks.push_back(-positive_float(below)); break;
      }
    }
  }
}

// Quantises the pools into the spec's fp8 cache, with scales from the referenced slots only (poison must not move
// them: MaskedLanesZeroWeight compares a clean and a poisoned problem).
void quantise_pools(const Fp8Spec& spec, Problem& p) {
  if (!spec.format) return;
  const Fp8Format format = *spec.format;
  const FloatFormat f = float_format(format);
  const std::size_t d = p.head_dim;
  std::vector<double> k_amax(p.num_kv_heads, 0), v_amax(p.num_kv_heads, 0);
  const auto grow = [](double& amax, float x) {
    if (std::isfinite(x)) amax = std::max(amax, std::fabs(static_cast<double>(x)));
  };
  for_each_referenced(p, [&](int h, std::size_t at) {
    for (std::size_t i = 0; i < d; ++i) {
      grow(k_amax[h], p.k_pool[at + i]);
      grow(v_amax[h], p.v_pool[at + i]);
    }
  });
  // The scale for a tensor of largest magnitude `amax`: a normal fp32 (clamped), 1 for an all-zero tensor.
  const auto scale_for = [&](double amax) {
    if (amax == 0) return 1.0f;
    double scale = amax / f.max_finite;
    if (spec.scales == Fp8ScaleChoice::power_of_two) scale = std::exp2(std::ceil(std::log2(scale)));
    if (spec.scales == Fp8ScaleChoice::underflowing) scale = amax / std::ldexp(1.0, f.min_normal_exponent);
    // Rounded up, so amax / scale stays finite.
    const float rounded_up = std::nextafter(static_cast<float>(scale), INFINITY);
    const float chosen = spec.scales == Fp8ScaleChoice::power_of_two ? static_cast<float>(scale) : rounded_up;
    return std::clamp(chosen, 0x1p-126f, std::numeric_limits<float>::max());
  };
  const auto per_tensor = [](const std::vector<double>& amax) { return *std::max_element(amax.begin(), amax.end()); };
  Fp8Cache cache{format, {}, {}};
  if (spec.scales == Fp8ScaleChoice::amax_per_head) {
    for (int h = 0; h < p.num_kv_heads; ++h) {
      cache.k_scales.push_back(scale_for(k_amax[h]));
      cache.v_scales.push_back(scale_for(v_amax[h]));
    }
  } else {
    cache.k_scales = {scale_for(per_tensor(k_amax))};
    cache.v_scales = {scale_for(per_tensor(v_amax))};
  }
  for (std::size_t e = 0; e < p.k_pool.size(); ++e) {
    const int h = static_cast<int>(e / d % p.num_kv_heads);
    p.k_pool[e] = static_cast<float>(round_to_fp8(p.k_pool[e] / static_cast<double>(cache.k_scale(h)), format));
    p.v_pool[e] = static_cast<float>(round_to_fp8(p.v_pool[e] / static_cast<double>(cache.v_scale(h)), format));
  }
  p.fp8_cache = std::move(cache);
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
  // After the data, so the data is the same with the options or without.
  resolve_options(spec.options, p, rng);
  quantise_pools(spec.fp8, p);
  return p;
}

std::string describe(const ProblemSpec& spec) {
  std::ostringstream out;
  out << "values=" << value_kind_name(spec.values) << " spread=" << spec.spread << " poison=" << poison_name(spec.poison)
      << " spare_blocks=" << spec.spare_blocks << " shared_prefix=" << spec.shared_prefix << " forked=" << spec.forked
      << " table_padding=" << spec.table_padding << (spec.padding_invalid ? " (invalid ids)" : " (poisoned blocks)")
      << " seed=" << spec.seed;
  const LogitOptionSpec& o = spec.options;
  if (spec.fp8.format)
    out << " kv_cache=" << fp8_name(*spec.fp8.format) << " scales=" << fp8_scale_choice_name(spec.fp8.scales);
  if (o.window != WindowChoice::none) out << " window=" << window_choice_name(o.window);
  if (o.soft_cap != SoftCapChoice::none) out << " soft_cap=" << soft_cap_choice_name(o.soft_cap);
  if (o.alibi != AlibiChoice::none) out << " alibi=" << alibi_choice_name(o.alibi);
  if (!o.sinks.empty()) {
    out << " sinks=[";
    for (std::size_t i = 0; i < o.sinks.size(); ++i) out << (i ? " " : "") << sink_choice_name(o.sinks[i]);
    out << "]";
  }
  return out.str();
}

}  // namespace pacheck
