// Pins the exact gather oracle: the gather is a bit-exact copy, the attention agrees with an independent long
// double computation, and small cases match their closed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "oracle/error_model.h"
#include "oracle/oracle.h"
#include "tests/fixtures/problem_builders.h"
#include "properties/problem_spec.h"

namespace pacheck {
namespace {

ProblemSpec scattered_spec(std::uint64_t seed, DType dtype, ValueKind values = ValueKind::normal) {
  ProblemSpec spec;
  spec.dtype = dtype;
  spec.num_kv_heads = 2;
  spec.gqa_ratio = 3;
  spec.head_dim = 12;
  spec.block_size = 5;
  spec.sequences = {{23, 1}, {11, 11}, {17, 4}};
  spec.spare_blocks = 3;
  spec.shared_prefix = true;
  spec.table_padding = 2;
  spec.poison = Poison::nan;
  spec.values = values;
  spec.seed = seed;
  return spec;
}

TEST(Oracle, GatherIsBitIdenticalToADirectLogicalRead) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const Problem p = materialize(scattered_spec(seed, kAllDTypes[seed % 3]));
    for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s) {
      const GatheredSequence g = gather_sequence(p, s);
      const std::size_t row = static_cast<std::size_t>(p.num_kv_heads) * p.head_dim;
      ASSERT_EQ(g.keys.size(), row * p.sequences[s].context_len);
      for (int t = 0; t < p.sequences[s].context_len; ++t) {
        const int block = p.sequences[s].block_table[t / p.block_size];
        const std::size_t src =
            ((static_cast<std::size_t>(block) * p.block_size + t % p.block_size) * p.num_kv_heads) * p.head_dim;
        EXPECT_EQ(std::memcmp(&g.keys[row * t], &p.k_pool[src], row * 4), 0) << "seq " << s << " position " << t;
        EXPECT_EQ(std::memcmp(&g.values[row * t], &p.v_pool[src], row * 4), 0) << "seq " << s << " position " << t;
      }
    }
  }
}

// An independent computation: long double, reading the pool through the table (no gather), the exponentials
// normalised by the row's max, the logit options written out from problem.h's definition.
std::vector<long double> long_double_attention(const Problem& p) {
  std::vector<long double> out(p.output_size());
  const LogitOptions& o = p.options;
  for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s) {
    const Sequence& seq = p.sequences[s];
    for (int i = 0; i < seq.num_queries; ++i) {
      for (int h = 0; h < p.num_query_heads; ++h) {
        const int position = seq.first_query_position() + i;
        const float* q = &p.queries[p.query_offset(s, i, h)];
        std::vector<long double> logit, value_of;  // visible keys only, then the sink
        std::vector<int> key;
        for (int t = 0; t <= position; ++t) {
          if (o.window && position - t >= *o.window) continue;
          const float* k = &p.k_pool[p.kv_offset(s, t, h / p.gqa_ratio())];
          const long double k_scale = p.fp8_cache ? p.fp8_cache->k_scale(h / p.gqa_ratio()) : 1.0f;
          long double dot = 0;
          for (int j = 0; j < p.head_dim; ++j) dot += static_cast<long double>(q[j]) * k[j] * k_scale;
          long double x = dot * static_cast<long double>(p.scale());
          if (o.soft_cap) x = *o.soft_cap * std::tanh(x / *o.soft_cap);
          if (!o.alibi_slopes.empty()) x -= static_cast<long double>(o.alibi_slopes[h]) * (position - t);
          logit.push_back(x);
          key.push_back(t);
        }
        const bool sink = !o.sinks.empty() && std::isfinite(o.sinks[h]);
        if (sink) logit.push_back(o.sinks[h]);
        long double m = logit[0];
        for (long double x : logit) m = std::max(m, x);
        long double z = 0;
        for (long double& x : logit) z += (x = std::exp(x - m));
        const long double v_scale = p.fp8_cache ? p.fp8_cache->v_scale(h / p.gqa_ratio()) : 1.0f;
        for (int j = 0; j < p.head_dim; ++j) {
          long double acc = 0;
          for (std::size_t t = 0; t < key.size(); ++t)
            acc += logit[t] * p.v_pool[p.kv_offset(s, key[t], h / p.gqa_ratio()) + j] * v_scale;
          out[p.query_offset(s, i, h) + j] = acc / z;
        }
      }
    }
  }
  return out;
}

