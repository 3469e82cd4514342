// The generators' corners single bugs hide in: forks sharing a partly filled block, and rows whose every logit is
// below a finite masking sentinel, each the only draw that shows its mutant (shared_tail_read_whole,
// masked_score_sentinel); the logit options' and fp8 scales' corners are reached, keep their promise, shrink away.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "oracle/oracle.h"
#include "properties/agreement.h"
#include "properties/generators.h"
#include "properties/property_steps.h"
#include "variants/mutants/buggy_kernels.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

using steps::longest_context;

bool bit_identical(const Output& a, const Output& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The spec of draw number i (from 0) under `limits`.
ProblemSpec drawn(int i, const gen::Limits& limits = {}) {
  return gen::problem_spec(limits)(rc::Random(static_cast<std::uint64_t>(i) + 1)).value();
}

// The mutant of `bug` (on the streaming kernel) against cpu_streaming, bit for bit.
bool mutant_matches_correct_kernel(const Problem& p, const Knobs& knobs, mutants::Bug bug) {
  const Output correct = Registry::instance().get("cpu_streaming").run(p, knobs);
  return bit_identical(mutants::run_kernel(mutants::Kernel::streaming, p, knobs, bug), correct);
}

// Whether the mutant of `bug` is within its error bound of the oracle.
bool mutant_agrees_with_oracle(const Problem& p, const Knobs& knobs, mutants::Bug bug) {
  const Variant& correct = Registry::instance().get("cpu_streaming");
  const OracleResult oracle = run_oracle(p);
  const Output out = mutants::run_kernel(mutants::Kernel::streaming, p, knobs, bug);
  return compare_with_oracle(p, oracle, correct, knobs, out).ok;
}

// Every logit of query head h some row sees, with the cap and bias (`plain`: scale * q . k), in double.
std::vector<double> head_logits(const Problem& p, int h, bool plain = false) {
  std::vector<double> logits;
  const LogitOptions& o = p.options;
  for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s) {
    const Sequence& seq = p.sequences[s];
    for (int i = 0; i < seq.num_queries; ++i) {
      const int position = seq.first_query_position() + i;
      const float* q = &p.queries[p.query_offset(s, i, h)];
      for (int t = p.first_visible_key(position); t <= position; ++t) {
        const float* k = &p.k_pool[p.kv_offset(s, t, p.kv_head_of(h))];
        double logit = 0;
        for (int j = 0; j < p.head_dim; ++j) logit += static_cast<double>(q[j]) * k[j];
        logit *= p.scale();
        if (!plain && o.soft_cap) logit = *o.soft_cap * std::tanh(logit / *o.soft_cap);
        if (!plain && !o.alibi_slopes.empty()) logit += static_cast<double>(o.alibi_slopes[h]) * (t - position);
        logits.push_back(logit);
      }
    }
  }
  return logits;
}

// Forks in about one batch of several sequences in four, logits below the sentinel in about one case in nine.
TEST(GeneratorCorners, TheDefaultDrawReachesForksAndLogitsBelowTheSentinel) {
  const int draws = 2000;
  int forks = 0, below = 0;
  for (int i = 0; i < draws; ++i) {
    const ProblemSpec spec = drawn(i);
    forks += spec.forked ? 1 : 0;
    below += spec.values == ValueKind::below_sentinel && !spec.explicit_scale ? 1 : 0;
  }
  RecordProperty("forked_draws", forks);
  RecordProperty("below_sentinel_draws", below);
  EXPECT_GT(forks, draws / 20);
  EXPECT_GT(below, draws / 40);
}

RC_GTEST_PROP(GeneratorCorners, ForksHoldTheFirstSequencesBlocksUpToTheirOwnLength, ()) {
  ProblemSpec spec = *gen::problem_spec();
  if (spec.sequences.size() == 1) spec.sequences.push_back(spec.sequences[0]);
  spec.forked = true;
  const Problem p = materialize(spec);
  const Sequence& first = p.sequences[0];
  for (std::size_t s = 1; s < p.sequences.size(); ++s) {
    const Sequence& fork = p.sequences[s];
    RC_ASSERT(fork.context_len <= first.context_len);
    const int blocks = (fork.context_len + p.block_size - 1) / p.block_size;
    RC_ASSERT(std::equal(first.block_table.begin(), first.block_table.begin() + blocks, fork.block_table.begin()));
  }
}

