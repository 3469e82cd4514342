// A mutant: a correct CPU kernel with one realistic bug, registered like any variant (one file per mutant, see
// variants/mutants/*.cpp) but marked is_mutant, so only the kill matrix runs it.
//
// A mutant claims to be its correct counterpart: it declares cpu_streaming's (or cpu_splitk's) capabilities and
// error model, taken from the registered counterpart itself, so every property holds it to exactly the promises
// the correct kernel makes. Whatever kills it, kills the bug.
#pragma once

#include <atomic>
#include <string>

#include "variants/mutants/buggy_kernels.h"
#include "variants/variant.h"

namespace pacheck::mutants {

enum class Kernel { streaming, splitk };

// The correct variant a mutant of this kernel claims to be: "cpu_streaming" or "cpu_splitk".
const char* counterpart_name(Kernel kernel);

struct MutantSpec {
  std::string name;
  Kernel kernel = Kernel::streaming;
  Bug bug = Bug::none;
  std::string bug_description;  // one line: what the bug does
};

class Mutant : public Variant {
 public:
  explicit Mutant(MutantSpec spec) : spec_(std::move(spec)) {}

  std::string name() const override { return spec_.name; }
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
  // Numbers the launches, for the one bug whose arithmetic depends on them (Bug::reduce_order_from_arrival).
  mutable std::atomic<unsigned> launches_{0};
};

}  // namespace pacheck::mutants
