// Properties whose answer is known exactly (or whose error has a known, smaller form): a single key, V scaled by a
// power of two, identical keys.
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
  return std::find(caps.modes.begin(), caps.modes.end(), mode) != caps.modes.end();
}

// Equal as numbers: +0 and -0 are one value (an accumulator that starts at +0 and adds 1 * -0 holds +0, exactly
// as the arithmetic says), and NaN matches only NaN.
bool same_value(float expected, float got) {
  return expected == got || (std::isnan(expected) && std::isnan(got));
}
}  // namespace

// A query that sees one key (a one-token context, the first token of a prefill, or any query of a window of one)
// gets that key's V exactly: its weight is exp(0) / exp(0) = 1 whatever the arithmetic (the soft cap and the ALiBi
// bias change the logit, not that), and V is already in the output dtype. A finite sink would take part of the
// weight, so every head's sink is -inf (no sink) here, which must change nothing. From an fp8 cache the scales are
// powers of two, so the dequantised V is exact, and the output is it rounded to the output dtype. Exactly means
// equal as numbers: the sign of a zero V is not held.
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
        const float* stored = &p.v_pool[p.kv_offset(s, position, p.kv_head_of(h))];
        std::vector<float> dequantised;
        if (p.fp8_cache)
          for (int j = 0; j < p.head_dim; ++j)
            dequantised.push_back(round_to_dtype_f(stored[j] * static_cast<double>(p.fp8_cache->v_scale(p.kv_head_of(h))), p.dtype));
        const float* v = p.fp8_cache ? dequantised.data() : stored;
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

// Attention is linear in V and a power of two scales every product, sum and quotient exactly (away from
// underflow and overflow), so scaling every referenced V by 2^k scales the output by exactly 2^k. Slots nobody
// references keep their values: a kernel that reads one breaks the relation.
void power_of_two_value_scaling(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx);
  const int k = *rc::gen::element(-3, -2, -1, 1, 2, 3);
  Problem scaled = c.problem;
  RC_PRE(scale_referenced_values(scaled, k));
  // Exactness needs every weighted product p * v and every output far from fp32's subnormal range (2^-126): weights
  // are at least exp(-40) / n > 2^-68 for n < 2^10, and nonzero |V| at least 2^-40, so |p v| > 2^-111 even after
  // scaling by 2^-3. (A sink's value is 0, so its product is exact whatever its weight; its spread counts here
  // all the same, which only discards more.)
  const OracleResult oracle = oracle_for(c.problem, c.knobs);
  for (const RowCondition& row : oracle.rows) RC_PRE(row.max_spread <= 40.0);
  // (An fp8 cache's V counts as dequantised, by its smallest scale at the least.)
  const std::optional<Fp8Cache>& fp8 = c.problem.fp8_cache;
  const double v_scale = fp8 ? *std::min_element(fp8->v_scales.begin(), fp8->v_scales.end()) : 1.0;
  for (float v : c.problem.v_pool) RC_PRE(!std::isfinite(v) || v == 0 || std::fabs(v) * v_scale >= 0x1p-40);
  const Output out = ctx.variant->run(c.problem, c.knobs);
  const Output scaled_out = ctx.variant->run(scaled, c.knobs);
  observe(ctx, "PowerOfTwoValueScaling", scaled, c.knobs, nullptr);
  // ... and an output, exact and computed, in the output dtype's normal range with room for 2^3 either way: an
  // output that cancels to nearly zero is rounded in the subnormal range, where scaling is not exact, so such
  // elements are left out of the comparison (they keep the scaled run's own value). From an fp8 cache the output
  // must be in range in the stored values' units too (divided by its KV head's V scale): a kernel may take P V on
  // the stored values and multiply by the scale last, rounding the output in those units first.
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

// Identical keys get identical rounded logits, and a uniform logit error cancels in the softmax: the output is
// the mean of V (of the window's keys) with only the accumulation's rounding, a bound with no logit or weight
// term. ALiBi biases and a finite sink would make the logits differ, so there are none here (a sink of -inf
// stays: it is no sink).
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
