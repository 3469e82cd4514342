// scale_twice: the softmax scale is applied twice: the caller pre-scales Q (as several prefill paths do) and the
// kernel multiplies the logits by the scale again. The softmax gets sharper or flatter; exact only when every
// logit is equal.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct ScaleTwice final : Mutant {
  ScaleTwice()
      : Mutant({"scale_twice", Kernel::streaming, Bug::scale_applied_twice,
                "the softmax scale is applied twice"}) {}
};

PACHECK_REGISTER_VARIANT(ScaleTwice);

}  // namespace
}  // namespace pacheck::mutants
