// Transformations of a problem that must not change its attention (or must change it in a known, exact way):
// the metamorphic relations behind the invariance properties.
#pragma once

#include <vector>

#include "problem/problem.h"

namespace pacheck {

// Moves physical block b to permutation[b] in both pools and rewrites every table entry that names a valid block
// (padding with invalid ids stays as it is). The attention is unchanged.
Problem relabel_blocks(const Problem& problem, const std::vector<int>& permutation);

// The MHA problem equivalent to a GQA one: every query head gets its own copy of its group's KV head.
Problem replicate_kv_heads(const Problem& problem);

// The problem holding only the given sequences, in the given order, over the same pool.
Problem select_sequences(const Problem& problem, const std::vector<int>& order);

// The output rows of sequence `s` (all its query tokens and heads).
Output sequence_rows(const Problem& problem, const Output& output, int s);

// Multiplies the V of every slot some sequence references by 2^exponent (slots nobody references keep their
// values, so a kernel that reads them is caught). Returns false when a scaled value would not be exactly
// representable in the dtype (overflow or loss in the subnormal range).
bool scale_referenced_values(Problem& problem, int exponent);

}  // namespace pacheck
