// causal_off_by_one: the causal mask compares with the wrong side of the diagonal (`k_pos <= q_pos + 1`, or a
// query position counted from 1), so every prefill or continuation query but the last sees one future key.
// Decode rows rely on the tail mask alone and are unaffected.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct CausalOffByOne final : Mutant {
  CausalOffByOne()
      : Mutant({"causal_off_by_one", Kernel::streaming, Bug::causal_off_by_one,
                "the causal mask lets key position + 1 through"}) {}
};

PACHECK_REGISTER_VARIANT(CausalOffByOne);

}  // namespace
}  // namespace pacheck::mutants
