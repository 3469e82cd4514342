// tail_one_too_few: the kernel is handed (or computes) the context length without the newest token, the
// seq_lens / context_lens confusion of paged-attention launchers, so every row at the end of its sequence misses
// its own key; a one-token context becomes 0/0 = NaN.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct TailOneTooFew final : Mutant {
  TailOneTooFew()
      : Mutant({"tail_one_too_few", Kernel::streaming, Bug::tail_one_too_few,
                "the ragged-tail mask is t < context_len - 1: the newest key is dropped"}) {}
};

PACHECK_REGISTER_VARIANT(TailOneTooFew);

}  // namespace
}  // namespace pacheck::mutants
