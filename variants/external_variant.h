// A variant whose kernel lives outside pacheck: a plugin (plugin/), a Python callable (python/), or a project linking
// the installed package. It declares a name, capabilities, an error model and a run function, and is then treated as
// the built-in variants are.
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
  // Runs the kernel: output as Variant::run, rounded to the dtype. It may throw; the message reaches the failure.
  std::function<Output(const Problem&, const Knobs&)> run;
};

class ExternalVariant final : public Variant {
 public:
  explicit ExternalVariant(ExternalVariantSpec spec) : spec_(std::move(spec)) {}
  std::string name() const override { return spec_.name; }
  std::string description() const override { return spec_.description; }
  Capabilities capabilities() const override { return spec_.capabilities; }
  // Throws std::invalid_argument, without calling the kernel, for a problem needing a feature it does not declare.
  Output run(const Problem& problem, const Knobs& knobs) const override;
  ErrorModel error_model(const Problem& problem, const OracleResult& oracle, std::size_t row,
                         const Knobs& knobs) const override;

 private:
  ExternalVariantSpec spec_;
};

// Empty when the spec declares a usable variant, else what is wrong, naming the field (name, dtypes, modes, head dim
// limit 1..256, block sizes, GQA ratios, mutant flag, error-model coefficients, run function).
std::string external_variant_problem(const ExternalVariantSpec& spec);

// Throws std::invalid_argument naming the variant and the feature when the problem has a logit option, fp8 format
// or fp8 query dtype / head dim that `caps` leaves out: every door calls it before its kernel sees a problem.
void require_declared_features(const std::string& variant, const Capabilities& caps, const Problem& problem);

// Validates the spec and adds it to the registry; std::invalid_argument naming the variant and what is wrong, or
// that its name is taken.
const Variant& register_external_variant(ExternalVariantSpec spec);

}  // namespace pacheck
