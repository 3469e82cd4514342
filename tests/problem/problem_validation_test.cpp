// Each validation error names the field and the values.
#include <gtest/gtest.h>

#include <cmath>

#include "problem/problem.h"
#include "tests/fixtures/problem_builders.h"

namespace pacheck {
namespace {

Problem valid_problem() { return testing::single_sequence(10, 1, 2, 4, 4, testing::wobble); }

std::string only_error(const Problem& p) {
  const std::vector<std::string> errors = validation_errors(p);
  EXPECT_EQ(errors.size(), 1u);
  return errors.empty() ? "" : errors.front();
}

TEST(ProblemValidation, AcceptsAValidProblem) { EXPECT_TRUE(validation_errors(valid_problem()).empty()); }

TEST(ProblemValidation, RejectsATableTooShortForItsContext) {
  Problem p = valid_problem();
  p.sequences[0].block_table.pop_back();
  EXPECT_EQ(only_error(p), "sequence 0: block_table has 2 entries but context_len 10 with block_size 4 needs 3");
}

TEST(ProblemValidation, RejectsABlockIdOutOfRange) {
  Problem p = valid_problem();
  p.sequences[0].block_table[1] = 3;
  EXPECT_EQ(only_error(p), "sequence 0: block_table[1] = 3 is out of range (num_blocks = 3)");
}

TEST(ProblemValidation, RejectsANegativeBlockId) {
  Problem p = valid_problem();
  p.sequences[0].block_table[2] = -1;
  EXPECT_EQ(only_error(p), "sequence 0: block_table[2] = -1 is negative (num_blocks = 3)");
}

TEST(ProblemValidation, IgnoresPaddingPastTheContext) {
  Problem p = valid_problem();
  p.sequences[0].block_table.push_back(-1);
  p.sequences[0].block_table.push_back(1 << 30);
  EXPECT_TRUE(validation_errors(p).empty());
}

TEST(ProblemValidation, RejectsANonIntegerGqaRatio) {
  Problem p = valid_problem();
  p.num_query_heads = 3;
  EXPECT_EQ(validation_errors(p).front(),
            "num_query_heads (3) is not a multiple of num_kv_heads (2): the GQA ratio must be an integer");
}

TEST(ProblemValidation, RejectsZeroOrNegativeSizes) {
  for (int bad : {0, -3}) {
    Problem p = valid_problem();
    p.head_dim = bad;
    EXPECT_EQ(validation_errors(p).front(), "head_dim must be positive, got " + std::to_string(bad));
    p = valid_problem();
    p.block_size = bad;
    EXPECT_EQ(validation_errors(p).front(), "block_size must be positive, got " + std::to_string(bad));
    p = valid_problem();
    p.num_kv_heads = bad;
    EXPECT_EQ(validation_errors(p).front(), "num_kv_heads must be positive, got " + std::to_string(bad));
    p = valid_problem();
    p.num_query_heads = bad;
    EXPECT_EQ(validation_errors(p).front(), "num_query_heads must be positive, got " + std::to_string(bad));
    p = valid_problem();
    p.num_blocks = bad;
    EXPECT_EQ(validation_errors(p).front(), "num_blocks must be positive, got " + std::to_string(bad));
    p = valid_problem();
    p.sequences[0].context_len = bad;
    EXPECT_EQ(only_error(p), "sequence 0: context_len must be positive, got " + std::to_string(bad));
  }
  Problem p = valid_problem();
  p.sequences[0].num_queries = 0;
  EXPECT_EQ(only_error(p), "sequence 0: num_queries must be positive, got 0");
}

TEST(ProblemValidation, RejectsMoreQueriesThanContext) {
  Problem p = valid_problem();
  p.sequences[0].num_queries = 11;
  p.queries.resize(11 * 2 * 4);
  EXPECT_EQ(only_error(p), "sequence 0: num_queries (11) exceeds context_len (10): every query token is part of the context");
}

TEST(ProblemValidation, RejectsANonFiniteScale) {
  Problem p = valid_problem();
  p.explicit_scale = NAN;
  EXPECT_EQ(only_error(p), "scale must be finite, got nan");
  p.explicit_scale = INFINITY;
  EXPECT_EQ(only_error(p), "scale must be finite, got inf");
}

TEST(ProblemValidation, RejectsAnEmptyBatch) {
  Problem p = valid_problem();
  p.sequences.clear();
  EXPECT_EQ(only_error(p), "sequences is empty: a batch needs at least one sequence");
}

TEST(ProblemValidation, RejectsPoolsOfTheWrongSize) {
  Problem p = valid_problem();
  p.v_pool.pop_back();
  EXPECT_EQ(only_error(p), "v_pool has 95 elements but num_blocks*block_size*num_kv_heads*head_dim = 96");
}

TEST(ProblemValidation, RejectsValuesNotRepresentableInTheDtype) {
  Problem p = valid_problem();
  p.dtype = DType::bf16;
  for (float& x : p.k_pool) x = round_to_dtype_f(x, DType::bf16);
  for (float& x : p.v_pool) x = round_to_dtype_f(x, DType::bf16);
  for (float& x : p.queries) x = round_to_dtype_f(x, DType::bf16);
  p.queries[5] = 0.1f;
  EXPECT_EQ(only_error(p), "queries[5] = 0.100000001 is not representable in bf16");
}

TEST(ProblemValidation, RefusesHugeDeclaredSizesWithoutAllocating) {
  Problem p = valid_problem();
  p.num_blocks = 1 << 30;
  p.head_dim = 1 << 10;
  p.sequences[0].block_table = {0, 1, 2};
  const std::vector<std::string> errors = validation_errors(p);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.front().find("over the limit"), std::string::npos) << errors.front();
}

TEST(ProblemValidation, ValidateThrowsWithEveryError) {
  Problem p = valid_problem();
  p.sequences[0].block_table[0] = 99;
  p.sequences[0].block_table[1] = -5;
  try {
    validate(p);
    FAIL() << "validate accepted an invalid problem";
  } catch (const InvalidProblem& e) {
    EXPECT_EQ(e.errors().size(), 2u);
    EXPECT_NE(std::string(e.what()).find("block_table[0] = 99"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("block_table[1] = -5"), std::string::npos);
  }
}

TEST(ProblemDescription, ElidesLongTablesAndBatches) {
  Problem p = testing::single_sequence(400, 1, 1, 1, 4, testing::wobble);  // a table of 100 blocks
  p.sequences.resize(40, p.sequences[0]);
  p.queries.resize(40, 0.5f);
  ASSERT_TRUE(validation_errors(p).empty());
  const std::string text = describe(p);
  EXPECT_NE(text.find("table=[0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 ... 84 more]"), std::string::npos) << text;
  EXPECT_EQ(text.find(" 99"), std::string::npos) << "the table's tail is elided";
  EXPECT_NE(text.find("... 8 more sequences"), std::string::npos) << text;
  EXPECT_LT(text.size(), 4000u);
}

TEST(ProblemValidation, RejectsLogitOptionsOutOfTheirDomain) {
  Problem p = valid_problem();
  p.options.soft_cap = 0.0f;
  EXPECT_EQ(only_error(p), "soft_cap must be finite and positive, got 0");
  p = valid_problem();
  p.options.window = 0;
  EXPECT_EQ(only_error(p), "window must be at least 1 (the query's own position), got 0");
  p = valid_problem();
  p.options.alibi_slopes = {0.5f, INFINITY};
  EXPECT_EQ(only_error(p), "alibi_slopes[1] = inf must be finite");
  p = valid_problem();
  p.options.sinks = {1.0f, 2.0f, 3.0f};
  EXPECT_EQ(only_error(p), "sinks has 3 values but num_query_heads = 2: one per query head");
  p = valid_problem();
  p.options.sinks = {-INFINITY, 1.0f};  // -inf is a head without a sink
  EXPECT_TRUE(validation_errors(p).empty());
}

// An fp8 cache: pools hold fp8 values, scales are per tensor or per KV head, finite and positive.
Problem fp8_problem(Fp8Format format) {
  Problem p = valid_problem();
  for (std::vector<float>* pool : {&p.k_pool, &p.v_pool})
    for (float& x : *pool) x = static_cast<float>(round_to_fp8(x, format));
  p.fp8_cache = Fp8Cache{format, {0.5f}, {2.0f, 0.25f}};
  return p;
}

TEST(ProblemValidation, AcceptsAnFp8CacheOfFp8ValuesAndRejectsOthers) {
  for (Fp8Format f : kAllFp8Formats) EXPECT_TRUE(validation_errors(fp8_problem(f)).empty()) << fp8_name(f);
  Problem p = fp8_problem(Fp8Format::e4m3);
  p.v_pool[5] = 1.0625f;  // an fp32 value, not an e4m3 one
  EXPECT_EQ(only_error(p), "v_pool[5] = 1.0625 is not representable in fp8_e4m3");
  p = fp8_problem(Fp8Format::e4m3);
  p.k_pool[0] = INFINITY;  // e4m3 has no infinity; e5m2 has
  EXPECT_EQ(only_error(p), "k_pool[0] = inf is not representable in fp8_e4m3");
  p = fp8_problem(Fp8Format::e5m2);
  p.k_pool[0] = INFINITY;
  EXPECT_TRUE(validation_errors(p).empty());
}

TEST(ProblemValidation, RejectsFp8ScalesOfTheWrongCountOrSign) {
  Problem p = fp8_problem(Fp8Format::e5m2);
  p.fp8_cache->k_scales = {1.0f, 1.0f, 1.0f};
  EXPECT_EQ(only_error(p), "k_scales has 3 values but must have 1 (per tensor) or num_kv_heads = 2");
  p = fp8_problem(Fp8Format::e5m2);
  p.fp8_cache->v_scales = {1.0f, -1.0f};
  EXPECT_EQ(only_error(p), "v_scales[1] = -1 must be finite and positive");
  p = fp8_problem(Fp8Format::e5m2);
  p.fp8_cache->k_scales = {NAN};
  EXPECT_EQ(only_error(p), "k_scales[0] = nan must be finite and positive");
}

}  // namespace
}  // namespace pacheck
