// Properties that hold a variant to the exact oracle within its error bound.
#include <rapidcheck.h>

#include "properties/generators.h"
#include "properties/property_bodies.h"
#include "properties/property_steps.h"

namespace pacheck::bodies {

using namespace steps;

void ulp_bounded_agreement(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx);
  run_and_check(ctx, "UlpBoundedAgreement", c.problem, c.knobs, oracle_for(c.problem, c.knobs));
}

// Any two tile sizes, one drawn from 1 to beyond the history: each within bound of the exact answer, so within
// the sum of their bounds of each other. (A bit-for-bit comparison would be wrong: tiling reassociates sums.)
void tile_size_invariance(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx);
  Knobs other = c.knobs;
  // Engine shapes keep the second tile a multiple of 16 too, so that both runs take the kernels' engine paths.
  other.tile_size = ctx.limits.engine_shapes ? (*gen::knobs(longest_context(c.problem), ctx.limits)).tile_size
                                             : *rc::gen::inRange(1, longest_context(c.problem) + 9);
  const OracleResult oracle = oracle_for(c.problem, c.knobs);
  run_and_check(ctx, "TileSizeInvariance", c.problem, c.knobs, oracle);
  run_and_check(ctx, "TileSizeInvariance", c.problem, other, oracle);
}

// Split-K: a fixed split size from 1 to beyond the history (engine shapes: a multiple of 16), and a fixed number
// of splits (whose sizes need not be multiples of 16, as in engines that choose a split count).
void split_size_invariance(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx);
  Knobs by_size = c.knobs;
  by_size.num_splits = 0;
  by_size.split_size = ctx.limits.engine_shapes ? (*gen::knobs(longest_context(c.problem), ctx.limits)).split_size
                                                : *rc::gen::inRange(1, longest_context(c.problem) + 9);
  Knobs by_count = c.knobs;
  by_count.num_splits = *rc::gen::inRange(1, 17);
  for (const Knobs& knobs : {by_size, by_count})
    run_and_check(ctx, "SplitSizeInvariance", c.problem, knobs, oracle_for(c.problem, knobs));
}

}  // namespace pacheck::bodies