RC_GTEST_PROP(GeneratorCorners, BelowSentinelPutsEveryLogitBelowMinus6e4AtTheDefaultScale, ()) {
  ProblemSpec spec = *gen::problem_spec();
  spec.values = ValueKind::below_sentinel;
  spec.explicit_scale.reset();
  const Problem p = materialize(spec);
  for (int h = 0; h < p.num_query_heads; ++h)
    for (const double logit : head_logits(p, h, true)) RC_ASSERT(logit < -6e4);
}

// Without forks no partly filled block is in two tables: reading a shared tail block whole is exactly right.
RC_GTEST_PROP(GeneratorCorners, WithoutForksSharedTailReadWholeIsInvisible, ()) {
  ProblemSpec spec = *gen::problem_spec();
  spec.forked = false;
  const Problem p = materialize(spec);
  const Knobs knobs = *gen::knobs(longest_context(p));
  RC_ASSERT(mutant_matches_correct_kernel(p, knobs, mutants::Bug::shared_tail_read_whole));
}

// Above the sentinel (extremely_negative logits reach about -1.6e4), scoring masked lanes -6e4 is exactly right.
RC_GTEST_PROP(GeneratorCorners, AboveTheSentinelMaskedScoreSentinelIsInvisible, ()) {
  ProblemSpec spec = *gen::problem_spec();
  if (spec.values == ValueKind::below_sentinel) spec.values = ValueKind::normal;
  spec.explicit_scale.reset();
  const Problem p = materialize(spec);
  const Knobs knobs = *gen::knobs(longest_context(p));
  RC_ASSERT(mutant_matches_correct_kernel(p, knobs, mutants::Bug::masked_score_sentinel));
}

// Two decode forks over one block of 8 slots, filled to 6 and 3: the shorter fork reads the longer's 3 keys.
TEST(GeneratorCorners, AForkShowsSharedTailReadWhole) {
  ProblemSpec spec;
  spec.block_size = 8;
  spec.head_dim = 4;
  spec.sequences = {{6, 1}, {3, 1}};
  spec.forked = true;
  spec.poison = Poison::nan;
  spec.seed = 7;
  const Problem p = materialize(spec);
  ASSERT_EQ(p.sequences[0].block_table, p.sequences[1].block_table);
  Knobs knobs;
  knobs.tile_size = 4;
  EXPECT_FALSE(mutant_agrees_with_oracle(p, knobs, mutants::Bug::shared_tail_read_whole));
  spec.forked = false;
  EXPECT_TRUE(mutant_agrees_with_oracle(materialize(spec), knobs, mutants::Bug::shared_tail_read_whole));
}

// A decode row of 5 keys in tiles of 4: its last tile has 3 masked lanes, which outrank logits below -6e4.
TEST(GeneratorCorners, LogitsBelowTheSentinelShowMaskedScoreSentinel) {
  ProblemSpec spec;
  spec.block_size = 4;
  spec.head_dim = 8;
  spec.sequences = {{5, 1}};
  spec.values = ValueKind::below_sentinel;
  spec.seed = 3;
  Knobs knobs;
  knobs.tile_size = 4;
  EXPECT_FALSE(mutant_agrees_with_oracle(materialize(spec), knobs, mutants::Bug::masked_score_sentinel));
  spec.values = ValueKind::extremely_negative;  // about -1e4: above the sentinel
  EXPECT_TRUE(mutant_agrees_with_oracle(materialize(spec), knobs, mutants::Bug::masked_score_sentinel));
}

gen::Limits taking_every_option() {
  gen::Limits limits;
  limits.logit_options = LogitOptionSupport::all();
  return limits;
}

int options_present(const LogitOptionSpec& o) {
  return (o.window != WindowChoice::none) + (o.soft_cap != SoftCapChoice::none) + (o.alibi != AlibiChoice::none) +
         !o.sinks.empty();
}

