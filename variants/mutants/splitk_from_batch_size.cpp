// splitk_from_batch_size: the launcher splits the keys only when the (sequence, head) grid is too small to fill
// the machine, so the same sequence is reduced in one order alone and another in a batch. Each result is within
// the error bound; they are not the same bits, and the kernel claims batch invariance. This is the batch-variance
// source of "Defeating Nondeterminism in LLM Inference" (Thinking Machines, 2025), shipped in many split-KV
// schedulers (ROCm/aiter#4378, sgl-project/sgl-flash-attn#43, Dao-AILab/flash-attention#1897).
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct SplitkFromBatchSize final : Mutant {
  SplitkFromBatchSize()
      : Mutant({"splitk_from_batch_size", Kernel::splitk, Bug::splits_from_batch_size,
                "splits the keys only when the (sequence, head) grid is small: a row depends on its batch"}) {}
};

PACHECK_REGISTER_VARIANT(SplitkFromBatchSize);

}  // namespace
}  // namespace pacheck::mutants
