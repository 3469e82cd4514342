// The structured decoder: reads any byte string as choices and builds a valid, small problem, so each libFuzzer
// mutation (fuzz/structured_problem_fuzzer.cpp) changes shape, placement, poison, values or knobs. Bytes past the
// end read as zero, which picks the smallest option: the empty input is the smallest problem, truncation shrinks.
// It reaches every corner the RapidCheck generators reach, plus byte-placed value edits, within DecoderLimits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "problem/knobs.h"
#include "problem/problem.h"
#include "properties/problem_spec.h"

namespace pacheck {

// Reads choices from a byte string.
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

// A value placed over a referenced element after materialisation (ties, new maxima, huge or tiny values); indices
// are reduced modulo the problem's sizes.
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

// The problem with `poison` in every unreferenced slot; the referenced data (so the answer) is the same whatever it.
Problem build_problem(const DecodedProblem& decoded, Poison poison);

}  // namespace pacheck
