// gqa_head_shift: the group of query head h is computed with a shift by log2 of the group size, as kernels
// specialised on power-of-two group sizes do; handed a ratio of 3, 5, 6 or 7 (Qwen2.5-7B has 28 query heads over
// 4 KV heads) the floor(log2) shift sends heads to the wrong KV head, past the last one included (compare the
// non-divisible GQA shapes of fla-org/flash-linear-attention#1029). Power-of-two ratios are exactly right.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct GqaHeadShift final : Mutant {
  GqaHeadShift()
      : Mutant({"gqa_head_shift", Kernel::streaming, Bug::gqa_head_shift,
                "query head h reads KV head h >> floor(log2(ratio)): wrong unless the GQA ratio is a power of two"}) {}
};

PACHECK_REGISTER_VARIANT(GqaHeadShift);

}  // namespace
}  // namespace pacheck::mutants
