// What properties are built from: steps (draw a covered case, check it against the oracle, compare two runs bit for
// bit), failing through RC_FAIL with the case and a replay line; and the invariance properties' transformations.
#pragma once

#include <string>
#include <vector>

#include "properties/catalogue.h"

namespace pacheck::steps {

struct DrawnCase {
  ProblemSpec spec;
  Problem problem;
  Knobs knobs;
};

int longest_context(const Problem& problem);

// Draws a problem the variant covers, the spec adjusted by `adjust` before it is materialised.
template <typename Adjust>
DrawnCase draw_case(const PropertyContext& ctx, Adjust&& adjust) {
  DrawnCase c;
  c.spec = *gen::problem_spec(ctx.limits);
  adjust(c.spec);
  c.problem = materialize(c.spec);
  RC_PRE(covers(ctx.variant->capabilities(), c.problem));
  c.knobs = *gen::knobs(longest_context(c.problem), ctx.limits);
  return c;
}
DrawnCase draw_case(const PropertyContext& ctx);

void observe(const PropertyContext& ctx, const std::string& property, const Problem& problem, const Knobs& knobs,
             const Agreement* agreement);

// The oracle for a problem, with the split record counts the knobs need; discards problems outside fp32 ranges.
OracleResult oracle_for(const Problem& problem, const Knobs& knobs);

// Runs the variant and fails unless every element is within its bound of the oracle; returns the output.
Output run_and_check(const PropertyContext& ctx, const std::string& property, const Problem& problem,
                     const Knobs& knobs, const OracleResult& oracle, const ModelRefinement& refine_model = {});

// Fails unless `b` equals `a` bit for bit (no NaN where `a` has none); `what` names the change that must not matter.
void require_bit_identical(const PropertyContext& ctx, const std::string& property, const Problem& problem,
                           const Knobs& knobs, const Output& a, const Output& b, const std::string& what);

// Runs `a` then `b`, observes `b`, and fails unless their outputs are bit-identical (require_bit_identical).
void require_same_output(const PropertyContext& ctx, const std::string& property, const Problem& a, const Problem& b,
                         const Knobs& knobs, const std::string& what);

// "knobs: ..." and a newline, for failure messages.
std::string knobs_line(const Knobs& knobs);

}  // namespace pacheck::steps

namespace pacheck {

// Moves physical block b to permutation[b] in both pools, rewriting the table entries naming valid blocks.
Problem relabel_blocks(const Problem& problem, const std::vector<int>& permutation);

// The MHA problem equivalent to a GQA one: every query head gets its own copy of its group's KV head.
Problem replicate_kv_heads(const Problem& problem);

// The problem holding only the given sequences, in the given order, over the same pool.
Problem select_sequences(const Problem& problem, const std::vector<int>& order);

// The output rows of sequence `s` (all its query tokens and heads).
Output sequence_rows(const Problem& problem, const Output& output, int s);

// Multiplies every referenced V by 2^exponent (the others keep theirs); false when one would not be exact in the
// pool's format (overflow, or the subnormal range).
bool scale_referenced_values(Problem& problem, int exponent);

}  // namespace pacheck
