// Per-run tuning knobs of a kernel. A correct variant's answer may change with them only within its error bound.
// C++17, so that the CUDA code can read them too.
#pragma once

#include <algorithm>
#include <optional>
#include <string>

namespace pacheck {

// Kernel choices a variant makes per launch while `automatic`, which a test or replay may pin to reach a kernel the
// automatic rule picks only for shapes too large to test. Each is within the variant's error model; variants
// without the choice ignore it. The CUDA variants' rules: cuda/launch_rules.h.
//   layout  the bf16 tensor-core kernel's layout at head dims 65-128: deep, wide or wide-evict-first.
//   merge   the split-K merge's thread shape: lanes (one head lane a thread) or warps (four a thread).
enum class KernelLayout { automatic, deep, wide, wide_evict_first };
enum class MergeShape { automatic, lanes, warps };

const char* knob_name(KernelLayout layout);
const char* knob_name(MergeShape merge);
// The choice a name means ("automatic", "deep", "wide-evict-first", ...), or nullopt.
std::optional<KernelLayout> parse_kernel_layout(const std::string& name);
std::optional<MergeShape> parse_merge_shape(const std::string& name);
// The names a parse accepts, for error messages: "automatic, deep, wide, wide-evict-first".
std::string kernel_layout_names();
std::string merge_shape_names();

// The kernel choices pinned for a run; every generated case carries them.
struct KernelPins {
  KernelLayout layout = KernelLayout::automatic;
  MergeShape merge = MergeShape::automatic;
  bool any() const { return layout != KernelLayout::automatic || merge != MergeShape::automatic; }
};

struct Knobs {
  int tile_size = 16;   // keys folded per online-softmax step
  int split_size = 64;  // keys per split (split-K variants)
  int num_splits = 0;   // split-K: when > 0, a fixed number of splits per sequence instead of a fixed split size
  KernelPins pins;
};

// "tile_size=16 split_size=64 num_splits=0", then " layout=deep merge=warps" for pinned choices.
std::string knobs_text(const Knobs& knobs);

// Keys per split a split-K variant uses for a sequence of this context length.
inline int effective_split_size(const Knobs& knobs, int context_len) {
  // In 64 bits: a case file may hold any positive num_splits, and context_len + num_splits must not overflow.
  if (knobs.num_splits > 0)
    return std::max(1, static_cast<int>((static_cast<long long>(context_len) + knobs.num_splits - 1) / knobs.num_splits));
  return std::max(1, knobs.split_size);
}

}  // namespace pacheck
