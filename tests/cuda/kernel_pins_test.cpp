// The kernel pins (cuda/kernel_pins.h): the environment variables that pin the CUDA kernels' layout and merge shape
// are read until a test pins them, a malformed one is an error naming the variable and what it may hold, and replay
// lines spell them as the environment holds them or as a test pinned them. Plain C++: runs in every build, with or
// without CUDA.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "cuda/kernel_pins.h"

namespace pacheck::cuda {
namespace {

std::string error_of_check() {
  try {
    check_kernel_pins();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// One test, in this order: the pins are process-wide, so the environment is read only until the first pin.
TEST(KernelPins, ReadTheEnvironmentUntilPinnedAndNameAMalformedValue) {
  unsetenv("PACHECK_TENSOR_CORE_LAYOUT");
  unsetenv("PACHECK_SPLITK_MERGE");
  EXPECT_EQ(error_of_check(), "");
  EXPECT_EQ(pinned_tensor_core_layout(), TensorCoreLayoutChoice::automatic);
  EXPECT_EQ(pinned_merge_shape(), MergeShapeChoice::automatic);

  setenv("PACHECK_SPLITK_MERGE", "warps", 1);
  setenv("PACHECK_TENSOR_CORE_LAYOUT", "", 1);  // empty: automatic
  EXPECT_EQ(pinned_merge_shape(), MergeShapeChoice::warps);
  EXPECT_EQ(pinned_tensor_core_layout(), TensorCoreLayoutChoice::automatic);
  EXPECT_EQ(replay_prefix_from_environment(), "PACHECK_SPLITK_MERGE=warps ");  // the empty one is left out
  EXPECT_EQ(replay_prefix_for(TensorCoreLayoutChoice::deep, MergeShapeChoice::automatic),
            "PACHECK_TENSOR_CORE_LAYOUT=deep PACHECK_SPLITK_MERGE=automatic ");

  setenv("PACHECK_SPLITK_MERGE", "bogus", 1);
  EXPECT_EQ(error_of_check(), "PACHECK_SPLITK_MERGE must be lanes, warps, or automatic, not 'bogus'");
  setenv("PACHECK_SPLITK_MERGE", "lanes", 1);
  setenv("PACHECK_TENSOR_CORE_LAYOUT", "sideways", 1);
  EXPECT_EQ(error_of_check(), "PACHECK_TENSOR_CORE_LAYOUT must be deep, wide, wide-evict-first, wide-kv-tma, or "
                              "automatic, not 'sideways'");
  setenv("PACHECK_TENSOR_CORE_LAYOUT", "wide-kv-tma", 1);
  EXPECT_EQ(pinned_tensor_core_layout(), TensorCoreLayoutChoice::wide_kv_tma);
  EXPECT_EQ(replay_prefix_for(TensorCoreLayoutChoice::wide_kv_tma, MergeShapeChoice::lanes),
            "PACHECK_TENSOR_CORE_LAYOUT=wide-kv-tma PACHECK_SPLITK_MERGE=lanes ");
  setenv("PACHECK_TENSOR_CORE_LAYOUT", "wide", 1);
  EXPECT_EQ(pinned_tensor_core_layout(), TensorCoreLayoutChoice::wide);
  setenv("PACHECK_TENSOR_CORE_LAYOUT", "wide-evict-first", 1);
  EXPECT_EQ(pinned_tensor_core_layout(), TensorCoreLayoutChoice::wide_evict_first);
  EXPECT_EQ(replay_prefix_for(TensorCoreLayoutChoice::wide_evict_first, MergeShapeChoice::automatic),
            "PACHECK_TENSOR_CORE_LAYOUT=wide-evict-first PACHECK_SPLITK_MERGE=automatic ");

  // Pinned, the environment is no longer read: automatic then means the production rule.
  pin_tensor_core_layout(TensorCoreLayoutChoice::deep);
  pin_merge_shape(MergeShapeChoice::automatic);
  setenv("PACHECK_SPLITK_MERGE", "bogus", 1);
  EXPECT_EQ(error_of_check(), "");
  EXPECT_EQ(pinned_tensor_core_layout(), TensorCoreLayoutChoice::deep);
  EXPECT_EQ(pinned_merge_shape(), MergeShapeChoice::automatic);
  unsetenv("PACHECK_TENSOR_CORE_LAYOUT");
  unsetenv("PACHECK_SPLITK_MERGE");
}

}  // namespace
}  // namespace pacheck::cuda
