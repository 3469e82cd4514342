// Case files (problem/case_file.h): every field round-trips bit for bit; what is malformed, hostile or not a regular
// file is refused with a clear message. The knobs (problem/knobs.h): names round-trip, others are refused, and the
// text names the pinned choices only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "problem/case_file.h"
#include "problem/knobs.h"
#include "tests/fixtures/problem_builders.h"
#include "tests/fixtures/test_files.h"

namespace pacheck {
namespace {

Case sample_case(DType dtype) {
  Case c{testing::single_sequence(9, 3, 2, 4, 4, testing::wobble, dtype), Knobs{3, 5, 2, {}}, "a note"};
  c.problem.k_pool[1] = NAN;  // poison in a referenced slot still round-trips bit for bit
  c.problem.v_pool[2] = -INFINITY;
  c.problem.explicit_scale = 0.3f;
  c.problem.sequences[0].block_table.push_back(-1);
  return c;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(CaseFile, RoundTripsEveryFieldBitForBit) {
  for (DType dtype : kAllDTypes) {
    const Case c = sample_case(dtype);
    const Case back = case_from_json(case_to_json(c));
    EXPECT_EQ(back.note, c.note);
    EXPECT_EQ(back.knobs.tile_size, 3);
    EXPECT_EQ(back.knobs.split_size, 5);
    EXPECT_EQ(back.knobs.num_splits, 2);
    EXPECT_EQ(back.problem.explicit_scale, c.problem.explicit_scale);
    EXPECT_EQ(back.problem.sequences[0].block_table, c.problem.sequences[0].block_table);
    EXPECT_TRUE(same_bits(back.problem.k_pool, c.problem.k_pool));
    EXPECT_TRUE(same_bits(back.problem.v_pool, c.problem.v_pool));
    EXPECT_TRUE(same_bits(back.problem.queries, c.problem.queries));
  }
}

TEST(CaseFile, KernelPinsRoundTripAndAreLeftOutWhenAutomatic) {
  Case c = sample_case(DType::bf16);
  EXPECT_EQ(case_to_json(c).find("\"layout\""), std::string::npos) << "automatic choices are not written";
  c.knobs.pins = KernelPins{KernelLayout::wide_evict_first, MergeShape::warps};
  const std::string text = case_to_json(c);
  EXPECT_NE(text.find("\"layout\": \"wide-evict-first\""), std::string::npos) << text.substr(0, 600);
  const Case back = case_from_json(text);
  EXPECT_EQ(back.knobs.pins.layout, KernelLayout::wide_evict_first);
  EXPECT_EQ(back.knobs.pins.merge, MergeShape::warps);
}

TEST(CaseFile, LogitOptionsRoundTripBitForBitInVersion2) {
  Case c = sample_case(DType::f16);
  EXPECT_NE(case_to_json(c).find("\"version\": 1"), std::string::npos) << "a plain problem stays version 1";
  c.problem.options.soft_cap = 30.0f;
  c.problem.options.window = 4;
  c.problem.options.alibi_slopes = {0.5f, 0x1p-8f};
  c.problem.options.sinks = {-INFINITY, 1.25f};
  const std::string text = case_to_json(c);
  EXPECT_NE(text.find("\"version\": 2"), std::string::npos) << text.substr(0, 400);
  const Case back = case_from_json(text);
  const LogitOptions& o = back.problem.options;
  ASSERT_TRUE(o.soft_cap && o.window);
  EXPECT_EQ(*o.soft_cap, 30.0f);
  EXPECT_EQ(*o.window, 4);
  EXPECT_EQ(o.alibi_slopes, c.problem.options.alibi_slopes);
  ASSERT_EQ(o.sinks.size(), 2u);
  EXPECT_EQ(o.sinks[0], -INFINITY);
  EXPECT_EQ(o.sinks[1], 1.25f);
  // Each option alone is written alone, and a problem with none of them reads back without them.
  Case window_only = sample_case(DType::f32);
  window_only.problem.options.window = 1;
  const std::string window_text = case_to_json(window_only);
  EXPECT_EQ(window_text.find("sinks"), std::string::npos);
  EXPECT_FALSE(case_from_json(window_text).problem.options.soft_cap);
  EXPECT_FALSE(case_from_json(case_to_json(sample_case(DType::f32))).problem.options.any());
}

TEST(CaseFile, AnFp8CacheRoundTripsWithTwoHexDigitsPerValue) {
  for (Fp8Format f : kAllFp8Formats) {
    Case c = sample_case(DType::bf16);
    for (std::vector<float>* pool : {&c.problem.k_pool, &c.problem.v_pool})
      for (float& x : *pool) x = static_cast<float>(round_to_fp8(x, f));
    c.problem.fp8_cache = Fp8Cache{f, {0.75f}, {3.0f, 0x1p-10f}};
    const std::string text = case_to_json(c);
    EXPECT_NE(text.find("\"kv_cache\": \"" + std::string(fp8_name(f)) + "\""), std::string::npos);
    const std::size_t pool_at = text.find("\"k_pool\": \"") + 11;
    EXPECT_EQ(text.find('"', pool_at) - pool_at, 2 * c.problem.k_pool.size()) << "two hex digits per value";
    const Case back = case_from_json(text);
    ASSERT_TRUE(back.problem.fp8_cache);
    EXPECT_EQ(back.problem.fp8_cache->format, f);
    EXPECT_EQ(back.problem.fp8_cache->k_scales, c.problem.fp8_cache->k_scales);
    EXPECT_EQ(back.problem.fp8_cache->v_scales, c.problem.fp8_cache->v_scales);
    // Every value back as it was, NaN as NaN (the pools hold sample_case's NaN and -inf, e4m3's -inf as NaN).
    for (const auto& [back_pool, pool] : {std::pair{&back.problem.k_pool, &c.problem.k_pool},
                                          std::pair{&back.problem.v_pool, &c.problem.v_pool}})
      for (std::size_t i = 0; i < pool->size(); ++i)
        ASSERT_TRUE((*back_pool)[i] == (*pool)[i] || (std::isnan((*back_pool)[i]) && std::isnan((*pool)[i])))
            << fp8_name(f) << " element " << i << ": " << (*back_pool)[i] << " for " << (*pool)[i];
  }
}

void expect_error(const std::string& text, const std::string& fragment) {
  EXPECT_TRUE(testing::contains(testing::thrown_message<CaseFileError>([&] { case_from_json(text); }), fragment))
      << text.substr(0, 200);
}

// `text` with the first `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// `text` with the `count` characters after the first `anchor` replaced by `to`.
std::string replaced_after(std::string text, const std::string& anchor, std::size_t count, const std::string& to) {
  return text.replace(text.find(anchor) + anchor.size(), count, to);
}

TEST(CaseFile, RejectsABadFp8Cache) {
  Case c = sample_case(DType::f16);
  for (std::vector<float>* pool : {&c.problem.k_pool, &c.problem.v_pool})
    for (float& x : *pool) x = static_cast<float>(round_to_fp8(x, Fp8Format::e4m3));
  c.problem.fp8_cache = Fp8Cache{Fp8Format::e4m3, {1.0f}, {1.0f}};
  const std::string good = case_to_json(c);
  expect_error(replaced(good, "\"fp8_e4m3\"", "\"fp8_e3m4\""), "unknown kv_cache 'fp8_e3m4' (fp8_e4m3 or fp8_e5m2)");
  std::string no_scales = good;
  no_scales.erase(no_scales.find("\"k_scales\""), no_scales.find("\"knobs\"") - no_scales.find("\"k_scales\""));
  expect_error(no_scales, "missing field 'k_scales'");
  expect_error(replaced(good, "\"kv_cache\": \"fp8_e4m3\",", ""),
               "'k_scales' and 'v_scales' belong to an fp8 'kv_cache', which is absent");
}

TEST(CaseFile, RejectsBadLogitOptionsAndVersion2FieldsInVersion1) {
  Case c = sample_case(DType::bf16);
  c.problem.options.window = 3;
  c.problem.options.sinks = {0.0f, 0.0f};
  const std::string good = case_to_json(c);
  expect_error(replaced(good, "\"version\": 2", "\"version\": 1"),
               "'window' is a version-2 field, but the file says version 1");
  expect_error(replaced(good, "\"version\": 2", "\"version\": 3"),
               "unsupported case file version 3 (this build reads versions 1 to 2)");
  expect_error(replaced(good, "\"window\": 3", "\"window\": 0"), "window must be at least 1");
  expect_error(replaced_after(good, "\"sinks\": \"", 8, ""),
               "sinks has 1 values but num_query_heads = 2: one per query head");
  expect_error(replaced_after(good, "\"sinks\": \"", 8, "7fc00000"), "sinks[0] = nan must be finite or -inf (no sink)");
  Case capped = sample_case(DType::bf16);
  capped.problem.options.soft_cap = 1.0f;
  const std::string cap = case_to_json(capped);
  expect_error(replaced_after(cap, "\"soft_cap_bits\": \"", 8, "bf800000"),
               "soft_cap must be finite and positive, got -1");
  expect_error(replaced_after(cap, "\"soft_cap_bits\": \"", 8, ""), "'soft_cap_bits' must hold exactly one fp32 value");
}

TEST(CaseFile, RejectsMalformedFilesWithAClearMessage) {
  const std::string good = case_to_json(sample_case(DType::f16));
  expect_error("", "not valid JSON");
  expect_error(good.substr(0, good.size() / 2), "not valid JSON");
  expect_error("[1,2,3]", "not a pacheck case file");
  expect_error(replaced(good, "\"version\": 1", "\"version\": 7"), "unsupported case file version 7");
  expect_error(replaced(good, "\"fp16\"", "\"fp8\""), "unknown dtype 'fp8'");
  Case pinned = sample_case(DType::f16);
  pinned.knobs.pins.layout = KernelLayout::deep;
  expect_error(replaced(case_to_json(pinned), "\"deep\"", "\"tall\""),
               "knobs: layout must be one of automatic, deep, wide, wide-evict-first, got '\"tall\"'");
  expect_error(replaced(good, "\"num_blocks\": 3", "\"num_blocks\": 2000000000"), "over the limit");
  expect_error(replaced(good, "\"context_len\": 9", "\"context_len\": -9"), "context_len must be positive, got -9");
  expect_error(replaced_after(good, "\"k_pool\": \"", 1, "z"), "is not a hex digit");
  expect_error(replaced_after(good, "\"v_pool\": \"", 4, ""), "v_pool has 95 elements");
  expect_error(replaced(good, "\"head_dim\": 4,", ""), "missing field 'head_dim'");
  expect_error(replaced(good, "\"head_dim\"", "\"headdim\""), "unknown field 'headdim'");
}

TEST(CaseFile, RejectsHostileDeclaredSizesWithoutOverflowOrAllocation) {
  const std::string good = case_to_json(sample_case(DType::f32));
  // Every dimension at the 32-bit maximum: the pool's element count overflows 64 bits if multiplied naively.
  std::string all_max = good;
  for (const std::string name : {"\"num_blocks\": 3", "\"block_size\": 4", "\"head_dim\": 4", "\"num_kv_heads\": 2",
                                 "\"num_query_heads\": 2"})
    all_max = replaced(all_max, name, name.substr(0, name.find(':') + 2) + "2147483647");
  expect_error(all_max, "over the limit");
  expect_error(replaced(good, "\"num_blocks\": 3", "\"num_blocks\": 2147483648"),
               "'num_blocks' = 2147483648 does not fit in 32 bits");
  // 2^64 - 1 must not wrap into -1.
  expect_error(replaced(good, "-1\n", "18446744073709551615\n"), "block_table[3] must be a 32-bit integer");
  expect_error(replaced(good, "\"num_queries\": 3", "\"num_queries\": -3"), "num_queries must be positive, got -3");
  expect_error(replaced(good, "\"num_blocks\": 3", "\"num_blocks\": -3"), "num_blocks must be positive, got -3");
}

TEST(CaseFile, RejectsStructureTheFormatNeverHas) {
  const std::string good = case_to_json(sample_case(DType::bf16));
  expect_error(replaced(good, "\"version\": 1", "\"version\": \"1\""), "'version' must be an integer");
  expect_error(replaced(good, "\"tile_size\"", "\"tile_sise\""), "knobs: unknown field 'tile_sise'");
  expect_error(replaced(good, "\"note\"", "\"extra\": 1, \"note\""), "case file: unknown field 'extra'");
  expect_error(replaced(good, "\"a note\"", "17"), "'note' must be a string");
  expect_error(replaced(good, "\"num_splits\": 2", "\"num_splits\": -2"),
               "num_splits must be 0 (use split_size) or positive, got -2");
  expect_error(replaced(good, "\"sequences\": [", "\"sequences\": 5, \"x\": ["), "unknown field 'x'");
}

TEST(CaseFile, RefusesDeepNestingAndHugeValueCountsEarly) {
  const std::string good = case_to_json(sample_case(DType::f16));
  expect_error(replaced(good, "\"a note\"", std::string(100000, '[') + std::string(100000, ']')),
               "nested deeper than the case format's 4 levels");
  expect_error(std::string(1000000, '['), "nested deeper");
  // 1.1 million zeros in one block table: refused while parsing, before the tree holds them all.
  std::string many(2200000, '0');
  for (std::size_t i = 1; i < many.size(); i += 2) many[i] = ',';
  many.pop_back();
  expect_error(replaced(good, "-1\n", many + "\n"), "JSON values, over the case format's limit");
}

TEST(CaseFile, EveryTruncationIsAClearErrorNotACrash) {
  const std::string good = case_to_json(sample_case(DType::f16));
  for (std::size_t n = 0; n < good.size(); ++n) {
    try {
      case_from_json(std::string_view(good).substr(0, n));
      // A prefix can only be a valid case if nothing but trailing whitespace was cut.
      EXPECT_EQ(good.find_first_not_of(" \n", n), std::string::npos) << "prefix of " << n << " bytes accepted";
    } catch (const CaseFileError&) {
    }
  }
}

TEST(CaseFile, SingleByteCorruptionsParseOrFailCleanly) {
  const std::string good = case_to_json(sample_case(DType::f32));
  std::uint64_t state = 12345;
  int accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    std::string bad = good;
    bad[(state >> 33) % bad.size()] = static_cast<char>(state >> 24);
    try {
      const Case c = case_from_json(bad);
      EXPECT_TRUE(validation_errors(c.problem).empty());
      ++accepted;
    } catch (const CaseFileError& e) {
      EXPECT_GT(std::string(e.what()).size(), 10u);
    }
  }
  EXPECT_LT(accepted, 3000);  // corruptions are noticed
}

void expect_read_error(const std::filesystem::path& path, const std::string& fragment) {
  EXPECT_TRUE(testing::contains(testing::thrown_message<CaseFileError>([&] { read_case_file(path); }), fragment))
      << path;
}

TEST(CaseFile, RefusesFilesThatAreNotRegularFiles) {
  for (const char* path : {"/dev/zero", "/tmp"}) expect_read_error(path, "not a regular file");
}

TEST(CaseFile, WritesAtomicallyAndReadsBack) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "pacheck_case_file_test";
  std::filesystem::remove_all(dir);
  const Case c = sample_case(DType::bf16);
  write_case_file(dir / "nested" / "case.json", c);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "nested")) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "case.json");  // no temporary left behind
  }
  EXPECT_EQ(files, 1);
  EXPECT_EQ(read_case_file(dir / "nested" / "case.json").note, c.note);
  std::filesystem::remove_all(dir);
}

TEST(CaseFile, ReportsAMissingFile) {
  expect_read_error("/nonexistent/case.json", "cannot read case file /nonexistent/case.json");
}

TEST(CaseFile, TerminalSafeEscapesControlCharactersOnly) {
  EXPECT_EQ(terminal_safe("plain text, caf\xc3\xa9"), "plain text, caf\xc3\xa9");
  EXPECT_EQ(terminal_safe("a\x1b[2Jb\nc\x7f"), "a\\x1b[2Jb\\x0ac\\x7f");
}

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
