// Each validation error names the field and the values.
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>

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

TEST(ProblemValidation, IgnoresPaddingPastTheContext) {
  Problem p = valid_problem();
  p.sequences[0].block_table.push_back(-1);
  p.sequences[0].block_table.push_back(1 << 30);
  EXPECT_TRUE(validation_errors(p).empty());
}

// A change to the valid problem and the error it must give: the only one, or (alone = false) the first.
struct Broken {
  void (*change)(Problem&);
  std::string error;
  bool alone = true;
};

void expect_errors(std::initializer_list<Broken> cases) {
  for (const Broken& c : cases) {
    Problem p = valid_problem();
    c.change(p);
    if (c.alone) {
      EXPECT_EQ(only_error(p), c.error);
    } else {
      ASSERT_FALSE(validation_errors(p).empty()) << c.error;
      EXPECT_EQ(validation_errors(p).front(), c.error);
    }
  }
}

TEST(ProblemValidation, RejectsBadTablesAndBlockIds) {
  expect_errors({
      {[](Problem& p) { p.sequences[0].block_table.pop_back(); },
       "sequence 0: block_table has 2 entries but context_len 10 with block_size 4 needs 3"},
      {[](Problem& p) { p.sequences[0].block_table[1] = 3; },
       "sequence 0: block_table[1] = 3 is out of range (num_blocks = 3)"},
      {[](Problem& p) { p.sequences[0].block_table[2] = -1; },
       "sequence 0: block_table[2] = -1 is negative (num_blocks = 3)"},
  });
}

TEST(ProblemValidation, RejectsBadShapesAndSizes) {
  expect_errors({
      {[](Problem& p) { p.num_query_heads = 3; },
       "num_query_heads (3) is not a multiple of num_kv_heads (2): the GQA ratio must be an integer", false},
      {[](Problem& p) { p.sequences[0].num_queries = 0; }, "sequence 0: num_queries must be positive, got 0"},
      {[](Problem& p) {
         p.sequences[0].num_queries = 11;
         p.queries.resize(11 * 2 * 4);
       },
       "sequence 0: num_queries (11) exceeds context_len (10): every query token is part of the context"},
      {[](Problem& p) { p.explicit_scale = NAN; }, "scale must be finite, got nan"},
      {[](Problem& p) { p.explicit_scale = INFINITY; }, "scale must be finite, got inf"},
      {[](Problem& p) { p.sequences.clear(); }, "sequences is empty: a batch needs at least one sequence"},
      {[](Problem& p) { p.v_pool.pop_back(); },
       "v_pool has 95 elements but num_blocks*block_size*num_kv_heads*head_dim = 96"},
  });
  for (int bad : {0, -3}) {
    const std::string got = ", got " + std::to_string(bad);
    for (const auto& [field, member] : {std::pair{"head_dim", &Problem::head_dim}, {"block_size", &Problem::block_size},
                                        {"num_kv_heads", &Problem::num_kv_heads},
                                        {"num_query_heads", &Problem::num_query_heads},
                                        {"num_blocks", &Problem::num_blocks}}) {
      Problem p = valid_problem();
      p.*member = bad;
      EXPECT_EQ(validation_errors(p).front(), field + std::string(" must be positive") + got);
    }
    Problem p = valid_problem();
    p.sequences[0].context_len = bad;
    EXPECT_EQ(only_error(p), "sequence 0: context_len must be positive" + got);
  }
}

TEST(ProblemValidation, RejectsValuesNotRepresentableInTheDtype) {
  Problem p = valid_problem();
  p.dtype = DType::bf16;
  for (std::vector<float>* values : {&p.k_pool, &p.v_pool, &p.queries})
    for (float& x : *values) x = round_to_dtype_f(x, DType::bf16);
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
  expect_errors({
      {[](Problem& p) { p.options.soft_cap = 0.0f; }, "soft_cap must be finite and positive, got 0"},
      {[](Problem& p) { p.options.window = 0; }, "window must be at least 1 (the query's own position), got 0"},
      {[](Problem& p) { p.options.alibi_slopes = {0.5f, INFINITY}; }, "alibi_slopes[1] = inf must be finite"},
      {[](Problem& p) { p.options.sinks = {1.0f, 2.0f, 3.0f}; },
       "sinks has 3 values but num_query_heads = 2: one per query head"},
  });
  Problem p = valid_problem();
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
