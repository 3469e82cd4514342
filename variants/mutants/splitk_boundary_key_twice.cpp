// splitk_boundary_key_twice: split i covers keys [i * split, (i + 1) * split] with an inclusive end, so the key
// at every split boundary is folded by two splits and counts twice. Invisible with one split.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct SplitkBoundaryKeyTwice final : Mutant {
  SplitkBoundaryKeyTwice()
      : Mutant({"splitk_boundary_key_twice", Kernel::splitk, Bug::split_boundary_key_twice,
                "split i folds keys [i * split, (i + 1) * split] inclusive: each boundary key counts twice"}) {}
};

PACHECK_REGISTER_VARIANT(SplitkBoundaryKeyTwice);

}  // namespace
}  // namespace pacheck::mutants
