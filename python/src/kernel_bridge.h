// A Python callable declared as a paged-attention kernel: an ExternalVariant (variants/external_variant.h) whose run
// lends the problem to the callable and reads back its output, and the property runs and replays over it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>

#include "properties/catalogue.h"
#include "python/src/problem_object.h"
#include "variants/external_variant.h"

namespace pacheck::python {

struct BridgeState;

class DeclaredKernel {
 public:
  // Throws std::invalid_argument or TypeError naming what is wrong with the declaration.
  DeclaredKernel(nanobind::object kernel, const std::string& name, nanobind::handle capabilities,
                 nanobind::handle error_model);
  ~DeclaredKernel();

  const std::string& name() const;
  // The catalogue's properties that apply to the declared capabilities, in catalogue order.
  std::vector<std::string> applicable_properties() const;
  // The property of that name; throws std::invalid_argument when there is none or it does not apply.
  const Property& require_applicable(const std::string& property) const;
  // Runs one property (properties/runner.h); the outcome as a dict for pacheck._check: passed, gave_up, cases,
  // message, reproduce, case_file, worst, kernel_exception, contract_error, interrupt.
  nanobind::dict run_property(const std::string& property, int cases, std::uint64_t seed, bool engine_shapes,
                              const std::string& failure_dir, const std::optional<std::string>& reproduce);
  // Runs the kernel on a case file's problem and compares it with the oracle: the same keys, plus note and fits_fp32.
  nanobind::dict replay(const std::string& case_file);
  // The kernel's output on `problem` as pacheck reads it (float32 numpy), lent as in a property run; its exceptions
  // propagate.
  nanobind::object run(const ProblemObject& problem);

 private:
  std::shared_ptr<BridgeState> state_;
  std::unique_ptr<ExternalVariant> variant_;
};

// The names of the catalogue's properties that apply to these capabilities (a dict, as check() takes them).
std::vector<std::string> applicable_properties(nanobind::handle capabilities);

// Adds DeclaredKernel, KernelContractError and the catalogue listing to the module.
void bind_kernel_bridge(nanobind::module_& m);

}  // namespace pacheck::python
