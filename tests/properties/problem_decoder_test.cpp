// The structured decoder behind the libFuzzer target: every byte string must decode to a valid, small problem, the
// decoded problems must reach every corner the fuzzer is meant to explore, and the poisoned build must differ
// from the clean one only in slots no sequence references (the masked-lane check relies on it).
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "properties/problem_decoder.h"

namespace pacheck {
namespace {

// Deterministic pseudo-random byte strings of lengths 0..160.
std::vector<std::vector<std::uint8_t>> byte_strings(int count) {
  std::vector<std::vector<std::uint8_t>> out;
  std::uint64_t state = 2024;
  const auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(state >> 33);
  };
  for (int i = 0; i < count; ++i) {
    std::vector<std::uint8_t> bytes(next() % 161);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(next());
    out.push_back(std::move(bytes));
  }
  out.push_back({});
  out.push_back(std::vector<std::uint8_t>(200, 0xff));
  return out;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(ProblemDecoder, EveryByteStringDecodesToAValidSmallProblem) {
  for (const auto& bytes : byte_strings(2000)) {
    const DecodedProblem d = decode_problem(bytes.data(), bytes.size());
    for (Poison poison : {Poison::none, d.poison}) {
      const Problem p = build_problem(d, poison);
      const std::vector<std::string> errors = validation_errors(p);
      ASSERT_TRUE(errors.empty()) << errors.front() << "\n" << describe(p);
      EXPECT_LE(p.num_query_heads, DecoderLimits::max_query_heads);
      EXPECT_LE(static_cast<int>(p.sequences.size()), DecoderLimits::max_sequences);
      for (const Sequence& s : p.sequences)
        EXPECT_LE(s.context_len, s.num_queries == 1 ? DecoderLimits::max_decode_context : DecoderLimits::max_prefill_context);
    }
    EXPECT_NE(d.poison, Poison::none);
    EXPECT_GE(d.knobs.tile_size, 1);
    EXPECT_GE(d.knobs.split_size, 1);
    EXPECT_LE(static_cast<int>(d.edits.size()), DecoderLimits::max_edits);
  }
}

TEST(ProblemDecoder, TheEmptyInputIsTheSmallestProblem) {
  const Problem p = build_problem(decode_problem(nullptr, 0), Poison::none);
  EXPECT_EQ(p.dtype, DType::f32);
  EXPECT_EQ(p.num_query_heads, 1);
  EXPECT_EQ(p.head_dim, 1);
  EXPECT_EQ(p.block_size, 1);
  ASSERT_EQ(p.sequences.size(), 1u);
  EXPECT_EQ(p.sequences[0].context_len, 1);
  EXPECT_EQ(p.sequences[0].num_queries, 1);
  EXPECT_FALSE(p.options.any()) << "zero bytes pick no logit option";
}

TEST(ProblemDecoder, ReachesEveryCornerTheFuzzerMustExplore) {
  std::set<DType> dtypes;
  std::set<Mode> modes;
  std::set<int> gqa_ratios, block_sizes, head_dims, split_counts;
  std::set<Poison> poisons;
  std::set<ValueKind> value_kinds;
  std::set<WindowChoice> windows;
  std::set<SoftCapChoice> caps;
  std::set<AlibiChoice> alibis;
  std::set<SinkChoice> sinks;
  std::set<std::pair<Fp8Format, Fp8ScaleChoice>> fp8_caches;
  bool invalid_padding = false, poisoned_padding = false, shared_prefix = false, ragged_tail = false,
       one_token_context = false, edits = false, explicit_scale = false;
  for (const auto& bytes : byte_strings(3000)) {
    const DecodedProblem d = decode_problem(bytes.data(), bytes.size());
    const Problem p = build_problem(d, d.poison);
    dtypes.insert(p.dtype);
    for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s) {
      modes.insert(p.mode_of(s));
      ragged_tail |= p.sequences[s].context_len % p.block_size != 0;
      one_token_context |= p.sequences[s].context_len == 1;
    }
    gqa_ratios.insert(p.gqa_ratio());
    block_sizes.insert(p.block_size);
    head_dims.insert(p.head_dim);
    split_counts.insert(d.knobs.num_splits);
    poisons.insert(d.poison);
    value_kinds.insert(d.spec.values);
    invalid_padding |= d.spec.table_padding > 0 && d.spec.padding_invalid;
    poisoned_padding |= d.spec.table_padding > 0 && !d.spec.padding_invalid;
    shared_prefix |= d.spec.shared_prefix;
    edits |= !d.edits.empty();
    explicit_scale |= p.explicit_scale.has_value();
    windows.insert(d.spec.options.window);
    caps.insert(d.spec.options.soft_cap);
    alibis.insert(d.spec.options.alibi);
    sinks.insert(d.spec.options.sinks.begin(), d.spec.options.sinks.end());
    if (p.fp8_cache) fp8_caches.insert({p.fp8_cache->format, d.spec.fp8.scales});
  }
  EXPECT_EQ(dtypes.size(), 3u);
  EXPECT_EQ(modes.size(), 3u);
  EXPECT_EQ(gqa_ratios, (std::set<int>{1, 2, 3, 4, 5, 6, 7, 8}));
  for (int bs : {1, 2, 7, 16, 32, 64}) EXPECT_TRUE(block_sizes.count(bs)) << "block size " << bs;
  for (int hd : {1, 3, 16, 64, 128}) EXPECT_TRUE(head_dims.count(hd)) << "head dim " << hd;
  EXPECT_EQ(split_counts, (std::set<int>{0, 1, 2, 3, 7}));
  EXPECT_EQ(poisons, (std::set<Poison>{Poison::nan, Poison::pos_inf, Poison::neg_inf, Poison::huge}));
  EXPECT_EQ(value_kinds.size(), 7u);
  EXPECT_TRUE(invalid_padding);
  EXPECT_TRUE(poisoned_padding);
  EXPECT_TRUE(shared_prefix);
  EXPECT_TRUE(ragged_tail);
  EXPECT_TRUE(one_token_context);
  EXPECT_TRUE(edits);
  EXPECT_TRUE(explicit_scale);
  EXPECT_EQ(windows.size(), 6u) << "every window corner, and none";
  EXPECT_EQ(caps.size(), 5u) << "every soft cap corner, and none";
  EXPECT_EQ(alibis.size(), 3u) << "both slope kinds, and none";
  EXPECT_EQ(sinks.size(), 4u) << "every kind of sink";
  EXPECT_EQ(fp8_caches.size(), 8u) << "both fp8 formats at every scale corner";
}

TEST(ProblemDecoder, PoisonChangesOnlyUnreferencedSlots) {
  int poisoned_slots_seen = 0;
  for (const auto& bytes : byte_strings(500)) {
    const DecodedProblem d = decode_problem(bytes.data(), bytes.size());
    const Problem clean = build_problem(d, Poison::none);
    const Problem poisoned = build_problem(d, d.poison);
    ASSERT_EQ(clean.k_pool.size(), poisoned.k_pool.size());
    ASSERT_EQ(clean.sequences.size(), poisoned.sequences.size());
    for (std::size_t s = 0; s < clean.sequences.size(); ++s)
      ASSERT_EQ(clean.sequences[s].block_table, poisoned.sequences[s].block_table);
    for (std::size_t i = 0; i < clean.queries.size(); ++i) ASSERT_TRUE(same_bits(clean.queries[i], poisoned.queries[i]));
    std::vector<char> referenced(clean.k_pool.size(), 0);
    for (int s = 0; s < static_cast<int>(clean.sequences.size()); ++s)
      for (int t = 0; t < clean.sequences[s].context_len; ++t)
        for (int h = 0; h < clean.num_kv_heads; ++h)
          for (int j = 0; j < clean.head_dim; ++j) referenced[clean.kv_offset(s, t, h) + j] = 1;
    for (std::size_t i = 0; i < referenced.size(); ++i) {
      if (referenced[i]) {
        ASSERT_TRUE(same_bits(clean.k_pool[i], poisoned.k_pool[i]) && same_bits(clean.v_pool[i], poisoned.v_pool[i]))
            << "referenced element " << i << " changed with the poison";
      } else {
        ASSERT_FALSE(same_bits(clean.k_pool[i], poisoned.k_pool[i])) << "unreferenced element " << i << " not poisoned";
        ++poisoned_slots_seen;
      }
    }
  }
  EXPECT_GT(poisoned_slots_seen, 0);
}

}  // namespace
}  // namespace pacheck
