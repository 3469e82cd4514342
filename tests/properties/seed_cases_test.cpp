// The hand-picked seed cases (first written to test the fused kernel), as named tests over every CPU variant:
// each must agree with the exact oracle within its error bound.
#include <gtest/gtest.h>

#include "properties/agreement.h"
#include "properties/problem_spec.h"
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

}  // namespace
}  // namespace pacheck
