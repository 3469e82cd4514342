// The structured decoder: turns any byte string into a valid, small paged-attention problem. It is how the
// coverage-guided fuzzer (fuzz/structured_problem_fuzzer.cpp) speaks the problem's language: libFuzzer mutates
// bytes, the decoder reads them as a sequence of choices, so every mutation is a meaningful change of shape,
// placement, poison, values or knobs instead of a file the validator rejects.
//
// Every byte string decodes; bytes past the end read as zero, and zero always picks the smallest option, so the
// empty input is the smallest problem and truncation shrinks. Decoded problems reach every corner the RapidCheck
// generators reach (GQA ratios 1..8, block sizes 1..16/32/64, ragged tails, shared prefixes, padded tables with
// invalid ids or ids of poisoned blocks, every dtype and mode, the value kinds, the logit options' corners, fp8
// caches at every scale corner) and add byte-placed value edits, while staying small enough for thousands of
// executions per second (see DecoderLimits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "problem/knobs.h"
#include "problem/problem.h"
#include "properties/problem_spec.h"

namespace pacheck {

// Reads choices from a byte string. Once the bytes run out every choice reads as its smallest option.
class ByteChoices {
 public:
  ByteChoices(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  // Uniform-ish in [lo, hi] (inclusive); one byte for spans up to 256, two up to 65536.
  int in_range(int lo, int hi);
  bool flag() { return (byte() & 1) != 0; }
  std::uint64_t u64();
  std::size_t remaining() const { return size_ - pos_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// The bounds that keep one execution cheap (oracle plus every CPU variant, twice, under ASan).
struct DecoderLimits {
  static constexpr int max_sequences = 3;
  static constexpr int max_query_heads = 16;
  static constexpr int max_decode_context = 64;   // decode rows are O(context)
  static constexpr int max_prefill_context = 24;  // prefill and continuation are O(context^2)
  static constexpr int max_edits = 32;
};

// One value placed by the bytes over a referenced element after materialisation: ties, new running maxima, huge
// and tiny magnitudes exactly where the fuzzer wants them. Indices are reduced modulo the problem's sizes.
struct ValueEdit {
  enum class Target : std::uint8_t { key, value, query };
  Target target = Target::key;
  int sequence = 0;
  int position = 0;  // of the key/value in its sequence's history
  int kv_head = 0;
  int element = 0;   // the dimension (keys, values) or the flat index (queries)
  double value = 0;  // rounded to the problem's dtype when applied
};

struct DecodedProblem {
  ProblemSpec spec;              // shapes, placement, base values; spec.poison is ignored (see build_problem)
  std::vector<ValueEdit> edits;
  Knobs knobs;
  Poison poison = Poison::nan;   // what the poisoned build puts in every unreferenced slot (never none)
};

DecodedProblem decode_problem(const std::uint8_t* data, std::size_t size);

// The concrete problem with every slot no sequence references holding `poison`. The referenced data (and so the
// exact answer) is the same whatever the poison: that is what the masked-lane check compares.
Problem build_problem(const DecodedProblem& decoded, Poison poison);

}  // namespace pacheck
