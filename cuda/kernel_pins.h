// The kernel choices a test can pin: the bf16 tensor-core layout (deep, wide, wide-evict-first or wide-kv-tma) and
// the split-K merge's shape (lanes or warps), both described in paged_attention.h, which chooses them per launch
// while they are `automatic`.
//
// A choice is pinned for a whole process by pin_tensor_core_layout / pin_merge_shape (the GPU suite's Deep, Wide
// and WideKvTma runs) or, while nothing is pinned, by
// PACHECK_TENSOR_CORE_LAYOUT=deep|wide|wide-evict-first|wide-kv-tma|automatic and
// PACHECK_SPLITK_MERGE=lanes|warps|automatic in the environment, read at each launch: the replay lines of failures
// carry them, so that a replay runs the same kernels. Plain C++ in the device-probe library, so that the command
// line can check the variables before it runs anything, with or without CUDA.
#pragma once

#include <string>

namespace pacheck::cuda {

enum class TensorCoreLayoutChoice { automatic, deep, wide, wide_evict_first, wide_kv_tma };
enum class MergeShapeChoice { automatic, lanes, warps };

void pin_tensor_core_layout(TensorCoreLayoutChoice choice);
void pin_merge_shape(MergeShapeChoice choice);

// The pinned choice, else the environment's, else automatic. Throws std::invalid_argument, naming the variable and
// its allowed values, when a variable holds anything else.
TensorCoreLayoutChoice pinned_tensor_core_layout();
MergeShapeChoice pinned_merge_shape();

// Reads both variables: throws as above on a malformed one.
void check_kernel_pins();

// The pins as environment assignments for the front of a replay line, "NAME=value " each:
// replay_prefix_from_environment gives every pin variable that is set (non-empty) in the environment, as it
// stands; replay_prefix_for gives both for choices a test pins in the process, so that its replays run those
// kernels whatever the environment holds.
std::string replay_prefix_from_environment();
std::string replay_prefix_for(TensorCoreLayoutChoice layout, MergeShapeChoice merge);

}  // namespace pacheck::cuda
