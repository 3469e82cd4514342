// The knobs' choice names (problem/knobs.h): every choice round-trips through its name, anything else is refused,
// and the knobs' text names the pinned choices only.
#include <gtest/gtest.h>

#include "problem/knobs.h"

namespace pacheck {
namespace {

TEST(Knobs, EveryChoiceRoundTripsThroughItsName) {
  for (KernelLayout layout :
       {KernelLayout::automatic, KernelLayout::deep, KernelLayout::wide, KernelLayout::wide_evict_first})
    EXPECT_EQ(parse_kernel_layout(knob_name(layout)), layout) << knob_name(layout);
  for (MergeShape merge : {MergeShape::automatic, MergeShape::lanes, MergeShape::warps})
    EXPECT_EQ(parse_merge_shape(knob_name(merge)), merge) << knob_name(merge);
  EXPECT_EQ(kernel_layout_names(), "automatic, deep, wide, wide-evict-first");
  EXPECT_EQ(merge_shape_names(), "automatic, lanes, warps");
}

TEST(Knobs, OtherNamesAreRefused) {
  for (const char* name : {"", "Deep", "wide_evict_first", "wide-kv-tma", " deep"})
    EXPECT_FALSE(parse_kernel_layout(name).has_value()) << "'" << name << "'";
  for (const char* name : {"", "lane", "warp", "WARPS"}) EXPECT_FALSE(parse_merge_shape(name).has_value()) << name;
}

TEST(Knobs, TheTextNamesOnlyPinnedChoices) {
  Knobs k;
  EXPECT_EQ(knobs_text(k), "tile_size=16 split_size=64 num_splits=0");
  EXPECT_FALSE(k.pins.any());
  k.pins.merge = MergeShape::lanes;
  EXPECT_TRUE(k.pins.any());
  EXPECT_EQ(knobs_text(k), "tile_size=16 split_size=64 num_splits=0 merge=lanes");
  k.pins.layout = KernelLayout::deep;
  EXPECT_EQ(knobs_text(k), "tile_size=16 split_size=64 num_splits=0 layout=deep merge=lanes");
}

}  // namespace
}  // namespace pacheck
