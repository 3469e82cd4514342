#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "problem/case_file.h"
#include "problem_builders.h"

namespace pacheck {
namespace {

Case sample_case(DType dtype) {
  Case c{testing::single_sequence(9, 3, 2, 4, 4, testing::wobble, dtype), Knobs{3, 5, 2}, "a note"};
  c.problem.k_pool[1] = NAN;  // poison in a referenced slot still round-trips bit for bit
  c.problem.v_pool[2] = -INFINITY;
  c.problem.explicit_scale = 0.3f;
  c.problem.sequences[0].block_table.push_back(-1);
  return c;
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
    ASSERT_EQ(back.problem.k_pool.size(), c.problem.k_pool.size());
    EXPECT_EQ(std::memcmp(back.problem.k_pool.data(), c.problem.k_pool.data(), c.problem.k_pool.size() * 4), 0);
    EXPECT_EQ(std::memcmp(back.problem.v_pool.data(), c.problem.v_pool.data(), c.problem.v_pool.size() * 4), 0);
    EXPECT_EQ(std::memcmp(back.problem.queries.data(), c.problem.queries.data(), c.problem.queries.size() * 4), 0);
  }
}

void expect_error(const std::string& text, const std::string& fragment) {
  try {
    case_from_json(text);
    FAIL() << "accepted: " << text.substr(0, 200);
  } catch (const CaseFileError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(CaseFile, RejectsMalformedFilesWithAClearMessage) {
  const std::string good = case_to_json(sample_case(DType::f16));
  expect_error("", "not valid JSON");
  expect_error(good.substr(0, good.size() / 2), "not valid JSON");
  expect_error("[1,2,3]", "not a pacheck case file");
  std::string wrong_version = good;
  wrong_version.replace(wrong_version.find("\"version\": 1"), 12, "\"version\": 7");
  expect_error(wrong_version, "unsupported case file version 7");
  std::string bad_dtype = good;
  bad_dtype.replace(bad_dtype.find("\"fp16\""), 6, "\"fp8\"");
  expect_error(bad_dtype, "unknown dtype 'fp8'");
  std::string huge = good;
  huge.replace(huge.find("\"num_blocks\": 3"), 15, "\"num_blocks\": 2000000000");
  expect_error(huge, "over the limit");
  std::string negative = good;
  negative.replace(negative.find("\"context_len\": 9"), 16, "\"context_len\": -9");
  expect_error(negative, "context_len must be positive, got -9");
  std::string not_hex = good;
  not_hex.replace(not_hex.find("\"k_pool\": \"") + 11, 1, "z");
  expect_error(not_hex, "is not a hex digit");
  std::string short_pool = good;
  short_pool.replace(short_pool.find("\"v_pool\": \"") + 11, 4, "");
  expect_error(short_pool, "v_pool has 95 elements");
  std::string missing = good;
  missing.replace(missing.find("\"head_dim\""), 10, "\"headdim\"");
  expect_error(missing, "missing field 'head_dim'");
}

TEST(CaseFile, ReportsAMissingFile) {
  try {
    read_case_file("/nonexistent/case.json");
    FAIL();
  } catch (const CaseFileError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read case file /nonexistent/case.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace pacheck