// Each option in about one draw in four, independently, at every corner; the default limits draw none.
TEST(GeneratorCorners, EachLogitOptionInAboutOneDrawInFourAtEveryCorner) {
  const int draws = 2000;
  int window = 0, cap = 0, alibi = 0, sinks = 0, window_and_sinks = 0;
  std::set<WindowChoice> windows;
  std::set<SoftCapChoice> caps;
  std::set<AlibiChoice> slopes;
  std::set<SinkChoice> sink_kinds;
  for (int i = 0; i < draws; ++i) {
    const LogitOptionSpec o = drawn(i, taking_every_option()).options;
    window += o.window != WindowChoice::none;
    cap += o.soft_cap != SoftCapChoice::none;
    alibi += o.alibi != AlibiChoice::none;
    sinks += !o.sinks.empty();
    window_and_sinks += o.window != WindowChoice::none && !o.sinks.empty();
    windows.insert(o.window);
    caps.insert(o.soft_cap);
    slopes.insert(o.alibi);
    sink_kinds.insert(o.sinks.begin(), o.sinks.end());
    EXPECT_FALSE(drawn(i).options.any()) << "default limits take no option";
  }
  RecordProperty("window_draws", window);
  RecordProperty("sink_draws", sinks);
  for (const int present : {window, cap, alibi, sinks}) {
    EXPECT_GT(present, draws / 6);
    EXPECT_LT(present, draws / 3);
  }
  EXPECT_GT(window_and_sinks, draws / 32) << "independent: about one draw in sixteen has both";
  EXPECT_LT(window_and_sinks, draws / 8);
  EXPECT_EQ(windows.size(), 6u);
  EXPECT_EQ(caps.size(), 5u);
  EXPECT_EQ(slopes.size(), 3u);
  EXPECT_EQ(sink_kinds.size(), 4u);
}

RC_GTEST_PROP(GeneratorCorners, LimitsDrawOnlyTheOptionsTheyTake, ()) {
  gen::Limits limits;
  limits.logit_options = {*rc::gen::arbitrary<bool>(), *rc::gen::arbitrary<bool>(), *rc::gen::arbitrary<bool>(),
                          *rc::gen::arbitrary<bool>()};
  const LogitOptionSupport takes = limits.logit_options;
  const Problem p = materialize(*gen::problem_spec(limits));
  RC_ASSERT(takes.soft_cap || !p.options.soft_cap);
  RC_ASSERT(takes.window || !p.options.window);
  RC_ASSERT(takes.alibi || p.options.alibi_slopes.empty());
  RC_ASSERT(takes.sinks || p.options.sinks.empty());
}

// Each corner resolves to what it promises against the problem it is materialised with.
RC_GTEST_PROP(GeneratorCorners, LogitOptionCornersResolveToWhatTheyPromise, ()) {
  ProblemSpec spec = *gen::problem_spec(taking_every_option());
  spec.options.window = *rc::gen::elementOf(std::vector<WindowChoice>{
      WindowChoice::one, WindowChoice::block_size, WindowChoice::context, WindowChoice::beyond, WindowChoice::inside});
  spec.options.alibi = *rc::gen::elementOf(std::vector<AlibiChoice>{AlibiChoice::geometric, AlibiChoice::steep});
  if (spec.options.sinks.empty()) spec.options.sinks = {SinkChoice::among, SinkChoice::far_above};
  const bool linear = *rc::gen::arbitrary<bool>();
  spec.options.soft_cap = linear ? SoftCapChoice::linear : SoftCapChoice::none;
  const Problem p = materialize(spec);
  RC_ASSERT(validation_errors(p).empty());
  std::vector<int> contexts;
  for (const Sequence& s : p.sequences) contexts.push_back(s.context_len);
  const int longest = *std::max_element(contexts.begin(), contexts.end());
  const int window = *p.options.window;
  switch (spec.options.window) {
    case WindowChoice::one: RC_ASSERT(window == 1); break;
    case WindowChoice::block_size: RC_ASSERT(window == p.block_size); break;
    case WindowChoice::context: RC_ASSERT(std::count(contexts.begin(), contexts.end(), window) > 0); break;
    case WindowChoice::beyond: RC_ASSERT(window > longest); break;
    default: RC_ASSERT(window >= 1 && window <= longest); break;
  }
  const int heads = p.num_query_heads;
  const double steepness = spec.options.alibi == AlibiChoice::steep ? 256 : 1;
  for (int h = 0; h < heads; ++h)
    RC_ASSERT(p.options.alibi_slopes[h] == static_cast<float>(steepness * std::exp2(-8.0 * (h + 1) / heads)));
  for (int h = 0; h < heads; ++h) {
    const std::vector<double> logits = head_logits(p, h);
    const double lowest = *std::min_element(logits.begin(), logits.end());
    const double highest = *std::max_element(logits.begin(), logits.end());
    const double sink = p.options.sinks[h];
    const double slack = 1e-6 * std::max({1.0, std::fabs(lowest), std::fabs(highest)});  // the sink is a float
    switch (spec.options.sinks[h % spec.options.sinks.size()]) {
      case SinkChoice::minus_infinity: RC_ASSERT(sink == -INFINITY); break;
      case SinkChoice::among: RC_ASSERT(sink >= lowest - slack && sink <= highest + slack); break;
      case SinkChoice::far_above: RC_ASSERT(sink >= highest + 128); break;
      case SinkChoice::far_below: RC_ASSERT(sink <= lowest - 128); break;
    }
    if (linear)
      for (const double s : head_logits(p, h, true)) RC_ASSERT(std::fabs(s) * 64 <= *p.options.soft_cap);
  }
}

