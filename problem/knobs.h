// Per-run tuning knobs of a kernel. A correct variant's answer may change with them only within its error bound.
#pragma once

#include <algorithm>

namespace pacheck {

struct Knobs {
  int tile_size = 16;   // keys folded per online-softmax step
  int split_size = 64;  // keys per split (split-K variants)
  int num_splits = 0;   // split-K: when > 0, a fixed number of splits per sequence instead of a fixed split size
};

// The number of keys per split a split-K variant uses for a sequence of this context length.
inline int effective_split_size(const Knobs& knobs, int context_len) {
  // In 64 bits: a case file may hold any positive num_splits, and context_len + num_splits must not overflow.
  if (knobs.num_splits > 0)
    return std::max(1, static_cast<int>((static_cast<long long>(context_len) + knobs.num_splits - 1) / knobs.num_splits));
  return std::max(1, knobs.split_size);
}

}  // namespace pacheck
