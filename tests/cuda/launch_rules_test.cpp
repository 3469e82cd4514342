// The launch rules (cuda/launch_rules.h): kernel, layout, merge shape and split size as plain functions of the
// problem, the grid and the GPU's size, a pinned choice always winning; and plan_attention's work items under a
// sliding window, which the split-K merge relies on.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "cuda/launch_rules.h"

namespace pacheck::cuda {
namespace {

constexpr int kH200Multiprocessors = 132;

TEST(LaunchRules, HeadDimsTakeTheSmallestLaneCapacityThatHoldsThem) {
  for (const auto& [head_dim, lanes] : {std::pair{1, 32}, {32, 32}, {33, 64}, {64, 64}, {65, 128}, {128, 128},
                                        {129, 256}, {kMaxHeadDim, 256}})
    EXPECT_EQ(lanes_for(head_dim), lanes) << head_dim;
}

TEST(LaunchRules, WholeGqaGroupsUpToFourTakeTheFourRowKernel) {
  for (int gqa = 1; gqa <= 4; ++gqa) EXPECT_EQ(row_capacity(gqa), 4) << gqa;
  for (int gqa = 5; gqa <= 16; ++gqa) EXPECT_EQ(row_capacity(gqa), kMaxRows) << gqa;
}

TEST(LaunchRules, Only16BitStorageWithWholeSixteenByteRowsRunsOnTheTensorCores) {
  EXPECT_TRUE(uses_tensor_cores(Storage::bf16, 128));
  EXPECT_TRUE(uses_tensor_cores(Storage::bf16, 8));
  EXPECT_FALSE(uses_tensor_cores(Storage::bf16, 12));
  EXPECT_TRUE(uses_tensor_cores(Storage::f16, 128));
  EXPECT_FALSE(uses_tensor_cores(Storage::f16, 100));
  EXPECT_FALSE(uses_tensor_cores(Storage::f32, 128));
  const KernelArithmetic tensor = kernel_arithmetic(Storage::bf16, 128);
  EXPECT_TRUE(tensor.tensor_cores);
  EXPECT_FALSE(tensor.fp16_operands);
  EXPECT_EQ(tensor.max_tile_keys, kTensorCoreTileKeys);
  EXPECT_EQ(tensor.key_groups, kTensorCoreWarps);
  const KernelArithmetic fp16 = kernel_arithmetic(Storage::f16, 64);
  EXPECT_TRUE(fp16.tensor_cores);
  EXPECT_TRUE(fp16.fp16_operands);
  // An e4m3 cache's values product runs in fp16, an e5m2 cache's in bf16 (its subnormals are fp16's).
  EXPECT_TRUE(kernel_arithmetic(Storage::bf16, 128, KvCache::e4m3).fp16_operands);
  EXPECT_FALSE(kernel_arithmetic(Storage::bf16, 128, KvCache::e5m2).fp16_operands);
}

TEST(LaunchRules, TheGridIsOneBlockPerItemAndKvHeadUpToCudasLimit) {
  EXPECT_EQ(attention_grid_blocks(64, 8), 512);
  EXPECT_EQ(attention_grid_blocks(1, 65536), 65536);  // more KV heads than a second grid dimension would hold
  EXPECT_EQ(attention_grid_blocks(1 << 30, 1), 1LL << 30);
  EXPECT_EQ(attention_grid_blocks(2147483647, 1), 2147483647LL);
  try {
    attention_grid_blocks(1 << 30, 2);
    ADD_FAILURE() << "no error for 2^31 blocks";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("1073741824 items x 2 KV heads"), std::string::npos) << e.what();
  }
  EXPECT_THROW(attention_grid_blocks(2147483647, 2147483647), std::invalid_argument);
}

TEST(LaunchRules, CudaCoreTilesShrinkOnlyForKilobyteRows) {
  EXPECT_EQ(kernel_arithmetic(Storage::f32, 128).max_tile_keys, 32);
  EXPECT_EQ(kernel_arithmetic(Storage::f32, 256).max_tile_keys, 16);  // 256 fp32 lanes: 1 KB a row
  EXPECT_EQ(kernel_arithmetic(Storage::f16, 252).max_tile_keys, 32);
  // 8 lanes a thread: a key spans lanes / 8 threads, the block's other threads take other keys.
  EXPECT_EQ(kernel_arithmetic(Storage::f32, 32).key_groups, 32);
  EXPECT_EQ(kernel_arithmetic(Storage::f16, 252).key_groups, 4);
  EXPECT_FALSE(kernel_arithmetic(Storage::bf16, 100).tensor_cores);
}

TEST(LaunchRules, TheTensorCoreCopiesFollowTheLaneCapacity) {
  EXPECT_EQ(tensor_core_copies(32), TileCopies::async);  // padded rows: narrower than the swizzle
  EXPECT_EQ(tensor_core_copies(64), TileCopies::tensor);
  EXPECT_EQ(tensor_core_copies(128), TileCopies::async);
  EXPECT_EQ(tensor_core_copies(256), TileCopies::tensor);
  EXPECT_FALSE(tensor_core_swizzled(32));
  EXPECT_TRUE(tensor_core_swizzled(64));
  EXPECT_EQ(tensor_core_stages(128), 3);
  EXPECT_EQ(tensor_core_stages(256), 2);
  // An fp8 cache's rows are half as wide: swizzled from 128 lanes, and always copied asynchronously.
  EXPECT_FALSE(tensor_core_swizzled(64, 1));
  EXPECT_TRUE(tensor_core_swizzled(128, 1));
  EXPECT_EQ(tensor_core_copies(256, 1), TileCopies::async);
}

// The layout an H200 gets for a grid of `blocks`.
KernelLayout h200_layout(long long blocks, KernelLayout pinned = KernelLayout::automatic,
                         KvCache cache = KvCache::same) {
  return choose_tensor_core_layout(blocks, kH200Multiprocessors, pinned, cache);
}

TEST(LaunchRules, AnFp8CacheRunsWideAtEveryGridSize) {
  const long long wave = kFp8WideBlocksPerMultiprocessor * kH200Multiprocessors;
  for (KvCache cache : {KvCache::e4m3, KvCache::e5m2}) {
    for (long long blocks : {1LL, wave, wave + 1, 4 * wave})
      EXPECT_EQ(h200_layout(blocks, KernelLayout::automatic, cache), KernelLayout::wide) << blocks;
    EXPECT_EQ(h200_layout(1, KernelLayout::deep, cache), KernelLayout::deep);
  }
}

TEST(LaunchRules, AnFp8CacheTakesBf16QueriesAndHeadDimsThatAreAMultipleOf16) {
  for (KvCache cache : {KvCache::e4m3, KvCache::e5m2}) {
    EXPECT_TRUE(takes_kv_cache(Storage::bf16, 128, cache));
    EXPECT_TRUE(takes_kv_cache(Storage::bf16, 80, cache));
    EXPECT_FALSE(takes_kv_cache(Storage::bf16, 40, cache));
    EXPECT_FALSE(takes_kv_cache(Storage::f16, 128, cache));
    EXPECT_FALSE(takes_kv_cache(Storage::f32, 128, cache));
  }
  EXPECT_TRUE(takes_kv_cache(Storage::f32, 3, KvCache::same));
}

TEST(LaunchRules, OneWaveRunsWideEvictFirstFourWavesWideAndDeepBetween) {
  const long long wave = kWideBlocksPerMultiprocessor * kH200Multiprocessors;
  EXPECT_EQ(h200_layout(1), KernelLayout::wide_evict_first);
  EXPECT_EQ(h200_layout(wave), KernelLayout::wide_evict_first);
  EXPECT_EQ(h200_layout(wave + 1), KernelLayout::deep);
  EXPECT_EQ(h200_layout(4 * wave - 1), KernelLayout::deep);
  EXPECT_EQ(h200_layout(4 * wave), KernelLayout::wide);
  // The wave is the GPU's: the same grid is several waves of a smaller GPU.
  EXPECT_EQ(choose_tensor_core_layout(wave, 16, KernelLayout::automatic), KernelLayout::wide);
  for (KernelLayout pinned : {KernelLayout::deep, KernelLayout::wide, KernelLayout::wide_evict_first}) {
    EXPECT_EQ(h200_layout(1, pinned), pinned);
    EXPECT_EQ(h200_layout(100 * wave, pinned), pinned);
  }
}

TEST(LaunchRules, TheMergeTakesALaneAThreadUpToOneRowAMultiprocessor) {
  const auto h200_merge = [](long long rows, MergeShape pinned = MergeShape::automatic) {
    return choose_merge_shape(rows, kH200Multiprocessors, pinned);
  };
  EXPECT_EQ(h200_merge(1), MergeShape::lanes);
  EXPECT_EQ(h200_merge(kH200Multiprocessors), MergeShape::lanes);
  EXPECT_EQ(h200_merge(kH200Multiprocessors + 1), MergeShape::warps);
  EXPECT_EQ(h200_merge(1, MergeShape::warps), MergeShape::warps);
  EXPECT_EQ(h200_merge(1 << 20, MergeShape::lanes), MergeShape::lanes);
}

TEST(LaunchRules, TheOneWaveSplitIsWholeTilesAndCoversTheContext) {
  // 264 resident blocks over 8 grid rows: 33 splits of 32k keys, 993 keys each rounded up to 1024.
  EXPECT_EQ(split_size_for_one_wave(32768, 8, 264, 64), 1024);
  EXPECT_EQ(split_size_for_one_wave(100, 1, 1000, 64), 64);   // never below one tile
  EXPECT_EQ(split_size_for_one_wave(8192, 4096, 264, 64), 8192);  // a full GPU: one split
  for (int context : {1, 63, 64, 65, 1000, 32768})
    for (int rows : {1, 8, 64, 2048}) {
      const int split = split_size_for_one_wave(context, rows, 264, 64);
      EXPECT_EQ(split % 64, 0);
      const int splits = (context + split - 1) / split;
      EXPECT_LE(splits * rows, std::max(264, rows)) << context << " " << rows;
    }
}

// A window starts each fused item at its first row's window: the keys before it are never walked.
TEST(PlanAttention, AWindowStartsEachFusedItemAtItsFirstRowsWindow) {
  // 40 query tokens (GQA 2, 4 rows a chunk: 2 tokens) at the end of a 1000-key context, a window of 100.
  const AttentionPlan plan = plan_attention({{1000, 40, 0, 0}}, 2, 1, 16, {}, 100);
  ASSERT_EQ(plan.items.size(), 20u);
  for (const WorkItem& item : plan.items) {
    const int first_position = 960 + item.first_row / 2;
    EXPECT_EQ(item.key_begin, first_position + 1 - 100);
    EXPECT_EQ(item.key_end, first_position + 2);
  }
  EXPECT_EQ(plan_attention({{50, 1, 0, 0}}, 1, 1, 16, {}, 100).items[0].key_begin, 0);  // a window beyond the context
  EXPECT_EQ(plan_attention({{50, 1, 0, 0}}, 1, 1, 16, {}, 0).items[0].key_begin, 0);    // no window
  EXPECT_THROW(plan_attention({{50, 1, 0, 0}}, 1, 1, 16, {}, -1), std::invalid_argument);
}

// Split-K under a window: a chunk's items are the splits (cut from position 0) from the one holding its first row's
// window start, clipped to it; the items the merge reads for each row (row_first_split_offset) are that row's
// splits in order, exactly covering its window.
TEST(PlanAttention, SplitKItemsStartAtTheWindowAndTheMergeReadsEachRowsOwnSplits) {
  for (int window : {0, 1, 7, 16, 50, 333, 5000})
    for (int split : {1, 16, 37, 64})
      for (int gqa : {1, 3, 8}) {
        const SequenceMeta seq{700, 45, 0, 0};
        const AttentionPlan plan = plan_attention({seq}, gqa, 1, 16, {split}, window);
        const int first_position = seq.context_len - seq.num_queries;
        for (int row = 0; row < seq.num_queries * gqa; ++row) {
          const int chunk = row / plan.rows_per_chunk;
          const int position = first_position + row / gqa;
          const int first_item = plan.chunk_first_item[chunk] +
                                 row_first_split_offset(first_position + chunk * plan.rows_per_chunk / gqa, position,
                                                        split, window);
          const int used_splits = position / split + 1 - window_start(position, window) / split;
          int next_key = window_start(position, window);  // the row's keys, walked through its items
          for (int k = 0; k < used_splits; ++k) {
            const WorkItem& item = plan.items[first_item + k];
            ASSERT_EQ(item.first_row, chunk * plan.rows_per_chunk) << window << " " << split << " " << row;
            EXPECT_LE(item.key_begin, next_key);
            EXPECT_GT(item.key_end, next_key);
            EXPECT_LE(item.key_end - item.key_begin, split);
            next_key = item.key_end;
          }
          EXPECT_GE(next_key, position + 1);
          // The chunk's first item begins at its first row's window, not before.
          EXPECT_EQ(plan.items[plan.chunk_first_item[chunk]].key_begin,
                    window_start(first_position + chunk * plan.rows_per_chunk / gqa, window));
        }
      }
}

}  // namespace
}  // namespace pacheck::cuda
