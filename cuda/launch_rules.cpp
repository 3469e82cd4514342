// The host-side rules of launch_rules.h: plain functions of the grid and the GPU's size, so the CPU suite tests them.
#include "cuda/launch_rules.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace pacheck::cuda {

long long attention_grid_blocks(int num_items, int num_kv_heads) {
  const long long blocks = static_cast<long long>(num_items) * num_kv_heads;
  if (blocks > std::numeric_limits<int>::max())
    throw std::invalid_argument("the attention grid holds at most 2^31 - 1 blocks, one per work item and KV head; " +
                                std::to_string(num_items) + " items x " + std::to_string(num_kv_heads) +
                                " KV heads is more");
  return blocks;
}

KernelLayout choose_tensor_core_layout(long long blocks, int multiprocessors, KernelLayout pinned, KvCache cache) {
  if (pinned != KernelLayout::automatic) return pinned;
  if (cache != KvCache::same) return KernelLayout::wide;
  const long long wave = static_cast<long long>(kWideBlocksPerMultiprocessor) * multiprocessors;
  if (blocks <= wave) return KernelLayout::wide_evict_first;
  return blocks >= 4 * wave ? KernelLayout::wide : KernelLayout::deep;
}

MergeShape choose_merge_shape(long long rows, int multiprocessors, MergeShape pinned) {
  if (pinned != MergeShape::automatic) return pinned;
  return rows <= multiprocessors ? MergeShape::lanes : MergeShape::warps;
}

KernelArithmetic kernel_arithmetic(Storage storage, int head_dim, KvCache cache) {
  KernelArithmetic k;
  if (uses_tensor_cores(storage, head_dim)) {
    k.tensor_cores = true;
    k.fp16_operands = storage == Storage::f16 || cache == KvCache::e4m3;
    k.max_tile_keys = kTensorCoreTileKeys;
    k.key_groups = kTensorCoreWarps;
    return k;
  }
  const int lanes = lanes_for(head_dim);
  k.max_tile_keys = cuda_core_tile_keys(lanes, storage_bytes(storage));
  k.key_groups = cuda_core_key_groups(lanes);
  return k;
}

int split_size_for_one_wave(int context, int grid_rows, int resident_blocks, int tile) {
  const int splits = std::max(1, resident_blocks / std::max(1, grid_rows));
  const int per_split = (context + splits - 1) / splits;
  return round_up(per_split, tile);
}

int storage_bytes(Storage storage) { return storage == Storage::f32 ? 4 : 2; }

}  // namespace pacheck::cuda
