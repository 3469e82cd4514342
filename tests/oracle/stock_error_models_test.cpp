// Pins the error models an external kernel declares: the stock names, the checks on explicit coefficients, the model
// each declaration yields, and what the logit options and an fp8 cache add to each.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "oracle/stock_error_models.h"
#include "tests/fixtures/problem_builders.h"

namespace pacheck {
namespace {

// One MHA sequence of 40 keys and 3 queries, head_dim 8, in blocks of 4: enough keys for several splits of 16.
Problem small_problem() { return testing::single_sequence(40, 3, 2, 8, 4, testing::wobble); }

// One declaration of each kind; the explicit coefficients are distinct numbers, so that each quantity shows.
const DeclaredErrorModel kFused{}, kSplit{StockErrorModel::fp32_split_k, {}},
    kBf16{StockErrorModel::bf16_tensor_cores, {}}, kFp16{StockErrorModel::fp16_tensor_cores, {}};
const DeclaredErrorModel kExplicit{std::nullopt, {1, 0.5, 2, 3, 5, 7, 0.25, 11, 13, 17, 0x1p-11, 0x1p-100, 0}};

TEST(StockErrorModels, NamesRoundTripAndUnknownNamesAreRefused) {
  for (StockErrorModel m : {StockErrorModel::fp32_online_softmax, StockErrorModel::fp32_split_k,
                            StockErrorModel::bf16_tensor_cores, StockErrorModel::fp16_tensor_cores}) {
    const auto parsed = parse_stock_error_model(stock_error_model_name(m));
    ASSERT_TRUE(parsed.has_value()) << stock_error_model_name(m);
    EXPECT_EQ(*parsed, m);
    EXPECT_NE(stock_error_model_names().find(stock_error_model_name(m)), std::string::npos);
  }
  EXPECT_FALSE(parse_stock_error_model("fp32").has_value());
  EXPECT_FALSE(parse_stock_error_model("").has_value());
}

TEST(StockErrorModels, CoefficientsProblemNamesTheBadCoefficient) {
  EXPECT_EQ(coefficients_problem(ErrorCoefficients{}), "");
  const struct {
    double ErrorCoefficients::*coefficient;
    double value;
    const char* name;
  } bad[] = {{&ErrorCoefficients::chain_per_tile, -1, "chain_per_tile"},
             {&ErrorCoefficients::logit_constant, std::numeric_limits<double>::quiet_NaN(), "logit_constant"},
             {&ErrorCoefficients::absolute_error, std::numeric_limits<double>::infinity(), "absolute_error"},
             {&ErrorCoefficients::accumulator_unit_roundoff, 1, "accumulator_unit_roundoff"},
             {&ErrorCoefficients::accumulator_unit_roundoff, 0, "accumulator_unit_roundoff"},
             {&ErrorCoefficients::weight_underflow, 1, "weight_underflow"},
             {&ErrorCoefficients::absolute_error_per_v_scale, -0x1p-25, "absolute_error_per_v_scale"},
             {&ErrorCoefficients::soft_cap_logit_constant, -1, "soft_cap_logit_constant"}};
  for (const auto& [coefficient, value, name] : bad) {
    ErrorCoefficients k;
    k.*coefficient = value;
    EXPECT_NE(coefficients_problem(k).find(name), std::string::npos) << name << " = " << value;
  }
}

void expect_same_model(const ErrorModel& a, const ErrorModel& b) {
  EXPECT_EQ(a.logit_coefficient, b.logit_coefficient);
  EXPECT_EQ(a.weight_error, b.weight_error);
  EXPECT_EQ(a.accumulation_chain, b.accumulation_chain);
  EXPECT_EQ(a.accumulator_unit_roundoff, b.accumulator_unit_roundoff);
  EXPECT_EQ(a.weight_underflow, b.weight_underflow);
  EXPECT_EQ(a.absolute_error, b.absolute_error);
}

TEST(StockErrorModels, DefaultCoefficientsAreTheFp32OnlineSoftmaxModel) {
  const Problem p = small_problem();
  const OracleResult oracle = run_oracle(p);
  const DeclaredErrorModel explicit_defaults{std::nullopt, {}};
  for (std::size_t row = 0; row < oracle.rows.size(); ++row)
    expect_same_model(declared_error_model(kFused, p, oracle, row, Knobs{}, false),
                      declared_error_model(explicit_defaults, p, oracle, row, Knobs{}, false));
}

TEST(StockErrorModels, Fp32OnlineSoftmaxCountsEveryRoundingOfTheRow) {
  const Problem p = small_problem();
  const OracleResult oracle = run_oracle(p);
  for (std::size_t row = 0; row < oracle.rows.size(); ++row) {
    const RowCondition& c = oracle.rows[row];
    const ErrorModel m = declared_error_model(kFused, p, oracle, row, Knobs{}, false);
    EXPECT_EQ(m.logit_coefficient, p.head_dim + 2);
    EXPECT_EQ(m.weight_error, 4.0 * (1 + c.records));
    EXPECT_EQ(m.accumulation_chain, c.num_keys + c.records + 3);
    EXPECT_EQ(m.weight_underflow, 0x1p-150);
  }
}

TEST(StockErrorModels, SplitKAddsTheMergesToTheFusedModel) {
  const Problem p = small_problem();
  const Knobs knobs{16, 16, 0, {}};
  const OracleResult oracle = run_oracle(p, {16});
  for (std::size_t row = 0; row < oracle.rows.size(); ++row) {
    const RowCondition& c = oracle.rows[row];
    const ErrorModel f = declared_error_model(kFused, p, oracle, row, knobs, false);
    const ErrorModel s = declared_error_model(kSplit, p, oracle, row, knobs, true);
    const int splits = (c.num_keys + 15) / 16;
    const int split_records = oracle.records_in_splits(row, 16);
    EXPECT_EQ(s.logit_coefficient, f.logit_coefficient);
    EXPECT_EQ(s.weight_error, 4.0 * (2 + split_records + c.records));
    EXPECT_EQ(s.accumulation_chain, c.num_keys + split_records + 3 + 2.0 * splits);
  }
}

// head_dim 8: one mma step of 16 columns, then the scale multiply. Tiles of 32 keys over the row's context of 40: two
// mma passes per tile, the hi/lo split (bf16: 64 u; fp16: 4 u, 2^-11 of lo), four warps. fp16 also loses half its
// subnormal spacing per half of a weight (where lo or hi falls below its normal range).
TEST(StockErrorModels, TensorCoresCountMmaStepsAndTheWeightSplit) {
  const Problem p = small_problem();
  const Knobs knobs{32, 64, 0, {}};
  const OracleResult oracle = run_oracle(p);
  for (const auto& [declared, split, underflow] : {std::tuple{kBf16, 64, 0x1p-126}, {kFp16, 4, 0x1p-25}})
    for (std::size_t row = 0; row < oracle.rows.size(); ++row) {
      SCOPED_TRACE(std::string(stock_error_model_name(*declared.stock)) + " row " + std::to_string(row));
      const ErrorModel m = declared_error_model(declared, p, oracle, row, knobs, false);
      EXPECT_EQ(m.logit_coefficient, 72 + 2);
      EXPECT_EQ(m.accumulation_chain, 72.0 * 2 * 2 + split + oracle.rows[row].records + 4 + 2 + 2);
      EXPECT_EQ(m.weight_underflow, underflow);
    }
}

TEST(StockErrorModels, ExplicitCoefficientsScaleWithTheirQuantities) {
  const Problem p = small_problem();
  const Knobs knobs{8, 16, 0, {}};
  const OracleResult oracle = run_oracle(p, {16});
  DeclaredErrorModel declared = kExplicit;
  declared.coefficients.absolute_error = 1e-6;
  for (std::size_t row = 0; row < oracle.rows.size(); ++row) {
    const RowCondition& c = oracle.rows[row];
    const int records = oracle.records_in_splits(row, 16);
    const int splits = (c.num_keys + 15) / 16;
    const int tiles = (c.num_keys + 7) / 8;
    const ErrorModel m = declared_error_model(declared, p, oracle, row, knobs, true);
    EXPECT_EQ(m.logit_coefficient, 1 + 0.5 * p.head_dim);
    EXPECT_EQ(m.weight_error, 2 + 3.0 * records + 5.0 * splits);
    EXPECT_EQ(m.accumulation_chain, 7 + 0.25 * c.num_keys + 11.0 * records + 13.0 * splits + 17.0 * tiles);
    EXPECT_EQ(m.accumulator_unit_roundoff, 0x1p-11);
    EXPECT_EQ(m.weight_underflow, 0x1p-100);
    EXPECT_EQ(m.absolute_error, 1e-6);
  }
}

// small_problem with every logit option: a soft cap, a window of 11 keys (windows start inside splits of 16 and tiles
// of 8), ALiBi and a sink on each head.
Problem problem_with_options() {
  Problem p = small_problem();
  p.options.soft_cap = 4.0f;
  p.options.window = 11;
  p.options.alibi_slopes = {0.5f, 0.25f};
  p.options.sinks = {0.5f, -1.0f};
  validate(p);
  return p;
}

// Every model adds the options' fp32 cost (7 + 2) to its plain logit term and the sink's one term to its chain; a
// window counts the splits and tiles its keys touch, cut from position 0. Without options no bound moves.
TEST(StockErrorModels, LogitOptionsAddTheirCostToEveryModel) {
  const Problem plain = small_problem();
  const Problem p = problem_with_options();
  EXPECT_EQ(fp32_logit_option_cost(plain), 0);
  EXPECT_EQ(fp32_logit_option_cost(p), 9);
  const Knobs knobs{8, 16, 0, {}};
  const OracleResult oracle = run_oracle(p, {16});
  bool straddles = false;
  for (std::size_t row = 0; row < oracle.rows.size(); ++row) {
    const RowCondition& c = oracle.rows[row];
    ASSERT_TRUE(c.has_sink);
    ASSERT_LE(c.num_keys, 11);
    const int records = oracle.records_in_splits(row, 16);
    const int splits = (c.first_key + c.num_keys - 1) / 16 - c.first_key / 16 + 1;
    const int tiles = (c.first_key + c.num_keys - 1) / 8 - c.first_key / 8 + 1;
    straddles |= splits > (c.num_keys + 15) / 16;
    const ErrorModel f = declared_error_model(kFused, p, oracle, row, knobs, false);
    EXPECT_EQ(f.logit_coefficient, p.head_dim + 2 + 9);
    EXPECT_EQ(f.accumulation_chain, c.num_keys + 1 + c.records + 3);
    const ErrorModel s = declared_error_model(kSplit, p, oracle, row, knobs, true);
    EXPECT_EQ(s.logit_coefficient, p.head_dim + 2 + 9);
    EXPECT_EQ(s.accumulation_chain, c.num_keys + 1 + records + 3 + 2.0 * splits);
    const ErrorModel t = declared_error_model(kBf16, p, oracle, row, knobs, false);
    EXPECT_EQ(t.logit_coefficient, 72 + 2 + 9);
    const ErrorModel k = declared_error_model(kExplicit, p, oracle, row, knobs, true);
    EXPECT_EQ(k.logit_coefficient, 1 + 0.5 * p.head_dim + 9);
    EXPECT_EQ(k.weight_error, 2 + 3.0 * records + 5.0 * splits);
    EXPECT_EQ(k.accumulation_chain, 7 + 0.25 * (c.num_keys + 1) + 11.0 * records + 13.0 * splits + 17.0 * tiles);
  }
  EXPECT_TRUE(straddles) << "some row's window straddles a split boundary, so the count from position 0 matters";
}

// An fp8 cache adds its dequantisation to every model: one rounding of each logit term (K times its scale) and of each
// P V term (V times its scale), in either format, scales per tensor or per head; the weights keep theirs.
TEST(StockErrorModels, AnFp8CacheAddsItsDequantisationToEveryModel) {
  const Problem plain = small_problem();
  const Knobs knobs{8, 16, 0, {}};
  for (Fp8Format format : kAllFp8Formats) {
    const Problem p = testing::with_fp8_cache(plain, format, {0.5f}, {0.25f, 4.0f});
    validate(p);
    const OracleResult with = run_oracle(p, {16});
    for (std::size_t row = 0; row < with.rows.size(); ++row)
      for (const auto& [model, splits] :
           {std::pair{kFused, false}, {kSplit, true}, {kBf16, false}, {kExplicit, true}}) {
        const ErrorModel a = declared_error_model(model, p, with, row, knobs, splits);
        // The plain problem with the fp8 problem's rows: the dequantised values may move the records.
        const ErrorModel b = declared_error_model(model, plain, with, row, knobs, splits);
        EXPECT_EQ(a.logit_coefficient, b.logit_coefficient + 1) << fp8_name(format) << " row " << row;
        EXPECT_EQ(a.accumulation_chain, b.accumulation_chain + 1) << fp8_name(format) << " row " << row;
        EXPECT_EQ(a.weight_error, b.weight_error) << fp8_name(format) << " row " << row;
      }
  }
}

// A loss before the V scale (an output rounded before its multiply by the scale) is declared per unit of V scale: it
// grows with the row's KV head's scale, and without an fp8 cache there is none.
TEST(StockErrorModels, AbsoluteErrorPerVScaleCountsOnlyWithAnFp8CacheTimesTheRowsScale) {
  // GQA 2: query heads 0 and 1 read KV head 0, heads 2 and 3 KV head 1.
  Problem plain = testing::single_sequence(12, 2, 4, 8, 4, testing::wobble);
  plain.num_kv_heads = 2;
  plain.k_pool.resize(plain.pool_size());
  plain.v_pool.resize(plain.pool_size());
  validate(plain);
  DeclaredErrorModel declared{std::nullopt, {}};
  declared.coefficients.absolute_error = 0x1p-30;
  declared.coefficients.absolute_error_per_v_scale = 0x1p-25;
  const Problem p = testing::with_fp8_cache(plain, Fp8Format::e5m2, {0.5f}, {0.25f, 4.0f});
  validate(p);
  const OracleResult with = run_oracle(p), without = run_oracle(plain);
  for (std::size_t row = 0; row < with.rows.size(); ++row) {
    const double v_scale = row % 4 < 2 ? 0.25 : 4.0;  // rows are [query][head]
    EXPECT_EQ(declared_error_model(declared, p, with, row, Knobs{}, false).absolute_error, 0x1p-30 + 0x1p-25 * v_scale);
    EXPECT_EQ(declared_error_model(declared, plain, without, row, Knobs{}, false).absolute_error, 0x1p-30);
  }
}

// A soft cap costing more than fp32's (tanh.approx.f32) is declared apart from the plain logit: it adds to the logit
// coefficient only where the problem has a soft cap.
TEST(StockErrorModels, SoftCapLogitConstantCountsOnlyWithASoftCap) {
  const Problem plain = small_problem();
  Problem capped = plain;
  capped.options.soft_cap = 4.0f;
  validate(capped);
  const DeclaredErrorModel fp32_cap{std::nullopt, {}};
  DeclaredErrorModel declared = fp32_cap;
  declared.coefficients.soft_cap_logit_constant = 0x1p13;
  const OracleResult with = run_oracle(capped), without = run_oracle(plain);
  for (std::size_t row = 0; row < with.rows.size(); ++row) {
    EXPECT_EQ(declared_error_model(declared, capped, with, row, Knobs{}, false).logit_coefficient,
              declared_error_model(fp32_cap, capped, with, row, Knobs{}, false).logit_coefficient + 0x1p13);
    EXPECT_EQ(declared_error_model(declared, plain, without, row, Knobs{}, false).logit_coefficient,
              declared_error_model(fp32_cap, plain, without, row, Knobs{}, false).logit_coefficient);
  }
}

}  // namespace
}  // namespace pacheck
