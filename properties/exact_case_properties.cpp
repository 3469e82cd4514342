// Properties whose answer (or error) has a known exact form: a single key, V scaled by 2^k, identical keys.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include <rapidcheck.h>

#include "properties/property_bodies.h"
#include "properties/property_steps.h"

namespace pacheck::bodies {

using namespace steps;

namespace {
bool supports(const Capabilities& caps, Mode mode) {
  return std::ranges::find(caps.modes, mode) != caps.modes.end();
}

// Equal as numbers (+0 == -0: an accumulator at +0 plus 1 * -0 holds +0), NaN matching only NaN.
bool same_value(float expected, float got) {
  return expected == got || (std::isnan(expected) && std::isnan(got));
}
}  // namespace

// A query that sees one key (one-token context, first prefill token, window of one) gets its V exactly: the weight
// is exp(0) / exp(0) = 1 whatever the logit, and V is in the output dtype. Sinks are -inf (a finite one takes
// weight); fp8 scales are powers of two, so the dequantised V, rounded to the output dtype, is exact.
void single_key_returns_its_value(const PropertyContext& ctx) {
  const bool prefill = supports(ctx.variant->capabilities(), Mode::prefill);
  const DrawnCase c = draw_case(ctx, [prefill](ProblemSpec& spec) {
    for (SequenceSpec& s : spec.sequences) {
      if (prefill && s.context_len > 1) s.num_queries = s.context_len;
      else s = {1, 1};
    }
    if (!spec.options.sinks.empty()) spec.options.sinks = {SinkChoice::minus_infinity};
    if (spec.fp8.format) spec.fp8.scales = Fp8ScaleChoice::power_of_two;
  });
  const Problem& p = c.problem;
  const Output out = ctx.variant->run(p, c.knobs);
  observe(ctx, "SingleKeyReturnsItsValue", p, c.knobs, nullptr);
  for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s) {
    for (int token = 0; token < p.sequences[s].num_queries; ++token) {
      const int position = p.sequences[s].first_query_position() + token;
      if (p.first_visible_key(position) != position) continue;  // the row sees more than its own key
      for (int h = 0; h < p.num_query_heads; ++h) {
        const int kv = p.kv_head_of(h);
        const float* stored = &p.v_pool[p.kv_offset(s, position, kv)];
        std::vector<float> v(stored, stored + p.head_dim);
        if (p.fp8_cache)
          for (float& x : v) x = round_to_dtype_f(x * static_cast<double>(p.fp8_cache->v_scale(kv)), p.dtype);
        const float* o = &out[p.query_offset(s, token, h)];
        int j = 0;
        while (j < p.head_dim && same_value(v[j], o[j])) ++j;
        if (j == p.head_dim) continue;
        std::ostringstream msg;
        msg.precision(10);
        msg << "a query with a single key must return that key's V exactly\n" << describe(p) << knobs_line(c.knobs)
            << "at " << element_position(p, p.query_offset(s, token, h) + j) << ": V = " << v[j] << ", got " << o[j]
            << "\n";
        RC_FAIL(msg.str() + "replay: " +
                save_failure(ctx, "SingleKeyReturnsItsValue", p, c.knobs, "single-key row differs from its V"));
      }
    }
  }
}

// Attention is linear in V and 2^k scales every product, sum and quotient exactly (away from underflow and
// overflow), so scaling every referenced V by 2^k scales the output by exactly 2^k.
void power_of_two_value_scaling(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx);
  const int k = *rc::gen::element(-3, -2, -1, 1, 2, 3);
  Problem scaled = c.problem;
  RC_PRE(scale_referenced_values(scaled, k));
  // Every p v must stay above fp32's subnormals (2^-126): weights >= exp(-40) / n > 2^-68 for n < 2^10, and nonzero
  // |V| >= 2^-40, so |p v| > 2^-111 after 2^-3. (A sink's spread counts too, which only discards more.)
  const OracleResult oracle = oracle_for(c.problem, c.knobs);
  for (const RowCondition& row : oracle.rows) RC_PRE(row.max_spread <= 40.0);
  // An fp8 cache's V counts as dequantised (by its smallest scale).
  const std::optional<Fp8Cache>& fp8 = c.problem.fp8_cache;
  const double v_scale = fp8 ? *std::min_element(fp8->v_scales.begin(), fp8->v_scales.end()) : 1.0;
  for (float v : c.problem.v_pool) RC_PRE(!std::isfinite(v) || v == 0 || std::fabs(v) * v_scale >= 0x1p-40);
  const Output out = ctx.variant->run(c.problem, c.knobs);
  const Output scaled_out = ctx.variant->run(scaled, c.knobs);
  observe(ctx, "PowerOfTwoValueScaling", scaled, c.knobs, nullptr);
  // Only outputs (exact and computed) in the dtype's normal range with room for 2^3 either way are compared (the
  // others keep the scaled run's value): scaling is not exact among subnormals. With an fp8 cache, in the stored
  // values' units too (divided by the V scale), as a kernel may apply the scale last.
  const FloatFormat format = float_format(c.problem.dtype);
  const double smallest = std::ldexp(1.0, format.min_normal_exponent + 4), largest = format.max_finite / 16;
  const auto in_range = [&](double x) { return std::isfinite(x) && std::fabs(x) >= smallest && std::fabs(x) <= largest; };
  const auto stored_units = [&](std::size_t i, double x) {
    const int head = static_cast<int>(i / c.problem.head_dim % c.problem.num_query_heads);
    return fp8 ? x / fp8->v_scale(c.problem.kv_head_of(head)) : x;
  };
  Output expected = scaled_out;
  std::size_t compared = 0;
  for (std::size_t i = 0; i < out.size() && i < expected.size(); ++i) {
    if (!in_range(out[i]) || !in_range(oracle.out[i])) continue;
    if (!in_range(stored_units(i, out[i])) || !in_range(stored_units(i, oracle.out[i]))) continue;
    expected[i] = std::ldexp(out[i], k);
    ++compared;
  }
  RC_PRE(compared > 0);
  require_bit_identical(ctx, "PowerOfTwoValueScaling", scaled, c.knobs, expected, scaled_out,
                        "scaling every referenced V by 2^" + std::to_string(k) + " (expected: the output times 2^" +
                            std::to_string(k) + ")");
}

// Identical keys get identical rounded logits, whose common error cancels in the softmax: the output is the mean
// of V within the accumulation's rounding alone (no logit or weight term). No ALiBi or finite sinks, which differ.
void identical_keys_give_the_mean(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx, [](ProblemSpec& spec) {
    spec.values = ValueKind::identical_keys;
    spec.options.alibi = AlibiChoice::none;
    if (!spec.options.sinks.empty()) spec.options.sinks = {SinkChoice::minus_infinity};
    if (spec.fp8.format) spec.fp8.scales = Fp8ScaleChoice::power_of_two;
  });
  run_and_check(ctx, "IdenticalKeysGiveTheMean", c.problem, c.knobs, oracle_for(c.problem, c.knobs),
                [](ErrorModel m) {
                  m.logit_coefficient = 0;
                  m.weight_error = 0;
                  return m;
                });
}

}  // namespace pacheck::bodies
