// The CPU variants: the hand-picked seed cases as named tests, each within every CPU variant's bound; problems with
// every logit option and an fp8 cache, within their bounds; and options that should change nothing change nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "properties/agreement.h"
#include "properties/problem_spec.h"
#include "tests/fixtures/problem_builders.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

ProblemSpec base_spec() {
  ProblemSpec spec;
  spec.num_kv_heads = 2;
  spec.gqa_ratio = 1;
  spec.head_dim = 16;
  spec.block_size = 4;
  spec.seed = 22;
  return spec;
}

void expect_every_variant_agrees(const Problem& p, const Knobs& knobs = {}) {
  const OracleResult oracle = run_oracle(p, oracle_split_sizes(p, knobs));
  int checked = 0;
  for (const Variant* v : Registry::instance().variants()) {
    if (v->capabilities().needs_gpu || !covers(v->capabilities(), p)) continue;
    const Agreement a = compare_with_oracle(p, oracle, *v, knobs, v->run(p, knobs));
    EXPECT_TRUE(a.ok) << describe_failure(p, *v, knobs, a);
    ++checked;
  }
  EXPECT_GE(checked, 3) << "the CPU variants must all run";
}

TEST(SeedCases, DecodeStep) {
  ProblemSpec spec = base_spec();
  spec.sequences = {{13, 1}};
  expect_every_variant_agrees(materialize(spec));
}

TEST(SeedCases, CausalPrefill) {
  ProblemSpec spec = base_spec();
  spec.sequences = {{13, 13}};
  expect_every_variant_agrees(materialize(spec));
}

TEST(SeedCases, PartialContinuationWithExplicitScale) {
  ProblemSpec spec = base_spec();
  spec.sequences = {{13, 5}};
  spec.explicit_scale = 0.3f;
  expect_every_variant_agrees(materialize(spec));
}

TEST(SeedCases, PhysicallyScatteredBlocks) {
  ProblemSpec spec = base_spec();
  spec.sequences = {{13, 3}, {9, 1}};
  spec.spare_blocks = 7;  // the seeds' "scattered pool slots": a shuffled pool with gaps
  const Problem p = materialize(spec);
  bool scattered = false;
  for (const Sequence& s : p.sequences)
    for (std::size_t i = 1; i < s.block_table.size(); ++i) scattered |= s.block_table[i] != s.block_table[i - 1] + 1;
  ASSERT_TRUE(scattered) << describe(p);
  expect_every_variant_agrees(p);
}

TEST(SeedCases, GqaHeadMap) {
  ProblemSpec spec = base_spec();
  spec.gqa_ratio = 4;  // 8 query heads over 2 KV heads
  spec.sequences = {{13, 2}};
  expect_every_variant_agrees(materialize(spec));
}

TEST(SeedCases, TileSizesOverAThirteenTokenHistory) {
  ProblemSpec spec = base_spec();
  spec.sequences = {{13, 1}};
  const Problem p = materialize(spec);
  for (int tile : {1, 2, 3, 4, 8, 13, 32}) {
    SCOPED_TRACE("tile_size " + std::to_string(tile));
    expect_every_variant_agrees(p, Knobs{tile, 5, 0, {}});
  }
}


const char* const kCpuVariants[] = {"cpu_gather", "cpu_streaming", "cpu_splitk"};

// Three sequences (decode, prefill, continuation) over a scattered pool, GQA 2, the options drawn from the seed.
Problem problem_with_options(std::uint64_t seed) {
  ProblemSpec spec;
  spec.dtype = kAllDTypes[seed % 3];
  spec.num_kv_heads = 2;
  spec.gqa_ratio = 2;
  spec.head_dim = 16;
  spec.block_size = 4;
  spec.sequences = {{37, 1}, {13, 13}, {29, 6}};
  spec.spare_blocks = 2;
  spec.poison = Poison::nan;
  spec.spread = 3.0;
  spec.seed = seed;
  Problem p = materialize(spec);
  LogitOptions& o = p.options;
  if (seed % 2) o.soft_cap = seed % 4 == 1 ? 0.75f : 20.0f;  // saturating, and barely bending
  if (seed % 3) o.window = seed % 3 == 1 ? 1 : 9;
  if (seed % 5 < 3) o.alibi_slopes = {0.5f, 0.125f, 0x1p-5f, 0x1p-8f};
  if (seed % 7 < 4) o.sinks = {-INFINITY, 2.0f, -30.0f, 0.5f};
  if (seed % 4 == 0) p = testing::with_fp8_cache(p, kAllFp8Formats[seed % 8 / 4], {0.125f}, {0.5f, 2.0f});
  return p;
}

TEST(CpuVariants, TakeEveryLogitOptionAndFp8CacheWithinTheirBounds) {
  int fp8_cases = 0, option_cases = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    const Problem p = problem_with_options(seed);
    fp8_cases += p.fp8_cache.has_value();
    option_cases += p.options.any();
    for (const Knobs& knobs : {Knobs{16, 64, 0, {}}, Knobs{3, 5, 0, {}}, Knobs{1, 1, 0, {}}}) {
      const OracleResult oracle = run_oracle(p, oracle_split_sizes(p, knobs));
      ASSERT_TRUE(oracle.fits_fp32) << describe(p);
      for (const char* name : kCpuVariants) {
        const Variant& v = Registry::instance().get(name);
        ASSERT_TRUE(covers(v.capabilities(), p)) << name << ": " << coverage_gap(v.capabilities(), p);
        const Agreement a = compare_with_oracle(p, oracle, v, knobs, v.run(p, knobs));
        EXPECT_TRUE(a.ok) << "seed " << seed << "\n" << describe_failure(p, v, knobs, a);
      }
    }
  }
  EXPECT_GE(fp8_cases, 6);
  EXPECT_GE(option_cases, 20);
}

// The options' identities, bit for bit on every CPU variant: a sink of -inf is no sink, a window as long as the
// context is no window, a zero ALiBi slope is no bias.
TEST(CpuVariants, OptionsThatChangeNothingChangeNoBit) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    Problem plain = problem_with_options(seed);
    plain.options = {};
    Problem neutral = plain;
    neutral.options.sinks.assign(plain.num_query_heads, -INFINITY);
    neutral.options.window = 37;  // the longest context
    neutral.options.alibi_slopes.assign(plain.num_query_heads, 0.0f);
    for (const char* name : kCpuVariants) {
      const Variant& v = Registry::instance().get(name);
      const Output a = v.run(plain, Knobs{}), b = v.run(neutral, Knobs{});
      ASSERT_EQ(a.size(), b.size());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << name << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace pacheck
