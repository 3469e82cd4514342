// last_partial_tile_skipped: the number of tiles is `num_keys // BLOCK_N` instead of `cdiv(num_keys, BLOCK_N)`,
// so the keys of a last, partial tile are never folded; a history shorter than one tile becomes 0/0 = NaN.
// Invisible whenever the tile size divides the row's key count.
#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

struct LastPartialTileSkipped final : Mutant {
  LastPartialTileSkipped()
      : Mutant({"last_partial_tile_skipped", Kernel::streaming, Bug::last_partial_tile_skipped,
                "the tile count is floor(keys / tile) instead of ceil: the last partial tile is skipped"}) {}
};

PACHECK_REGISTER_VARIANT(LastPartialTileSkipped);

}  // namespace
}  // namespace pacheck::mutants
