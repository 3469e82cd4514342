// A variant whose kernel lives outside pacheck's tree: loaded from a plugin (plugin/), given as a Python callable
// (python/), or defined by a project that links the installed package. Each door declares the same four things (a
// name, capabilities, an error model, a run function) and registers an ExternalVariant, so every property, the
// fuzzer, the reports and replay treat it as they treat the built-in variants.
#pragma once

#include <functional>
#include <string>

#include "oracle/stock_error_models.h"
#include "variants/variant.h"

namespace pacheck {

struct ExternalVariantSpec {
  std::string name;         // letters, digits, '_', '-', '.', at most 64 characters, unique in the registry
  std::string description;  // one line
  Capabilities capabilities;
  DeclaredErrorModel error_model;
  // Runs the kernel: the output is [total_queries][num_query_heads][head_dim] in the problem's dtype (values
  // already rounded to it). It may throw; the message reaches the property's failure.
  std::function<Output(const Problem&, const Knobs&)> run;
};

class ExternalVariant final : public Variant {
 public:
  explicit ExternalVariant(ExternalVariantSpec spec) : spec_(std::move(spec)) {}
  std::string name() const override { return spec_.name; }
  std::string description() const override { return spec_.description; }
  Capabilities capabilities() const override { return spec_.capabilities; }
  // Throws std::invalid_argument, without calling the kernel, for a problem that sets a logit option or an fp8
  // cache format it does not declare.
  Output run(const Problem& problem, const Knobs& knobs) const override;
  ErrorModel error_model(const Problem& problem, const OracleResult& oracle, std::size_t row,
                         const Knobs& knobs) const override;

 private:
  ExternalVariantSpec spec_;
};

// Empty when the spec declares a usable variant, else what is wrong with it, naming the field: an empty or
// malformed name, no dtype or mode, a head dim limit outside 1..256, block sizes or GQA ratios that are not
// positive, a mutant flag, nonsense error-model coefficients, no run function.
std::string external_variant_problem(const ExternalVariantSpec& spec);

// Throws std::invalid_argument naming the variant and the feature when the problem sets a logit option or has an fp8
// cache format that `caps` leaves out, or an fp8 cache with a query dtype or head dim it is not taken with: every
// door calls it before its kernel sees a problem.
void require_declared_features(const std::string& variant, const Capabilities& caps, const Problem& problem);

// Validates the spec and adds it to the registry. Throws std::invalid_argument naming the variant and what is
// wrong, or that a variant of that name is already registered.
const Variant& register_external_variant(ExternalVariantSpec spec);

}  // namespace pacheck
