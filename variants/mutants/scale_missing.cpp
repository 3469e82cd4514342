// scale_missing: the softmax scale is never applied: the kernel expects a pre-scaled Q that no caller scales, or
// the scale argument is not passed through (vllm-project/vllm#32149 fixed one such missing scale).
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct ScaleMissing final : Mutant {
  ScaleMissing()
      : Mutant({"scale_missing", Kernel::streaming, Bug::scale_not_applied,
                "the softmax scale is never applied"}) {}
};

PACHECK_REGISTER_VARIANT(ScaleMissing);

}  // namespace
}  // namespace pacheck::mutants