TEST(Oracle, AgreesWithAnIndependentLongDoubleComputation) {
  double worst = 0;
  for (std::uint64_t seed = 1; seed <= 80; ++seed) {
    const ValueKind kinds[] = {ValueKind::normal, ValueKind::all_negative, ValueKind::integer_valued,
                               ValueKind::near_range};
    // Seeds past 60 hold an fp8 cache, per tensor or per KV head, of values that fit its range.
    const ValueKind values = seed > 60 ? ValueKind::normal : kinds[seed % 4];
    Problem p = materialize(scattered_spec(seed, kAllDTypes[seed % 3], values));
    if (seed > 30) testing::add_logit_options(p, seed);
    const std::vector<float> v_scales = seed % 3 ? std::vector{0.25f, 3.0f} : std::vector{2.0f};
    if (seed > 60) p = testing::with_fp8_cache(p, kAllFp8Formats[seed % 2], {0.5f}, v_scales);
    const OracleResult r = run_oracle(p);
    const std::vector<long double> ref = long_double_attention(p);
    for (std::size_t e = 0; e < ref.size(); ++e) {
      // Relative to S = sum p |v|: the scale of the terms the weighted sum cancels.
      const double rel =
          static_cast<double>(std::fabs(r.out[e] - ref[e]) / std::max<long double>(r.abs_weighted_v[e], 1e-300L));
      worst = std::max(worst, rel);
      ASSERT_LE(rel, 1e-12) << "seed " << seed << " element " << e << "\n" << describe(p);
    }
  }
  RecordProperty("worst_relative_difference", std::to_string(worst));
}

// Two keys, head_dim 1, scale 1: logits 0 and 1, so the weights are 1/(1+e) and e/(1+e).
Problem two_keys() {
  Problem p = testing::single_sequence(2, 1, 1, 1, 4, [](int) { return 0.0; });
  p.explicit_scale = 1.0f;
  p.k_pool = {0.0f, 1.0f, 0.0f, 0.0f};
  p.v_pool = {1.0f, 3.0f, 0.0f, 0.0f};
  p.queries = {1.0f};
  return p;
}

TEST(Oracle, TwoKeysMatchTheClosedForm) {
  const OracleResult r = run_oracle(two_keys());
  const double e = std::exp(1.0), p0 = 1 / (1 + e), p1 = e / (1 + e);
  const double o = p0 * 1 + p1 * 3;
  EXPECT_NEAR(r.out[0], o, 1e-15);
  EXPECT_NEAR(r.abs_weighted_v[0], o, 1e-15);  // all V positive: S = o
  EXPECT_DOUBLE_EQ(r.abs_sum_v[0], 1.0 + 3.0);  // A = |v_0| + |v_1|, unweighted
  EXPECT_NEAR(r.centered_v[0], p0 * (o - 1) + p1 * (3 - o), 1e-15);
  EXPECT_NEAR(r.logit_centered_v[0], p1 * 1 * (3 - o), 1e-15);  // L_0 = 0, L_1 = 1
  EXPECT_NEAR(r.spread_centered_v[0], p0 * 1 * (o - 1), 1e-15);  // key 0 sits 1 below the max
  EXPECT_NEAR(r.max_deviation_v[0], o - 1, 1e-15);  // o is nearer 3 than 1
  EXPECT_EQ(r.rows[0].num_keys, 2);
  EXPECT_EQ(r.rows[0].records, 1);  // the max rises once
  EXPECT_DOUBLE_EQ(r.rows[0].max_logit_magnitude, 1.0);
  EXPECT_DOUBLE_EQ(r.rows[0].max_spread, 1.0);
}

TEST(Oracle, ASinkJoinsTheDenominatorWithNoValueAndCountsAsARecord) {
  Problem p = two_keys();
  p.options.sinks = {1.0f};  // logits: sink 1, keys 0 and 1
  const OracleResult r = run_oracle(p);
  const double e = std::exp(1.0), z = e + 1 + e;
  const double o = (1 * 1 + e * 3) / z;
  EXPECT_NEAR(r.out[0], o, 1e-15);
  EXPECT_NEAR(r.centered_v[0], (e / z) * o + (1 / z) * (o - 1) + (e / z) * (3 - o), 1e-15) << "the sink's |0 - o|";
  EXPECT_NEAR(r.max_deviation_v[0], 3 - o, 1e-15) << "3 lies farther from o than the sink's value 0";
  EXPECT_EQ(r.rows[0].num_keys, 2) << "the sink is not a key";
  EXPECT_TRUE(r.rows[0].has_sink);
  // Visited first, the sink ties the last key (a near-tie counts): one record, and one more for a kernel that
  // joins the sink last.
  EXPECT_EQ(r.rows[0].records, 2);
  p.options.sinks = {-INFINITY};
  const OracleResult none = run_oracle(p);
  EXPECT_EQ(none.out, run_oracle(two_keys()).out) << "a sink of -inf is no sink";
  EXPECT_FALSE(none.rows[0].has_sink);
  EXPECT_EQ(none.rows[0].records, 1);
}

