// exp_poly2: exp computed in software as 2^(x log2 e), with 2^f from a degree-2 polynomial: ~1.7e-3 relative
// error where expf is within an ulp. Kernels emulate exp2 on the FMA pipes to relieve the SFU (FlashAttention-4
// does on Blackwell, with a higher degree); one degree too few is a precision bug that only the error bound sees.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct ExpPoly2 final : Mutant {
  ExpPoly2()
      : Mutant({"exp_poly2", Kernel::streaming, Bug::approximate_exp,
                "exp from a degree-2 polynomial for 2^f: about 1.7e-3 relative error"}) {}
};

PACHECK_REGISTER_VARIANT(ExpPoly2);

}  // namespace
}  // namespace pacheck::mutants
