// Properties that compare a variant with itself: changes to the problem that must leave the output bit-identical
// (or, for GQA, equal to an equivalent problem's within bound).
#include <algorithm>
#include <numeric>

#include <rapidcheck.h>

#include "properties/property_bodies.h"
#include "properties/property_steps.h"
#include "properties/splitmix.h"

namespace pacheck::bodies {

using namespace steps;

// Keys past the context (the last block's tail, padded table entries, unreferenced blocks) get exactly zero
// weight: poisoning them all leaves the output bit-identical and NaN-free.
void masked_lanes_zero_weight(const PropertyContext& ctx) {
  const Poison poison = *rc::gen::elementOf(std::vector<Poison>{Poison::nan, Poison::pos_inf, Poison::neg_inf, Poison::huge});
  const DrawnCase c = draw_case(ctx, [](ProblemSpec& spec) {
    spec.poison = Poison::none;
    spec.table_padding = std::max(1, spec.table_padding);
  });
  ProblemSpec poisoned = c.spec;
  poisoned.poison = poison;
  require_same_output(ctx, "MaskedLanesZeroWeight", c.problem, materialize(poisoned), c.knobs,
                      std::string("poisoning every unreferenced slot with ") + poison_name(poison));
}

void physical_layout_invariance(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx);
  const std::vector<int> permutation = SplitMix(*rc::gen::arbitrary<std::uint64_t>()).permutation(c.problem.num_blocks);
  require_same_output(ctx, "PhysicalLayoutInvariance", c.problem, relabel_blocks(c.problem, permutation), c.knobs,
                      "relabelling the physical blocks");
}

// GQA is MHA with each KV head replicated across its group: the oracle's answers are bit-identical, the variant's
// within its bound.
void gqa_equivalence(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx, [](ProblemSpec& spec) { spec.gqa_ratio = std::max(2, spec.gqa_ratio); });
  const Problem mha = replicate_kv_heads(c.problem);
  RC_PRE(covers(ctx.variant->capabilities(), mha));
  const OracleResult gqa_oracle = oracle_for(c.problem, c.knobs);
  const OracleResult mha_oracle = oracle_for(mha, c.knobs);
  RC_ASSERT(gqa_oracle.out == mha_oracle.out);
  run_and_check(ctx, "GqaEquivalence", c.problem, c.knobs, mha_oracle);
  run_and_check(ctx, "GqaEquivalence", mha, c.knobs, mha_oracle);
}

void batch_isolation(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx, [](ProblemSpec& spec) {
    if (spec.sequences.size() < 2) spec.sequences.push_back(spec.sequences.front());
  });
  const int count = static_cast<int>(c.problem.sequences.size());
  std::vector<int> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::reverse(order.begin(), order.end());
  const Problem reversed = select_sequences(c.problem, order);
  const Output batch = ctx.variant->run(c.problem, c.knobs);
  const Output reversed_out = ctx.variant->run(reversed, c.knobs);
  observe(ctx, "BatchIsolation", c.problem, c.knobs, nullptr);
  const int s = *rc::gen::inRange(0, count);
  const Problem alone = select_sequences(c.problem, {s});
  const Output alone_out = ctx.variant->run(alone, c.knobs);
  require_bit_identical(ctx, "BatchIsolation", alone, c.knobs, alone_out, sequence_rows(c.problem, batch, s),
                        "running sequence " + std::to_string(s) + " inside its batch instead of alone");
  for (int i = 0; i < count; ++i) {
    require_bit_identical(ctx, "BatchIsolation", c.problem, c.knobs, sequence_rows(c.problem, batch, order[i]),
                          sequence_rows(reversed, reversed_out, i), "reversing the order of the batch");
  }
}

void determinism(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx);
  const Output first = ctx.variant->run(c.problem, c.knobs);
  observe(ctx, "Determinism", c.problem, c.knobs, nullptr);
  for (int run = 0; run < 2; ++run)
    require_bit_identical(ctx, "Determinism", c.problem, c.knobs, first, ctx.variant->run(c.problem, c.knobs),
                          "running the same problem again");
}

}  // namespace pacheck::bodies
