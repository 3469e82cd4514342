// The steps properties are built from, and the problem transformations behind the invariance properties.
#include "properties/property_steps.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace pacheck::steps {

int longest_context(const Problem& p) {
  int n = 1;
  for (const Sequence& s : p.sequences) n = std::max(n, s.context_len);
  return n;
}

DrawnCase draw_case(const PropertyContext& ctx) {
  return draw_case(ctx, [](ProblemSpec&) {});
}

void observe(const PropertyContext& ctx, const std::string& property, const Problem& p, const Knobs& k,
             const Agreement* a) {
  if (ctx.observer) ctx.observer(CaseObservation{property, p, k, a});
}

std::string knobs_line(const Knobs& k) { return "knobs: " + knobs_text(k) + "\n"; }

OracleResult oracle_for(const Problem& p, const Knobs& knobs) {
  OracleResult oracle = run_oracle(p, oracle_split_sizes(p, knobs));
  RC_PRE(oracle.fits_fp32);
  return oracle;
}

Output run_and_check(const PropertyContext& ctx, const std::string& property, const Problem& p, const Knobs& knobs,
                     const OracleResult& oracle, const ModelRefinement& refine_model) {
  const Output out = ctx.variant->run(p, knobs);
  const Agreement a = compare_with_oracle(p, oracle, *ctx.variant, knobs, out, refine_model);
  observe(ctx, property, p, knobs, &a);
  if (!a.ok) {
    const std::string replay = save_failure(ctx, property, p, knobs, "exceeds its error bound");
    RC_FAIL(describe_failure(p, *ctx.variant, knobs, a) + "replay: " + replay);
  }
  return out;
}

void require_bit_identical(const PropertyContext& ctx, const std::string& property, const Problem& p,
                           const Knobs& knobs, const Output& a, const Output& b, const std::string& what) {
  std::size_t first = a.size() == b.size() ? a.size() : 0;
  for (std::size_t i = 0; i < a.size() && i < b.size() && first == a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0 || (std::isnan(b[i]) && !std::isnan(a[i]))) first = i;
  if (first == a.size()) return;
  std::ostringstream msg;
  msg.precision(10);
  msg << what << " changed the output of " << ctx.variant->name() << "\n" << describe(p) << knobs_line(knobs);
  if (a.size() != b.size())
    msg << "output sizes differ: " << a.size() << " vs " << b.size() << "\n";
  else
    msg << "first difference: " << element_position(p, first) << ": " << a[first] << " vs " << b[first] << "\n";
  RC_FAIL(msg.str() + "replay: " + save_failure(ctx, property, p, knobs, what + " changed the output"));
}

void require_same_output(const PropertyContext& ctx, const std::string& property, const Problem& a, const Problem& b,
                         const Knobs& knobs, const std::string& what) {
  const Output a_out = ctx.variant->run(a, knobs);
  const Output b_out = ctx.variant->run(b, knobs);
  observe(ctx, property, b, knobs, nullptr);
  require_bit_identical(ctx, property, b, knobs, a_out, b_out, what);
}

}  // namespace pacheck::steps

namespace pacheck {

Problem relabel_blocks(const Problem& p, const std::vector<int>& permutation) {
  Problem q = p;
  const std::size_t block = static_cast<std::size_t>(p.block_size) * p.num_kv_heads * p.head_dim;
  for (int b = 0; b < p.num_blocks; ++b) {
    std::memcpy(&q.k_pool[permutation[b] * block], &p.k_pool[b * block], block * sizeof(float));
    std::memcpy(&q.v_pool[permutation[b] * block], &p.v_pool[b * block], block * sizeof(float));
  }
  for (Sequence& s : q.sequences)
    for (std::int32_t& id : s.block_table)
      if (id >= 0 && id < p.num_blocks) id = permutation[id];
  return q;
}

Problem replicate_kv_heads(const Problem& p) {
  Problem q = p;
  q.num_kv_heads = p.num_query_heads;
  // Per-head fp8 scales follow their heads; a per-tensor scale stays one.
  if (q.fp8_cache && p.num_kv_heads > 1) {
    Fp8Cache& c = *q.fp8_cache;
    c.k_scales.clear();
    c.v_scales.clear();
    for (int h = 0; h < p.num_query_heads; ++h) {
      c.k_scales.push_back(p.fp8_cache->k_scale(p.kv_head_of(h)));
      c.v_scales.push_back(p.fp8_cache->v_scale(p.kv_head_of(h)));
    }
  }
  q.k_pool.assign(q.pool_size(), 0.0f);
  q.v_pool.assign(q.pool_size(), 0.0f);
  for (int b = 0; b < p.num_blocks; ++b) {
    for (int slot = 0; slot < p.block_size; ++slot) {
      for (int h = 0; h < p.num_query_heads; ++h) {
        const std::size_t from = p.kv_offset_physical(b, slot, p.kv_head_of(h));
        const std::size_t to = q.kv_offset_physical(b, slot, h);
        std::memcpy(&q.k_pool[to], &p.k_pool[from], p.head_dim * sizeof(float));
        std::memcpy(&q.v_pool[to], &p.v_pool[from], p.head_dim * sizeof(float));
      }
    }
  }
  return q;
}

Problem select_sequences(const Problem& p, const std::vector<int>& order) {
  Problem q = p;
  q.sequences.clear();
  q.queries.clear();
  const std::size_t row = static_cast<std::size_t>(p.num_query_heads) * p.head_dim;
  for (int s : order) {
    q.sequences.push_back(p.sequences[s]);
    const float* first = &p.queries[p.query_offset(s, 0, 0)];
    q.queries.insert(q.queries.end(), first, first + row * p.sequences[s].num_queries);
  }
  return q;
}

Output sequence_rows(const Problem& p, const Output& output, int s) {
  const std::size_t begin = p.query_offset(s, 0, 0);
  const std::size_t count = static_cast<std::size_t>(p.sequences[s].num_queries) * p.num_query_heads * p.head_dim;
  return Output(output.begin() + begin, output.begin() + begin + count);
}

bool scale_referenced_values(Problem& p, int exponent) {
  std::vector<char> done(p.pool_size() / p.head_dim, 0);
  for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s) {
    for (int t = 0; t < p.sequences[s].context_len; ++t) {
      for (int h = 0; h < p.num_kv_heads; ++h) {
        const std::size_t off = p.kv_offset(s, t, h);
        if (done[off / p.head_dim]) continue;  // shared prefix blocks are scaled once
        done[off / p.head_dim] = 1;
        for (int i = 0; i < p.head_dim; ++i) {
          const double scaled = std::ldexp(static_cast<double>(p.v_pool[off + i]), exponent);
          // In the pool's own format: the dtype's, or an fp8 cache's.
          const FloatFormat f = p.fp8_cache ? float_format(p.fp8_cache->format) : float_format(p.dtype);
          const bool subnormal = scaled != 0 && std::fabs(scaled) < std::ldexp(1.0, f.min_normal_exponent);
          const double rounded = p.fp8_cache ? round_to_fp8(scaled, p.fp8_cache->format) : round_to_dtype(scaled, p.dtype);
          if (subnormal || rounded != scaled) return false;
          p.v_pool[off + i] = static_cast<float>(scaled);
        }
      }
    }
  }
  return true;
}

}  // namespace pacheck