TEST(Oracle, AlibiBiasesOlderKeysDownAndEntersTheMagnitude) {
  Problem p = two_keys();
  p.options.alibi_slopes = {2.0f};  // key 0 sits one position back: 0 - 2, key 1: 1
  const OracleResult r = run_oracle(p);
  const double w0 = std::exp(-2.0), w1 = std::exp(1.0);
  EXPECT_NEAR(r.out[0], (w0 * 1 + w1 * 3) / (w0 + w1), 1e-15);
  EXPECT_DOUBLE_EQ(r.rows[0].max_logit_magnitude, 2.0) << "key 0: |q.k| = 0 plus |bias| = 2";
  EXPECT_DOUBLE_EQ(r.rows[0].max_spread, 3.0);
}

TEST(Oracle, ASoftCapBendsTheLogitsThroughTanh) {
  Problem p = two_keys();
  p.options.soft_cap = 0.5f;  // logits 0 and 0.5 tanh(2)
  const OracleResult r = run_oracle(p);
  const double w1 = std::exp(0.5 * std::tanh(2.0));
  EXPECT_NEAR(r.out[0], (1 + w1 * 3) / (1 + w1), 1e-15);
  EXPECT_NEAR(r.rows[0].max_spread, 0.5 * std::tanh(2.0), 1e-15);
}

TEST(Oracle, AWindowHidesKeysOlderThanItAndTheirPoison) {
  // A prefill of 5 under a window of 2: query i sees keys i - 1 and i.
  Problem p = testing::single_sequence(5, 5, 1, 2, 2, testing::wobble);
  p.options.window = 2;
  const OracleResult r = run_oracle(p);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(r.rows[i].num_keys, std::min(i + 1, 2)) << "query " << i;
    EXPECT_EQ(r.rows[i].first_key, std::max(i - 1, 0)) << "query " << i;
  }
  Problem window_of_one = testing::single_sequence(5, 3, 1, 2, 2, testing::wobble);
  window_of_one.options.window = 1;
  const OracleResult own = run_oracle(window_of_one);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      EXPECT_EQ(own.out[i * 2 + j], window_of_one.v_pool[window_of_one.kv_offset(0, 2 + i, 0) + j])
          << "a window of 1 returns the query's own V";
  // Keys 0 and 1 lie before the first query's window (position 2): NaN there is never read.
  window_of_one.k_pool[0] = NAN;
  window_of_one.v_pool[2] = NAN;
  const OracleResult poisoned = run_oracle(window_of_one);
  EXPECT_TRUE(poisoned.fits_fp32);
  EXPECT_EQ(poisoned.out, own.out);
}

// Four keys with logits 0, 1, 2, 3 (q = 1, k = t, scale 1).
Problem four_rising_logits() {
  Problem p = testing::single_sequence(4, 1, 1, 1, 4, [](int) { return 0.0; });
  p.explicit_scale = 1.0f;
  p.k_pool = {0, 1, 2, 3};
  p.queries = {1};
  return p;
}

TEST(Oracle, SplitRecordsCountOnlyTheWindowsKeys) {
  // A window of 3 hides key 0, so splits of two hold keys {1} and {2, 3}.
  Problem p = four_rising_logits();
  p.options.window = 3;
  const OracleResult r = run_oracle(p, {2, 4});
  EXPECT_EQ(r.rows[0].records, 2);
  EXPECT_EQ(r.records_in_splits(0, 2), 1);
  EXPECT_EQ(r.records_in_splits(0, 4), 2);
}

TEST(Oracle, CausalPrefillLetsTheFirstTokenSeeOnlyItself) {
  Problem p = two_keys();
  p.sequences[0].num_queries = 2;
  p.queries = {1.0f, 1.0f};
  const OracleResult r = run_oracle(p);
  EXPECT_EQ(r.out[0], 1.0);  // token 0 attends to key 0 alone: its V exactly
  EXPECT_NEAR(r.out[1], run_oracle(two_keys()).out[0], 1e-15);
}

TEST(Oracle, DefaultScaleIsOneOverRootHeadDim) {
  Problem p = testing::single_sequence(3, 1, 1, 16, 4, testing::wobble);
  EXPECT_EQ(p.scale(), static_cast<float>(0.25));
  p.explicit_scale = 0.5f;
  EXPECT_EQ(p.scale(), 0.5f);
}

TEST(Oracle, GqaHeadsReadTheirGroupsKvHead) {
  // 4 query heads over 2 KV heads: heads 0, 1 read KV head 0 and heads 2, 3 KV head 1. With a single key the output
  // is that key's V exactly, naming the KV head read.
  Problem p = testing::single_sequence(1, 1, 2, 2, 1, [](int) { return 0.0; });
  p.num_query_heads = 4;
  p.queries.assign(4 * 2, 1.0f);
  p.v_pool = {10.0f, 11.0f, 20.0f, 21.0f};  // KV head 0: (10, 11), KV head 1: (20, 21)
  const OracleResult r = run_oracle(p);
  const std::vector<double> expected = {10, 11, 10, 11, 20, 21, 20, 21};
  EXPECT_EQ(r.out, expected);
}

