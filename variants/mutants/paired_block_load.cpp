// paired_block_load: to issue fewer, wider loads the kernel walks the history two blocks at a time and slices
// both out of the pool starting at the first block's id, as if logical blocks 2i and 2i + 1 were physically
// adjacent. Right only where the allocator happened to place them so; a shuffled pool reads other blocks (a
// reviewer caught exactly this in hw-native-sys/pypto#470: "the block table cannot be read contiguously").
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct PairedBlockLoad final : Mutant {
  PairedBlockLoad()
      : Mutant({"paired_block_load", Kernel::streaming, Bug::paired_block_load,
                "logical blocks 2i and 2i + 1 are loaded from one table entry, as if physically adjacent"}) {}
};

PACHECK_REGISTER_VARIANT(PairedBlockLoad);

}  // namespace
}  // namespace pacheck::mutants
