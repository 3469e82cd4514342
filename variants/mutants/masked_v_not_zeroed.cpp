// masked_v_not_zeroed: scores are masked correctly, but V is loaded without the mask and every lane's V is
// multiplied by its weight: a masked lane contributes 0 * V, which is NaN when the slot past the context holds a
// recycled block's NaN or Inf (the same leak as pytorch/pytorch#101967, SDPA returning NaN for NaN in masked-out
// positions). Lanes past the table row read whatever the table leads to, illegal addresses included.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct MaskedVNotZeroed final : Mutant {
  MaskedVNotZeroed()
      : Mutant({"masked_v_not_zeroed", Kernel::streaming, Bug::masked_value_not_zeroed,
                "V is loaded without the mask and multiplied by the masked lanes' zero weight"}) {}
};

PACHECK_REGISTER_VARIANT(MaskedVNotZeroed);

}  // namespace
}  // namespace pacheck::mutants
