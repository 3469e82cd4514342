// The steps properties are built from: draw a case the variant covers, run it and check it against the oracle,
// compare two runs bit for bit. Each step reports a failure through RC_FAIL with the readable case and the
// replay line, so every property's failures look alike.
#pragma once

#include <string>

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
