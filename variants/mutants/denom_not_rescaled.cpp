// denom_not_rescaled: the mirror image of acc_not_rescaled: the accumulator is rescaled, the running sum l is
// not (`l_i = l_i + sum(p)` instead of `l_i = l_i * alpha + sum(p)`), so outputs shrink whenever the max grows
// after the first tile.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct DenomNotRescaled final : Mutant {
  DenomNotRescaled()
      : Mutant({"denom_not_rescaled", Kernel::streaming, Bug::denominator_not_rescaled,
                "the denominator is not rescaled when the running max grows"}) {}
};

PACHECK_REGISTER_VARIANT(DenomNotRescaled);

}  // namespace
}  // namespace pacheck::mutants