TEST(Oracle, SplitRecordsRestartInEverySplit) {
  // Three records overall, one in each split of two.
  const OracleResult r = run_oracle(four_rising_logits(), {2, 4});
  EXPECT_EQ(r.rows[0].records, 3);
  EXPECT_EQ(r.records_in_splits(0, 2), 1);
  EXPECT_EQ(r.records_in_splits(0, 4), 3);
  EXPECT_THROW(r.records_in_splits(0, 3), std::out_of_range);
}

TEST(Oracle, FlagsProblemsOutsideFp32) {
  Problem p = testing::single_sequence(3, 1, 1, 2, 4, testing::wobble);
  EXPECT_TRUE(run_oracle(p).fits_fp32);
  p.v_pool[0] = 3e38f;
  EXPECT_FALSE(run_oracle(p).fits_fp32);
}

// Found by structured_problem_fuzzer: an fp16 K of +inf in a referenced slot, met by q = 0, gives the logit NaN;
// std::max dropped the NaN magnitude, so the oracle called the problem inside fp32 and every variant "failed".
TEST(Oracle, FlagsNonFiniteValuesInReferencedSlots) {
  const Problem good = testing::single_sequence(3, 1, 1, 2, 4, testing::wobble);
  for (const float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    Problem k_bad = good;
    k_bad.queries.assign(k_bad.queries.size(), 0.0f);
    k_bad.k_pool[0] = bad;  // block 0 is referenced
    EXPECT_FALSE(run_oracle(k_bad).fits_fp32) << "K = " << bad;
    Problem v_bad = good;
    v_bad.v_pool[0] = bad;
    EXPECT_FALSE(run_oracle(v_bad).fits_fp32) << "V = " << bad;
    Problem q_bad = good;
    q_bad.queries[0] = bad;
    EXPECT_FALSE(run_oracle(q_bad).fits_fp32) << "q = " << bad;
  }
}

// An infinite K element of an e5m2 cache: a -inf logit has weight exactly 0 and a soft-capped one is exactly +-cap,
// in fp32 as in the oracle, so neither may leave the row's bounds NaN.
TEST(Oracle, AnInfiniteDotProductLeavesTheRowsBoundsFinite) {
  Problem p = testing::single_sequence(4, 1, 1, 4, 4, testing::wobble, DType::bf16);
  for (float& x : p.k_pool) x = 1.0f;
  for (float& x : p.queries) x = 0.5f;
  p = testing::with_fp8_cache(p, Fp8Format::e5m2, {1.0f}, {1.0f});
  p.k_pool[4] = -std::numeric_limits<float>::infinity();  // key 1's dim 0: its logit is -inf
  for (const std::optional<float> cap : {std::optional<float>{}, std::optional<float>{3.0f}}) {
    p.options.soft_cap = cap;
    validate(p);
    const OracleResult r = run_oracle(p);
    for (std::size_t e = 0; e < r.out.size(); ++e) {
      ASSERT_TRUE(std::isfinite(r.out[e])) << e;
      const ElementBound b = element_bound(ErrorModel{10, 8, 20}, r, e, p.dtype);
      EXPECT_TRUE(std::isfinite(b.bound) && b.bound > 0) << "element " << e << (cap ? " with a cap" : "") << ": "
                                                          << b.bound;
    }
  }
}

// Logits 0 and 1e10: the logit error bound (about 3000) overflows exp, so the model says nothing through C_j, which
// is 0 here (key 0's exact weight underflows); the values' reach D_j = |v_0 - o| bounds what any weights could do.
TEST(Oracle, ALogitErrorBeyondExpsRangeLeavesTheValuesReachAsTheBound) {
  Problem p = two_keys();
  p.queries = {1e10f};
  for (const float v0 : {1.0f, 3.0f}) {
    p.v_pool[0] = v0;
    const OracleResult r = run_oracle(p);
    ASSERT_TRUE(r.fits_fp32);
    EXPECT_EQ(r.out[0], 3.0);
    EXPECT_EQ(r.centered_v[0], 0.0);
    const double bound = element_bound(ErrorModel{10, 8, 20}, r, 0, p.dtype).bound;
    EXPECT_TRUE(std::isfinite(bound)) << "v_0 = " << v0 << ": " << bound;
    EXPECT_GE(bound, 3.0 - v0) << "a kernel whose logit error is this large may return key 0's value";
    EXPECT_LT(bound, 3.0 - v0 + 1e-4) << "v_0 = " << v0;
  }
}

}  // namespace
}  // namespace pacheck
