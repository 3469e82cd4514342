// splitk_ignores_split_max: the flash-decoding reduce sums the splits' partial accumulators and denominators as
// they are, without rescaling each by exp(m_i - m) to the global max (the per-split max, or log-sum-exp, is never
// written or never read). Right when every split has the same max; wrong otherwise.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct SplitkIgnoresSplitMax final : Mutant {
  SplitkIgnoresSplitMax()
      : Mutant({"splitk_ignores_split_max", Kernel::splitk, Bug::reduce_ignores_split_max,
                "the split-K reduce sums partial states without rescaling them by exp(m_i - m)"}) {}
};

PACHECK_REGISTER_VARIANT(SplitkIgnoresSplitMax);

}  // namespace
}  // namespace pacheck::mutants
