// ExternalVariant: a declared kernel run as a variant, with checks on what it declares and what it returns.
#include "variants/external_variant.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace pacheck {

void require_declared_features(const std::string& variant, const Capabilities& caps, const Problem& problem) {
  // An undeclared feature would make the kernel compute another function, or read a field its build lacks.
  const auto refuse = [&](const std::string& gap, const char* feature) {
    throw std::invalid_argument(variant + " is not given this problem: " + gap + " (its declaration leaves that " +
                                feature + " out)");
  };
  if (const std::string gap = logit_option_gap(caps.logit_options, problem.options); !gap.empty())
    refuse(gap, "logit option");
  if (const std::string gap = fp8_cache_gap(caps.fp8_caches, problem); !gap.empty()) refuse(gap, "fp8 format");
  if (const std::string gap = fp8_cache_shape_gap(caps, problem); !gap.empty())
    refuse(gap, "query dtype or head dim for an fp8 cache");
}

Output ExternalVariant::run(const Problem& problem, const Knobs& knobs) const {
  require_declared_features(spec_.name, spec_.capabilities, problem);
  Output out = spec_.run(problem, knobs);
  if (out.size() != problem.output_size())
    throw std::runtime_error(spec_.name + " returned " + std::to_string(out.size()) + " output elements, expected " +
                             std::to_string(problem.output_size()) + " ([total_queries][num_query_heads][head_dim])");
  return out;
}

ErrorModel ExternalVariant::error_model(const Problem& problem, const OracleResult& oracle, std::size_t row,
                                        const Knobs& knobs) const {
  return declared_error_model(spec_.error_model, problem, oracle, row, knobs, spec_.capabilities.uses_splits);
}

std::string external_variant_problem(const ExternalVariantSpec& spec) {
  if (spec.name.empty()) return "the name is empty";
  if (spec.name.size() > 64) return "the name is longer than 64 characters";
  for (char c : spec.name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return "the name may hold only letters, digits, '_', '-' and '.'";
  const Capabilities& c = spec.capabilities;
  if (c.dtypes.empty()) return "it declares no dtype";
  if (c.modes.empty()) return "it declares no mode";
  if (c.max_head_dim < 1 || c.max_head_dim > 256)
    return "max_head_dim must lie in 1..256, got " + std::to_string(c.max_head_dim);
  for (int b : c.block_sizes)
    if (b < 1) return "block sizes must be positive, got " + std::to_string(b);
  for (int r : c.gqa_ratios)
    if (r < 1) return "GQA ratios must be positive, got " + std::to_string(r);
  if (c.is_mutant) return "an external variant cannot declare itself a mutant";
  if (!spec.error_model.stock) {
    const std::string why = coefficients_problem(spec.error_model.coefficients);
    if (!why.empty()) return "its error model: " + why;
  }
  if (!spec.run) return "it has no run function";
  return "";
}

const Variant& register_external_variant(ExternalVariantSpec spec) {
  const std::string why = external_variant_problem(spec);
  if (!why.empty()) throw std::invalid_argument("variant '" + spec.name + "': " + why);
  if (Registry::instance().find(spec.name) != nullptr)
    throw std::invalid_argument("variant '" + spec.name + "' is already registered");
  const std::string name = spec.name;
  Registry::instance().add(std::make_unique<ExternalVariant>(std::move(spec)));
  return Registry::instance().get(name);
}

}  // namespace pacheck
