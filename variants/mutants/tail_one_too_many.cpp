// tail_one_too_many: the ragged-tail mask is `t <= context_len` (or the length passed includes the token being
// generated twice), so a decode row reads one slot past its context: the last block's stale tail slot, or, at a
// block boundary, the block the next table entry names. Prefill rows are saved by their causal mask.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct TailOneTooMany final : Mutant {
  TailOneTooMany()
      : Mutant({"tail_one_too_many", Kernel::streaming, Bug::tail_one_too_many,
                "the ragged-tail mask is t <= context_len: one key too many"}) {}
};

PACHECK_REGISTER_VARIANT(TailOneTooMany);

}  // namespace
}  // namespace pacheck::mutants
