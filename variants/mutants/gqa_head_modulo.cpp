// gqa_head_modulo: query head h reads KV head h % num_kv_heads (the "tile" layout) instead of h / ratio (the
// "repeat" layout every GQA model uses). Right for MHA and MQA, wrong for every other GQA shape; jax-js shipped
// it (fixed in ekzhang/jax-js#180: "should be repeat instead of tile").
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct GqaHeadModulo final : Mutant {
  GqaHeadModulo()
      : Mutant({"gqa_head_modulo", Kernel::streaming, Bug::gqa_head_modulo,
                "query head h reads KV head h % num_kv_heads instead of h / ratio"}) {}
};

PACHECK_REGISTER_VARIANT(GqaHeadModulo);

}  // namespace
}  // namespace pacheck::mutants
