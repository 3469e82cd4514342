// The generators' corners that single bugs hide in: the default draw reaches forks sharing their first sequence's
// blocks, a partly filled one included, and rows whose every logit lies below a finite masking sentinel; each is the
// only draw that shows its mutant (shared_tail_read_whole, masked_score_sentinel): without it the mutant is
// bit-identical to the correct kernel.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "oracle/oracle.h"
#include "properties/agreement.h"
#include "properties/generators.h"
#include "variants/mutants/buggy_kernels.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

bool bit_identical(const Output& a, const Output& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

int longest_context(const Problem& p) {
  int longest = 1;
  for (const Sequence& s : p.sequences) longest = std::max(longest, s.context_len);
  return longest;
}

// The mutant of `bug` (on the streaming kernel) against cpu_streaming, bit for bit.
bool mutant_matches_correct_kernel(const Problem& p, const Knobs& knobs, mutants::Bug bug) {
  const Output correct = Registry::instance().get("cpu_streaming").run(p, knobs);
  return bit_identical(mutants::run_kernel(mutants::Kernel::streaming, p, knobs, bug), correct);
}

// Whether the mutant of `bug` is within its error bound of the oracle, as UlpBoundedAgreement checks it.
bool mutant_agrees_with_oracle(const Problem& p, const Knobs& knobs, mutants::Bug bug) {
  const Variant& correct = Registry::instance().get("cpu_streaming");
  const OracleResult oracle = run_oracle(p);
  const Output out = mutants::run_kernel(mutants::Kernel::streaming, p, knobs, bug);
  return compare_with_oracle(p, oracle, correct, knobs, out).ok;
}

// How often the default draw reaches each corner: forks in about one batch of several sequences in four, logits
// below the sentinel at the default scale in about one case in nine.
TEST(GeneratorCorners, TheDefaultDrawReachesForksAndLogitsBelowTheSentinel) {
  const int draws = 2000;
  int forks = 0, below = 0;
  for (int i = 0; i < draws; ++i) {
    const ProblemSpec spec = gen::problem_spec()(rc::Random(static_cast<std::uint64_t>(i) + 1)).value();
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
  ProblemSpec spec = *gen::problem_spec();  // any drawn shape, with this kind's values at the default scale
  spec.values = ValueKind::below_sentinel;
  spec.explicit_scale.reset();
  const Problem p = materialize(spec);
  for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s) {
    const Sequence& seq = p.sequences[s];
    for (int i = 0; i < seq.num_queries; ++i)
      for (int h = 0; h < p.num_query_heads; ++h) {
        const float* q = &p.queries[p.query_offset(s, i, h)];
        for (int t = 0; t <= seq.first_query_position() + i; ++t) {
          const float* k = &p.k_pool[p.kv_offset(s, t, p.kv_head_of(h))];
          double dot = 0;
          for (int j = 0; j < p.head_dim; ++j) dot += static_cast<double>(q[j]) * k[j];
          RC_ASSERT(dot * p.scale() < -6e4);
        }
      }
  }
}

// Without forks no partly filled block is in two tables, and a kernel that reads a shared tail block whole is
// exactly right.
RC_GTEST_PROP(GeneratorCorners, WithoutForksSharedTailReadWholeIsInvisible, ()) {
  ProblemSpec spec = *gen::problem_spec();
  spec.forked = false;
  const Problem p = materialize(spec);
  const Knobs knobs = *gen::knobs(longest_context(p));
  RC_ASSERT(mutant_matches_correct_kernel(p, knobs, mutants::Bug::shared_tail_read_whole));
}

// At the default scale and without logits below the sentinel, a kernel that scores masked lanes -6e4 is exactly
// right (extremely_negative logits reach about -1.6e4 at the default scale).
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

}  // namespace
}  // namespace pacheck
