// splitk_drops_last_split: the reduce loops `for i in range(num_splits - 1)` (or the split count is computed
// with floor), so the last split, the one holding the newest keys, never reaches the output. A single split is
// written directly and stays right.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct SplitkDropsLastSplit final : Mutant {
  SplitkDropsLastSplit()
      : Mutant({"splitk_drops_last_split", Kernel::splitk, Bug::reduce_drops_last_split,
                "the split-K reduce stops one split early"}) {}
};

PACHECK_REGISTER_VARIANT(SplitkDropsLastSplit);

}  // namespace
}  // namespace pacheck::mutants
