#include "variants/mutants/mutant.h"

namespace pacheck::mutants {

const char* counterpart_name(Kernel kernel) { return kernel == Kernel::streaming ? "cpu_streaming" : "cpu_splitk"; }

const Variant& Mutant::counterpart() const { return Registry::instance().get(counterpart_name(spec_.kernel)); }

std::string Mutant::description() const {
  return std::string(counterpart_name(spec_.kernel)) + " with one bug: " + spec_.bug_description;
}

Capabilities Mutant::capabilities() const {
  Capabilities c = counterpart().capabilities();
  c.is_mutant = true;
  return c;
}

Output Mutant::run(const Problem& problem, const Knobs& knobs) const {
  if (spec_.kernel == Kernel::streaming) return run_streaming(problem, knobs, spec_.bug);
  return run_splitk(problem, knobs, spec_.bug, launches_++);
}

ErrorModel Mutant::error_model(const Problem& problem, const OracleResult& oracle, std::size_t row,
                               const Knobs& knobs) const {
  return counterpart().error_model(problem, oracle, row, knobs);
}

}  // namespace pacheck::mutants
