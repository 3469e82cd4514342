// The logit options' laws: what a window hides is never read, a cap far above every logit changes nothing beyond
// rounding, a sink of -inf is no sink.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "properties/generators.h"
#include "properties/property_bodies.h"
#include "properties/property_steps.h"

namespace pacheck::bodies {

using namespace steps;

namespace {

// Per (block, slot) of the pool, whether some row reads it: from each sequence's first window start to its end.
std::vector<char> slots_read(const Problem& p) {
  std::vector<char> read(static_cast<std::size_t>(p.num_blocks) * p.block_size, 0);
  for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s) {
    const Sequence& seq = p.sequences[s];
    for (int t = p.first_visible_key(seq.first_query_position()); t < seq.context_len; ++t)
      read[static_cast<std::size_t>(seq.block_table[t / p.block_size]) * p.block_size + t % p.block_size] = 1;
  }
  return read;
}

}  // namespace

// Poisoning the keys before every query's window (NaN or +-inf in K and V) leaves the output bit-identical: catches
// a kernel that reads one key too far back, or walks from 0 and lets a masked lane's V through.
void windowed_out_keys_zero_weight(const PropertyContext& ctx) {
  const Capabilities caps = ctx.variant->capabilities();
  const bool decode = std::ranges::find(caps.modes, Mode::decode) != caps.modes.end();
  const WindowChoice window = *rc::gen::elementOf(
      std::vector<WindowChoice>{WindowChoice::one, WindowChoice::block_size, WindowChoice::inside, WindowChoice::context});
  const DrawnCase c = draw_case(ctx, [&](ProblemSpec& spec) {
    spec.options.window = window;
    // A decode row has a history to hide (a prefill row at 0 sees key 0 whatever the window).
    if (decode) spec.sequences[0].num_queries = 1;
  });
  // An e4m3 cache has no infinities: its poison is its NaN.
  const bool e4m3 = c.problem.fp8_cache && c.problem.fp8_cache->format == Fp8Format::e4m3;
  const float poison = e4m3 ? NAN : *rc::gen::elementOf(std::vector<float>{NAN, INFINITY, -INFINITY});
  Problem poisoned = c.problem;
  const std::vector<char> read = slots_read(poisoned);
  const std::size_t slot_elements = static_cast<std::size_t>(poisoned.num_kv_heads) * poisoned.head_dim;
  std::size_t hidden = 0;
  for (int s = 0; s < static_cast<int>(poisoned.sequences.size()); ++s) {
    for (int t = 0; t < poisoned.sequences[s].context_len; ++t) {
      const std::size_t offset = poisoned.kv_offset(s, t, 0);
      if (read[offset / slot_elements]) continue;
      std::fill_n(&poisoned.k_pool[offset], slot_elements, poison);
      std::fill_n(&poisoned.v_pool[offset], slot_elements, poison);
      ++hidden;
    }
  }
  RC_PRE(hidden > 0);
  require_same_output(ctx, "WindowedOutKeysZeroWeight", c.problem, poisoned, c.knobs,
                      "poisoning the " + std::to_string(hidden) + " keys before every query's window with " +
                          std::to_string(poison));
}

// A soft cap far above every logit leaves the output within bound of the uncapped answer. With cap >= 2^20 |s|,
// cap tanh(s / cap) = s - s^3 / (3 cap^2) + ... is within 2^-40 L_t / 3 of s (L_t >= |s|): 2^-16 / 3 of one rounding
// u L_t, so 2^-12 added to the logit coefficient covers it (ERROR_MODEL.md). Catches a tanh that loses its
// argument's bits near 0.
void large_soft_cap_is_no_cap(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx, [](ProblemSpec& spec) { spec.options.soft_cap = SoftCapChoice::none; });
  const OracleResult uncapped = oracle_for(c.problem, c.knobs);
  double largest = 0;
  for (const RowCondition& row : uncapped.rows) largest = std::max(largest, row.max_logit_magnitude);
  // A power of two: s / cap and the product with cap are exact.
  const double cap = std::ldexp(1.0, std::max(0, std::ilogb(std::max(largest, 1.0)) + 1) + 20);
  RC_PRE(cap <= FLT_MAX);
  Problem capped = c.problem;
  capped.options.soft_cap = static_cast<float>(cap);
  OracleResult reference = oracle_for(capped, c.knobs);  // the capped problem's condition quantities ...
  reference.out = uncapped.out;                          // ... and the exact answer without a cap
  run_and_check(ctx, "LargeSoftCapIsNoCap", capped, c.knobs, reference, [](ErrorModel m) {
    m.logit_coefficient += 0x1p-12;
    return m;
  });
}

// A -inf sink has weight exactly 0: giving one to every head leaves the output bit-identical (catches a finite
// stand-in for -inf, or -inf - -inf turned NaN).
void minus_infinity_sink_is_no_sink(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx, [](ProblemSpec& spec) { spec.options.sinks.clear(); });
  Problem with_sinks = c.problem;
  with_sinks.options.sinks.assign(c.problem.num_query_heads, -INFINITY);
  require_same_output(ctx, "MinusInfinitySinkIsNoSink", c.problem, with_sinks, c.knobs,
                      "giving every head a sink of -inf");
}

}  // namespace pacheck::bodies
