// Mutant: a registered variant that runs the meta-kernel with its bug and claims its counterpart's promises.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {

const Variant& Mutant::counterpart() const { return Registry::instance().get(counterpart_name(spec_.kernel)); }

std::string Mutant::description() const {
  return std::string(counterpart_name(spec_.kernel)) + " with one bug: " + std::string(spec_.bug_description);
}

Capabilities Mutant::capabilities() const {
  Capabilities c = counterpart().capabilities();
  c.is_mutant = true;
  c.logit_options = LogitOptionSupport::all();  // the meta-kernel computes every option, as the CPU kernels do
  return c;
}

Output Mutant::run(const Problem& problem, const Knobs& knobs) const {
  return run_kernel(spec_.kernel, problem, knobs, spec_.bug, launches_++);
}

ErrorModel Mutant::error_model(const Problem& problem, const OracleResult& oracle, std::size_t row,
                               const Knobs& knobs) const {
  return counterpart().error_model(problem, oracle, row, knobs);
}

}  // namespace pacheck::mutants