// A saturating cap lies well below most logits: beyond twice the cap, tanh has lost over a quarter of its slope.
TEST(GeneratorCorners, SaturatingCapsLieWellBelowMostLogits) {
  std::size_t logits = 0, saturated = 0;
  for (int i = 0; i < 120; ++i) {
    ProblemSpec spec = drawn(i);
    spec.options.soft_cap = SoftCapChoice::saturating;
    const Problem p = materialize(spec);
    for (int h = 0; h < p.num_query_heads; ++h)
      for (const double s : head_logits(p, h, true)) {
        ++logits;
        saturated += std::fabs(s) > 2 * *p.options.soft_cap;
      }
  }
  EXPECT_GT(saturated, logits / 2) << saturated << " of " << logits << " logits beyond twice the cap";
}

TEST(GeneratorCorners, ShrinkingRemovesTheLogitOptions) {
  int shrunk = 0;
  for (std::uint64_t seed = 1; shrunk < 20 && seed < 400; ++seed) {
    rc::Shrinkable<ProblemSpec> current = gen::problem_spec(taking_every_option())(rc::Random(seed));
    if (options_present(current.value().options) == 0) continue;
    for (int step = 0; step < 100 && options_present(current.value().options) > 0; ++step) {
      const int before = options_present(current.value().options);
      auto shrinks = current.shrinks();
      bool found = false;
      while (auto next = shrinks.next()) {
        if (options_present(next->value().options) < before) {
          current = *next;
          found = true;
          break;
        }
      }
      ASSERT_TRUE(found) << "no shrink drops an option of seed " << seed << ": " << describe(current.value());
    }
    EXPECT_EQ(options_present(current.value().options), 0) << "seed " << seed;
    ++shrunk;
  }
  EXPECT_EQ(shrunk, 20);
}

TEST(GeneratorCorners, DescribeNamesTheOptionCorners) {
  ProblemSpec spec;
  spec.sequences = {{4, 1}};
  spec.options.window = WindowChoice::block_size;
  spec.options.soft_cap = SoftCapChoice::gemma;
  spec.options.alibi = AlibiChoice::steep;
  spec.options.sinks = {SinkChoice::minus_infinity, SinkChoice::far_above};
  EXPECT_NE(describe(spec).find(" window=block_size soft_cap=gemma alibi=steep sinks=[-inf far_above]"),
            std::string::npos)
      << describe(spec);
  spec.options = {};
  EXPECT_EQ(describe(spec).find("window"), std::string::npos) << describe(spec);
}

// An fp8 cache in about one draw in five, in every format listed and at every scale corner; never by default.
TEST(GeneratorCorners, AnFp8CacheInAboutOneDrawInFiveAtEveryScaleCorner) {
  gen::Limits limits;
  limits.fp8_caches = {Fp8Format::e4m3, Fp8Format::e5m2};
  const int draws = 1000;
  int fp8 = 0;
  std::set<Fp8Format> formats;
  std::set<Fp8ScaleChoice> scales;
  for (int i = 0; i < draws; ++i) {
    const Fp8Spec spec = drawn(i, limits).fp8;
    if (spec.format) {
      ++fp8;
      formats.insert(*spec.format);
      scales.insert(spec.scales);
    }
    EXPECT_FALSE(drawn(i).fp8.format) << "default limits take no fp8 cache";
  }
  EXPECT_GT(fp8, draws / 8);
  EXPECT_LT(fp8, draws / 3);
  EXPECT_EQ(formats.size(), 2u);
  EXPECT_EQ(scales.size(), 4u);
}

