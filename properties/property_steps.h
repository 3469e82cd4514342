// What properties are built from. The steps: draw a case the variant covers, run it and check it against the
// oracle, compare two runs bit for bit; each reports a failure through RC_FAIL with the readable case and the
// replay line, so every property's failures look alike. The transformations of a problem that must not change its
// attention (or must change it in a known, exact way): the metamorphic relations behind the invariance properties.
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

// Draws a problem the variant covers (the limits are narrowed to its capabilities, so few are discarded).
DrawnCase draw_case(const PropertyContext& ctx);
// Same, with the spec adjusted by `adjust` before it is materialised.
template <typename Adjust>
DrawnCase draw_case(const PropertyContext& ctx, Adjust&& adjust);

void observe(const PropertyContext& ctx, const std::string& property, const Problem& problem, const Knobs& knobs,
             const Agreement* agreement);

// The oracle for a problem, with the split record counts the knobs need; discards problems outside fp32 ranges.
OracleResult oracle_for(const Problem& problem, const Knobs& knobs);

// Runs the variant and fails unless every element is within its bound of the oracle. Returns the output.
Output run_and_check(const PropertyContext& ctx, const std::string& property, const Problem& problem,
                     const Knobs& knobs, const OracleResult& oracle, const ModelRefinement& refine_model = {});

// Fails unless `b` equals `a` bit for bit (and holds no NaN where `a` holds none). `what` names the change that
// should not have mattered; `element_of_b(i)` maps an element of `b` to its position in `problem` for messages.
void require_bit_identical(const PropertyContext& ctx, const std::string& property, const Problem& problem,
                           const Knobs& knobs, const Output& a, const Output& b, const std::string& what);

// "knobs: ..." and a newline, for failure messages.
std::string knobs_line(const Knobs& knobs);

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

}  // namespace pacheck::steps

namespace pacheck {

// Moves physical block b to permutation[b] in both pools and rewrites every table entry that names a valid block
// (padding with invalid ids stays as it is). The attention is unchanged.
Problem relabel_blocks(const Problem& problem, const std::vector<int>& permutation);

// The MHA problem equivalent to a GQA one: every query head gets its own copy of its group's KV head.
Problem replicate_kv_heads(const Problem& problem);

// The problem holding only the given sequences, in the given order, over the same pool.
Problem select_sequences(const Problem& problem, const std::vector<int>& order);

// The output rows of sequence `s` (all its query tokens and heads).
Output sequence_rows(const Problem& problem, const Output& output, int s);

// Multiplies the V of every slot some sequence references by 2^exponent (slots nobody references keep their
// values, so a kernel that reads them is caught). Returns false when a scaled value would not be exactly
// representable in the dtype (overflow or loss in the subnormal range).
bool scale_referenced_values(Problem& problem, int exponent);

}  // namespace pacheck
