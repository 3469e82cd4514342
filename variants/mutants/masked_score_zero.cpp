// masked_score_zero: lanes past the ragged tail or the causal limit get the masked load's fill value, 0, as
// their score instead of -inf (`tl.load(..., mask=m, other=0.0)` feeding the softmax directly, or
// `tl.where(mask, qk, 0)`), so each masked lane adds exp(0 - m) to the denominator and its (zero or future) V to
// the accumulator.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct MaskedScoreZero final : Mutant {
  MaskedScoreZero()
      : Mutant({"masked_score_zero", Kernel::streaming, Bug::masked_score_zero,
                "masked lanes are scored 0 (the masked load's fill value) instead of -inf"}) {}
};

PACHECK_REGISTER_VARIANT(MaskedScoreZero);

}  // namespace
}  // namespace pacheck::mutants
