// A mutant: a correct CPU kernel with one realistic bug, a row of catalogue.cpp, marked is_mutant so only the kill
// matrix runs it. It declares its registered counterpart's capabilities and error model, so whatever kills it, kills
// the bug.
#pragma once

#include <atomic>
#include <span>
#include <string>
#include <string_view>

#include "variants/mutants/buggy_kernels.h"
#include "variants/variant.h"

namespace pacheck::mutants {

// One row of the catalogue.
struct MutantSpec {
  std::string_view name;
  Kernel kernel = Kernel::streaming;
  Bug bug = Bug::none;
  std::string_view bug_description;  // one line: what the bug does
  std::string_view bug_class;        // the real-world mistake it stands for
};

// Every mutant, one row each, in name order; all of them are registered.
std::span<const MutantSpec> catalogue();

class Mutant : public Variant {
 public:
  explicit Mutant(const MutantSpec& spec) : spec_(spec) {}

  std::string name() const override { return std::string(spec_.name); }
  std::string description() const override;
  Capabilities capabilities() const override;
  Output run(const Problem& problem, const Knobs& knobs) const override;
  ErrorModel error_model(const Problem& problem, const OracleResult& oracle, std::size_t row,
                         const Knobs& knobs) const override;

  Bug bug() const { return spec_.bug; }
  Kernel kernel() const { return spec_.kernel; }
  const Variant& counterpart() const;

 private:
  MutantSpec spec_;
  // Numbers the launches, for Bug::reduce_order_from_arrival.
  mutable std::atomic<unsigned> launches_{0};
};

}  // namespace pacheck::mutants
