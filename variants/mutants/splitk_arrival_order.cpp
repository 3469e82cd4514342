// splitk_arrival_order: the reduce merges the partial states in the order the splits finish (an atomic counter
// or atomicAdd accumulation, as split-K GEMMs and FlashAttention-2's backward do), here modelled by rotating the
// merge order with a per-instance launch counter. Each result is within the error bound; two runs on the same
// input are not bit-identical, and the kernel claims to be deterministic.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct SplitkArrivalOrder final : Mutant {
  SplitkArrivalOrder()
      : Mutant({"splitk_arrival_order", Kernel::splitk, Bug::reduce_order_from_arrival,
                "the split-K reduce merges partials in arrival order, which changes from run to run"}) {}
};

PACHECK_REGISTER_VARIANT(SplitkArrivalOrder);

}  // namespace
}  // namespace pacheck::mutants
