// causal_top_left: the causal diagonal anchored at the top-left (query i sees keys 0 ..= i), the convention of
// PyTorch's SDPA and of FlashAttention before 2.1, instead of the bottom-right one a KV cache needs (query i sits
// at position context_len - num_queries + i). Identical for prefill; a continuation after a past loses most of
// its history (the same family as the query-offset bug fixed in openai/gpt-oss#196).
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct CausalTopLeft final : Mutant {
  CausalTopLeft()
      : Mutant({"causal_top_left", Kernel::streaming, Bug::causal_top_left,
                "the causal mask is aligned top-left: query i sees keys 0 ..= i"}) {}
};

PACHECK_REGISTER_VARIANT(CausalTopLeft);

}  // namespace
}  // namespace pacheck::mutants
