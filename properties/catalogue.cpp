#include "properties/catalogue.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "problem/case_file.h"
#include "properties/property_bodies.h"

namespace pacheck {

gen::Limits limits_for(const Capabilities& caps) {
  gen::Limits limits;
  limits.dtypes = caps.dtypes;
  limits.modes = caps.modes;
  limits.max_head_dim = caps.max_head_dim;
  limits.head_dim_supported = caps.supports_head_dim;
  limits.block_sizes = caps.block_sizes;
  limits.gqa_ratios = caps.gqa_ratios;
  limits.logit_options = caps.logit_options;
  limits.fp8_caches = caps.fp8_caches;
  limits.fp8_query_dtypes = caps.fp8_query_dtypes;
  limits.fp8_head_dim_multiple = caps.fp8_head_dim_multiple;
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

std::vector<Property> make_catalogue() {
  const auto always = [](const Capabilities&) { return true; };
  // GqaEquivalence runs a GQA problem and its MHA form: only for variants that take both.
  const auto takes_mha_and_gqa = [](const Capabilities& c) {
    const auto& r = c.gqa_ratios;
    return r.empty() || (std::ranges::find(r, 1) != r.end() &&
                         std::ranges::any_of(r, [](int ratio) { return ratio >= 2; }));
  };
  return {
      {"UlpBoundedAgreement", "every output element within the variant's error bound of the exact oracle", always,
       bodies::ulp_bounded_agreement},
      {"TileSizeInvariance", "two tile sizes, 1 to beyond the history, both within bound of the oracle", always,
       bodies::tile_size_invariance},
      {"SplitSizeInvariance", "a split size (1 to beyond the history) and a split count, both within bound",
       [](const Capabilities& c) { return c.uses_splits; }, bodies::split_size_invariance},
      {"MaskedLanesZeroWeight", "poisoning every slot past the context leaves the output bit-identical, NaN-free",
       always, bodies::masked_lanes_zero_weight},
      {"PhysicalLayoutInvariance", "relabelling the physical blocks leaves the output bit-identical", always,
       bodies::physical_layout_invariance},
      {"GqaEquivalence", "GQA equals MHA with replicated KV heads (oracle bit-identical, variant within bound)",
       takes_mha_and_gqa, bodies::gqa_equivalence},
      {"BatchIsolation", "a sequence's output is bit-identical alone or in any batch order",
       [](const Capabilities& c) { return c.batch_invariant; }, bodies::batch_isolation},
      {"Determinism", "the same problem gives bit-identical output run after run",
       [](const Capabilities& c) { return c.deterministic; }, bodies::determinism},
      {"SingleKeyReturnsItsValue", "a query with one key returns that key's V exactly", always,
       bodies::single_key_returns_its_value},
      {"PowerOfTwoValueScaling", "scaling V by 2^k scales the output by exactly 2^k", always,
       bodies::power_of_two_value_scaling},
      {"IdenticalKeysGiveTheMean", "identical keys give the mean of V within the accumulation bound", always,
       bodies::identical_keys_give_the_mean},
      {"WindowedOutKeysZeroWeight", "poisoning the keys before every query's window leaves the output bit-identical",
       [](const Capabilities& c) { return c.logit_options.window; }, bodies::windowed_out_keys_zero_weight},
      {"LargeSoftCapIsNoCap", "a soft cap 2^20 times every logit is within bound of the uncapped exact answer",
       [](const Capabilities& c) { return c.logit_options.soft_cap; }, bodies::large_soft_cap_is_no_cap},
      {"MinusInfinitySinkIsNoSink", "a sink of -inf for every head leaves the output bit-identical",
       [](const Capabilities& c) { return c.logit_options.sinks; }, bodies::minus_infinity_sink_is_no_sink},
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
