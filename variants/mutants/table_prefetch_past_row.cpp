// table_prefetch_past_row: the software-pipelined loop prefetches the next tile's block id and first key while
// the current tile computes, and the last iteration does not check that a next tile exists: it reads the table
// past the end of the row and follows the id it finds. Harmless on a recycled but valid block; an illegal
// address on an invalid one or past the table (vllm-project/flash-attention#42 fixed a read off the end of the
// block_table in the paged FlashAttention kernel).
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct TablePrefetchPastRow final : Mutant {
  TablePrefetchPastRow()
      : Mutant({"table_prefetch_past_row", Kernel::streaming, Bug::table_prefetch_past_row,
                "the pipelined loop prefetches the next tile's block through the table with no bound check"}) {}
};

PACHECK_REGISTER_VARIANT(TablePrefetchPastRow);

}  // namespace
}  // namespace pacheck::mutants
