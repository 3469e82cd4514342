// pv_in_bf16: the PV accumulator is kept in the storage dtype, bf16, instead of fp32 (`acc = tl.zeros(...,
// dtype=v.dtype)`, or `tl.dot(p.to(v.dtype), v, acc)` with a bf16 acc): every rescale and every add rounds to 8
// significant bits. A precision bug: nothing is "wrong" but the error, so only the error bound can see it.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct PvInBf16 final : Mutant {
  PvInBf16()
      : Mutant({"pv_in_bf16", Kernel::streaming, Bug::pv_accumulated_in_bf16,
                "the weighted-V accumulator is kept in bf16 instead of fp32"}) {}
};

PACHECK_REGISTER_VARIANT(PvInBf16);

}  // namespace
}  // namespace pacheck::mutants
