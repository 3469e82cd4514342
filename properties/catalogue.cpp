#include "properties/catalogue.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "problem/case_file.h"

namespace pacheck {

gen::Limits limits_for(const Capabilities& caps) {
  gen::Limits limits;
  limits.dtypes = caps.dtypes;
  limits.modes = caps.modes;
  limits.max_head_dim = caps.max_head_dim;
  limits.head_dim_supported = caps.supports_head_dim;
  return limits;
}

std::string save_failure(const PropertyContext& ctx, const std::string& property, const Problem& problem,
                         const Knobs& knobs, const std::string& note) {
  const std::filesystem::path path = ctx.failure_dir / (property + "-" + ctx.variant->name() + ".json");
  try {
    write_case_file(path, Case{problem, knobs, property + " failed on " + ctx.variant->name() + ": " + note});
  } catch (const std::exception& e) {
    return std::string("(could not save the case: ") + e.what() + ")";
  }
  return ctx.replay_program + " replay " + path.string() + " --variant " + ctx.variant->name();
}

namespace {

// Draws a problem the variant covers (the limits are narrowed to its capabilities, so few are discarded).
struct DrawnCase {
  ProblemSpec spec;
  Problem problem;
  Knobs knobs;
};

int longest_context(const Problem& p) {
  int n = 1;
  for (const Sequence& s : p.sequences) n = std::max(n, s.context_len);
  return n;
}

DrawnCase draw_case(const PropertyContext& ctx) {
  DrawnCase c;
  c.spec = *gen::problem_spec(ctx.limits);
  c.problem = materialize(c.spec);
  RC_PRE(covers(ctx.variant->capabilities(), c.problem));
  c.knobs = *gen::knobs(longest_context(c.problem));
  return c;
}

void observe(const PropertyContext& ctx, const std::string& property, const Problem& p, const Knobs& k,
             const Agreement* a) {
  if (ctx.observer) ctx.observer(CaseObservation{property, p, k, a});
}

// Runs the variant and asserts agreement with the oracle; returns the output for further checks.
Output run_and_check(const PropertyContext& ctx, const std::string& property, const Problem& p, const Knobs& knobs,
                     const OracleResult& oracle) {
  const Output out = ctx.variant->run(p, knobs);
  const Agreement a = compare_with_oracle(p, oracle, *ctx.variant, knobs, out);
  observe(ctx, property, p, knobs, &a);
  if (!a.ok) {
    const std::string replay = save_failure(ctx, property, p, knobs, "exceeds its error bound");
    RC_FAIL(describe_failure(p, *ctx.variant, knobs, a) + "replay: " + replay);
  }
  return out;
}

bool bit_identical(const Output& a, const Output& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// --- the properties ---------------------------------------------------------------------------------------------

void ulp_bounded_agreement(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx);
  const OracleResult oracle = run_oracle(c.problem, oracle_split_sizes(c.problem, c.knobs));
  RC_PRE(oracle.fits_fp32);
  run_and_check(ctx, "UlpBoundedAgreement", c.problem, c.knobs, oracle);
}

void tile_size_invariance(const PropertyContext& ctx) {
  const DrawnCase c = draw_case(ctx);
  const OracleResult oracle = run_oracle(c.problem, oracle_split_sizes(c.problem, c.knobs));
  RC_PRE(oracle.fits_fp32);
  // Two tile sizes, one of them beyond the history: both within bound of the exact answer, hence of each other.
  Knobs other = c.knobs;
  other.tile_size = *rc::gen::inRange(1, longest_context(c.problem) + 9);
  run_and_check(ctx, "TileSizeInvariance", c.problem, c.knobs, oracle);
  run_and_check(ctx, "TileSizeInvariance", c.problem, other, oracle);
}

// Keys past the context (the tail of the last block, the padded table entries, the blocks nobody references)
// must get exactly zero weight: poisoning all of them leaves the output bit-identical and free of NaN.
void masked_lanes_zero_weight(const PropertyContext& ctx) {
  DrawnCase c = draw_case(ctx);
  ProblemSpec clean = c.spec;
  clean.poison = Poison::none;
  ProblemSpec poisoned = c.spec;
  poisoned.poison = *rc::gen::elementOf(std::vector<Poison>{Poison::nan, Poison::pos_inf, Poison::neg_inf, Poison::huge});
  poisoned.table_padding = std::max(1, c.spec.table_padding);
  clean.table_padding = poisoned.table_padding;
  clean.padding_invalid = poisoned.padding_invalid;
  const Problem clean_problem = materialize(clean);
  const Problem poisoned_problem = materialize(poisoned);
  const Output a = ctx.variant->run(clean_problem, c.knobs);
  const Output b = ctx.variant->run(poisoned_problem, c.knobs);
  observe(ctx, "MaskedLanesZeroWeight", poisoned_problem, c.knobs, nullptr);
  std::size_t first_diff = a.size();
  for (std::size_t i = 0; i < a.size() && first_diff == a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0 || std::isnan(b[i])) first_diff = i;
  if (first_diff != a.size() || a.size() != b.size()) {
    std::ostringstream msg;
    msg.precision(10);
    msg << "poisoning unreferenced slots (" << poison_name(poisoned.poison) << ") changed the output of "
        << ctx.variant->name() << "\n"
        << describe(poisoned_problem) << "knobs: tile_size=" << c.knobs.tile_size << " split_size=" << c.knobs.split_size
        << " num_splits=" << c.knobs.num_splits << "\n";
    if (first_diff < a.size())
      msg << "first difference: " << element_position(poisoned_problem, first_diff) << ": clean " << a[first_diff]
          << ", poisoned " << b[first_diff] << "\n";
    RC_FAIL(msg.str() + "replay: " + save_failure(ctx, "MaskedLanesZeroWeight", poisoned_problem, c.knobs,
                                                  "poisoned slots changed the output"));
  }
}

std::vector<Property> make_catalogue() {
  const auto always = [](const Capabilities&) { return true; };
  return {
      {"UlpBoundedAgreement", "every output element within the variant's error bound of the exact oracle", always,
       ulp_bounded_agreement},
      {"TileSizeInvariance", "any tile size, 1 to beyond the history, stays within bound of the oracle", always,
       tile_size_invariance},
      {"MaskedLanesZeroWeight", "poisoning every slot past the context leaves the output bit-identical, NaN-free",
       always, masked_lanes_zero_weight},
  };
}

}  // namespace

const std::vector<Property>& catalogue() {
  static const std::vector<Property> properties = make_catalogue();
  return properties;
}

const Property& property_named(const std::string& name) {
  for (const Property& p : catalogue())
    if (p.name == name) return p;
  std::string known;
  for (const Property& p : catalogue()) known += (known.empty() ? "" : ", ") + p.name;
  throw std::invalid_argument("unknown property '" + name + "'; properties: " + known);
}

}  // namespace pacheck
