// acc_not_rescaled: when a tile raises the running max, the denominator is rescaled by exp(m_old - m_new) but the
// weighted-V accumulator is not, so keys folded before the new max keep weights relative to the old one.
// The classic first-draft online-softmax bug (the rescale of `acc` is the line people drop when porting the
// FlashAttention loop); it is invisible when the first tile holds the row's max.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct AccNotRescaled final : Mutant {
  AccNotRescaled()
      : Mutant({"acc_not_rescaled", Kernel::streaming, Bug::accumulator_not_rescaled,
                "the accumulator is not rescaled by exp(m_old - m_new) when the running max grows"}) {}
};

PACHECK_REGISTER_VARIANT(AccNotRescaled);

}  // namespace
}  // namespace pacheck::mutants
