#include "properties/problem_decoder.h"

#include <algorithm>
#include <cmath>

namespace pacheck {

int ByteChoices::in_range(int lo, int hi) {
  const unsigned span = static_cast<unsigned>(hi - lo) + 1;
  unsigned raw = byte();
  if (span > 256) raw = (raw << 8) | byte();
  return lo + static_cast<int>(raw % span);
}

std::uint64_t ByteChoices::u64() {
  std::uint64_t x = 0;
  for (int i = 0; i < 8; ++i) x = (x << 8) | byte();
  return x;
}

namespace {

// Head dims: every small one (odd included, where vector widths break) and the real ones.
int decode_head_dim(ByteChoices& in) {
  static constexpr int kLarge[] = {24, 32, 64, 128};
  const int i = in.in_range(0, 19);
  return i < 16 ? i + 1 : kLarge[i - 16];
}

int decode_block_size(ByteChoices& in) {
  const int i = in.in_range(0, 17);
  return i < 16 ? i + 1 : (i == 16 ? 32 : 64);
}

// Half the time a ragged-tail corner (1, bs-1, bs, bs+1, 2bs, 2bs+1, 3bs-1), half the time any length.
int decode_context(ByteChoices& in, int block_size, int max_context) {
  const int b = in.byte();
  if ((b & 1) == 0) return 1 + (b >> 1) % max_context;
  const int corners[] = {1, block_size - 1, block_size, block_size + 1, 2 * block_size, 2 * block_size + 1,
                         3 * block_size - 1};
  const int c = corners[(b >> 1) % 7];
  return std::clamp(c, 1, max_context);
}

// Mode 0: decode (one query), 1: causal prefill, 2: continuation after a past.
SequenceSpec decode_sequence(ByteChoices& in, int block_size) {
  const int mode = in.in_range(0, 2);
  SequenceSpec s;
  const int max_context = mode == 0 ? DecoderLimits::max_decode_context : DecoderLimits::max_prefill_context;
  s.context_len = decode_context(in, block_size, max_context);
  if (mode == 1) s.num_queries = s.context_len;
  if (mode == 2) s.num_queries = in.in_range(1, s.context_len);
  return s;
}

// Values an edit can place: zero, small integers and halves (exact sums, ties), powers of two from tiny to large
// (new running maxima, underflowing weights), the dtype's smallest normal and largest finite.
double decode_edit_value(ByteChoices& in, DType dtype) {
  const int kind = in.in_range(0, 7);
  const double sign = in.flag() ? -1.0 : 1.0;
  const FloatFormat f = float_format(dtype);
  switch (kind) {
    case 0: return 0.0;
    case 1: return sign * 1.0;
    case 2: return sign * 0.5;
    case 3: return sign * in.in_range(2, 8);
    case 4: return sign * std::ldexp(1.0, in.in_range(-24, 24));
    case 5: return sign * std::ldexp(1.0, f.min_normal_exponent);
    case 6: return sign * f.max_finite;
    default: return sign * std::ldexp(1.0 + in.byte() / 256.0, in.in_range(-4, 6));
  }
}

// An option's choice from one byte: absent (0) when the byte is even, so half the time, else one of its `corners`
// (1 ..= corners).
int decode_option(ByteChoices& in, int corners) {
  const int b = in.byte();
  return (b & 1) == 0 ? 0 : 1 + (b >> 1) % corners;
}

}  // namespace

DecodedProblem decode_problem(const std::uint8_t* data, std::size_t size) {
  ByteChoices in(data, size);
  DecodedProblem d;
  ProblemSpec& spec = d.spec;
  spec.dtype = kAllDTypes[in.in_range(0, 2)];
  spec.num_kv_heads = in.in_range(1, 4);
  spec.gqa_ratio = in.in_range(1, std::min(8, DecoderLimits::max_query_heads / spec.num_kv_heads));
  spec.head_dim = decode_head_dim(in);
  spec.block_size = decode_block_size(in);
  const int count = in.in_range(1, DecoderLimits::max_sequences);
  for (int i = 0; i < count; ++i) spec.sequences.push_back(decode_sequence(in, spec.block_size));
  spec.spare_blocks = in.in_range(0, 3);
  spec.shared_prefix = count > 1 && in.flag();
  spec.table_padding = in.in_range(0, 2);
  spec.padding_invalid = in.flag();
  spec.values = static_cast<ValueKind>(in.in_range(0, 6));
  static constexpr double kSpreads[] = {1.0, 0.01, 0.25, 4.0, 16.0, 100.0};
  spec.spread = kSpreads[in.in_range(0, 5)];
  static constexpr float kScales[] = {0.5f, 0.125f, 1.0f, 0.0883883476f, 2.0f};
  if (const int s = in.in_range(0, 5); s > 0) spec.explicit_scale = kScales[s - 1];
  spec.seed = in.u64();
  d.poison = static_cast<Poison>(in.in_range(1, 4));  // nan, +inf, -inf, huge
  LogitOptionSpec& o = spec.options;
  o.window = static_cast<WindowChoice>(decode_option(in, 5));
  o.soft_cap = static_cast<SoftCapChoice>(decode_option(in, 4));
  o.alibi = static_cast<AlibiChoice>(decode_option(in, 2));
  const int sinks = decode_option(in, 4);  // head h takes sinks[h % count]
  for (int i = 0; i < sinks; ++i) o.sinks.push_back(static_cast<SinkChoice>(in.in_range(0, 3)));
  // 0: no fp8 cache; else a format and a scale corner.
  if (const int fp8 = in.in_range(0, 8); fp8 > 0) {
    spec.fp8.format = kAllFp8Formats[(fp8 - 1) / 4];
    spec.fp8.scales = static_cast<Fp8ScaleChoice>((fp8 - 1) % 4);
  }

  int longest = 1;
  for (const SequenceSpec& s : spec.sequences) longest = std::max(longest, s.context_len);
  // Tile and split sizes from 1 to beyond the longest history; split counts as the split-K kernels use them.
  d.knobs.tile_size = in.in_range(1, longest + 8);
  d.knobs.split_size = in.in_range(1, longest + 8);
  static constexpr int kSplitCounts[] = {0, 1, 2, 3, 7};
  d.knobs.num_splits = kSplitCounts[in.in_range(0, 4)];

  while (in.remaining() > 0 && static_cast<int>(d.edits.size()) < DecoderLimits::max_edits) {
    ValueEdit e;
    e.target = static_cast<ValueEdit::Target>(in.in_range(0, 2));
    e.sequence = in.byte();
    e.position = in.byte();
    e.kv_head = in.byte();
    e.element = in.in_range(0, 65535);
    e.value = decode_edit_value(in, spec.dtype);
    d.edits.push_back(e);
  }
  return d;
}

Problem build_problem(const DecodedProblem& decoded, Poison poison) {
  ProblemSpec spec = decoded.spec;
  spec.poison = poison;
  Problem p = materialize(spec);
  const int d = p.head_dim;
  for (const ValueEdit& e : decoded.edits) {
    const float value = round_to_dtype_f(e.value, p.dtype);
    if (e.target == ValueEdit::Target::query) {
      p.queries[static_cast<std::size_t>(e.element) % p.queries.size()] = value;
      continue;
    }
    const int s = e.sequence % static_cast<int>(p.sequences.size());
    const int position = e.position % p.sequences[s].context_len;
    const std::size_t offset = p.kv_offset(s, position, e.kv_head % p.num_kv_heads) + e.element % d;
    // An fp8 cache holds the edit as its nearest fp8 value.
    const float stored = p.fp8_cache ? static_cast<float>(round_to_fp8(value, p.fp8_cache->format)) : value;
    (e.target == ValueEdit::Target::key ? p.k_pool : p.v_pool)[offset] = stored;
  }
  return p;
}

}  // namespace pacheck