// Limits that take an fp8 cache only with some query dtypes and head dims (as the CUDA kernels) draw it only there.
TEST(GeneratorCorners, AnFp8CacheOnlyWithTheQueryDtypesAndHeadDimsItIsTakenWith) {
  gen::Limits limits;
  limits.fp8_caches = {Fp8Format::e4m3, Fp8Format::e5m2};
  limits.fp8_query_dtypes = {DType::bf16};
  limits.fp8_head_dim_multiple = 16;
  int fp8 = 0;
  for (int i = 0; i < 2000; ++i) {
    const ProblemSpec spec = drawn(i, limits);
    if (!spec.fp8.format) continue;
    ++fp8;
    EXPECT_EQ(spec.dtype, DType::bf16) << describe(spec);
    EXPECT_EQ(spec.head_dim % 16, 0) << describe(spec);
  }
  EXPECT_GT(fp8, 0);
}

// Each scale corner keeps its promise: referenced K in the format's upper half (amax), power-of-two scales, or K at
// most the smallest normal (underflowing); and poison never moves the scales.
RC_GTEST_PROP(GeneratorCorners, Fp8ScaleCornersResolveToWhatTheyPromise, ()) {
  gen::Limits limits;
  limits.fp8_caches = {Fp8Format::e4m3, Fp8Format::e5m2};
  ProblemSpec spec = *gen::problem_spec(limits);
  spec.fp8.format = *rc::gen::element(Fp8Format::e4m3, Fp8Format::e5m2);
  spec.fp8.scales = *rc::gen::element(Fp8ScaleChoice::amax, Fp8ScaleChoice::amax_per_head,
                                      Fp8ScaleChoice::power_of_two, Fp8ScaleChoice::underflowing);
  spec.values = ValueKind::normal;
  const Problem p = materialize(spec);
  RC_ASSERT(validation_errors(p).empty());
  RC_ASSERT(p.fp8_cache.has_value());
  const Fp8Cache& cache = *p.fp8_cache;
  const std::size_t heads = spec.fp8.scales == Fp8ScaleChoice::amax_per_head ? p.num_kv_heads : 1;
  RC_ASSERT(cache.k_scales.size() == heads && cache.v_scales.size() == heads);
  const FloatFormat f = float_format(*spec.fp8.format);
  double k_amax = 0;
  for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s)
    for (int t = 0; t < p.sequences[s].context_len; ++t)
      for (int h = 0; h < p.num_kv_heads; ++h)
        for (int i = 0; i < p.head_dim; ++i)
          k_amax = std::max(k_amax, static_cast<double>(std::fabs(p.k_pool[p.kv_offset(s, t, h) + i])));
  if (spec.fp8.scales == Fp8ScaleChoice::amax) RC_ASSERT(k_amax >= f.max_finite / 2 || k_amax == 0);
  if (spec.fp8.scales == Fp8ScaleChoice::power_of_two)
    for (float scale : cache.k_scales) RC_ASSERT(std::exp2(std::round(std::log2(scale))) == scale);
  if (spec.fp8.scales == Fp8ScaleChoice::underflowing) RC_ASSERT(k_amax <= std::ldexp(1.0, f.min_normal_exponent));
  ProblemSpec poisoned = spec;
  poisoned.poison = Poison::huge;
  RC_ASSERT(materialize(poisoned).fp8_cache->k_scales == cache.k_scales);
  RC_ASSERT(materialize(poisoned).fp8_cache->v_scales == cache.v_scales);
}

}  // namespace
}  // namespace pacheck

// A shrunk failure names a law's drawn window (RapidCheck prints "<???>" for a value it cannot show).
TEST(GeneratorCorners, ADrawnWindowIsShownByName) {
  EXPECT_EQ(rc::toString(pacheck::WindowChoice::block_size), "window block_size");
  EXPECT_EQ(rc::toString(pacheck::WindowChoice::one), "window one");
}
