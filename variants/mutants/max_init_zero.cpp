// max_init_zero: the running max is initialised to 0 (`m_i = tl.zeros(...)` where `tl.full(..., -inf)` was
// meant). Harmless while some logit is >= 0; when every logit is very negative, exp(s - 0) underflows to 0 for
// every key and the row is 0/0 = NaN. Only problems whose logits all sit far below zero reach it.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct MaxInitZero final : Mutant {
  MaxInitZero()
      : Mutant({"max_init_zero", Kernel::streaming, Bug::max_initialised_to_zero,
                "the running max starts at 0 instead of -inf"}) {}
};

PACHECK_REGISTER_VARIANT(MaxInitZero);

}  // namespace
}  // namespace pacheck::mutants
