// The laws of the online-softmax state (variants/online_softmax.h): the empty state is the identity of merge; merge
// commutes (bit for bit) and associates within bound; a tiled fold equals merged per-tile states within bound (the
// error model's bounds with exact logits). Each law is also shown to fail on a broken merge.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "oracle/error_model.h"
#include "variants/online_softmax.h"

namespace pacheck {
namespace {

constexpr int kLanes = 4;
using State = OnlineSoftmaxState<kLanes>;
using Merge = std::function<void(State&, const State&)>;

struct History {
  std::vector<float> scores;
  std::vector<float> values;  // [key][kLanes]
  int size() const { return static_cast<int>(scores.size()); }
};

rc::Gen<History> history(int min_keys = 1) {
  return rc::gen::exec([min_keys] {
    History h;
    const int n = *rc::gen::inRange(min_keys, 40);
    const float spread = *rc::gen::element(0.01f, 1.0f, 10.0f, 100.0f);
    for (int t = 0; t < n; ++t) {
      // Scores on a 2^-10 grid and values on 2^-8: exact floats, varied magnitudes.
      h.scores.push_back(spread * static_cast<float>(*rc::gen::inRange(-4096, 4097)) / 4096.0f);
      for (int j = 0; j < kLanes; ++j) h.values.push_back(static_cast<float>(*rc::gen::inRange(-512, 513)) / 256.0f);
    }
    return h;
  });
}

State fold_range(const History& h, int begin, int end, int tile) {
  State s;
  s.init(kLanes);
  for (int t = begin; t < end; t += tile) {
    const int count = std::min(tile, end - t);
    s.fold(&h.scores[t], count, [&](int lane) { return &h.values[(t + lane) * kLanes]; }, kLanes);
  }
  return s;
}

void correct_merge(State& into, const State& other) { into.merge(other, kLanes); }

// The bug the law tests must catch: partial states summed as if they shared one max.
void merge_ignoring_max(State& into, const State& other) {
  if (other.m == -INFINITY) return;
  into.d += other.d;
  for (int j = 0; j < kLanes; ++j) into.o[j] += other.o[j];
  into.m = std::fmax(into.m, other.m);
}

// Exact attention of the history and the bound for a result after `folds` rescales and `merges` merges.
struct ExactRow {
  OracleResult oracle;
  ErrorModel model;
};

ExactRow exact_row(const History& h, int folds, int merges) {
  ExactRow r;
  OracleResult& o = r.oracle;
  double m = -INFINITY;
  for (float s : h.scores) m = std::max(m, static_cast<double>(s));
  std::vector<double> p(h.size());
  double z = 0;
  for (int t = 0; t < h.size(); ++t) z += (p[t] = std::exp(h.scores[t] - m));
  for (double& w : p) w /= z;
  RowCondition row;
  row.num_keys = h.size();
  for (int t = 0; t < h.size(); ++t) row.max_spread = std::max(row.max_spread, m - h.scores[t]);
  o.rows = {row};
  for (int j = 0; j < kLanes; ++j) {
    double out = 0, s = 0, a = 0, c = 0, cm = 0, most = 0;
    for (int t = 0; t < h.size(); ++t) out += p[t] * h.values[t * kLanes + j];
    for (int t = 0; t < h.size(); ++t) {
      const double v = h.values[t * kLanes + j];
      s += p[t] * std::fabs(v);
      a += std::fabs(v);
      c += p[t] * std::fabs(v - out);
      cm += p[t] * std::fabs(v - out) * (m - h.scores[t]);
      most = std::max(most, std::fabs(v - out));
    }
    o.out.push_back(out);
    o.abs_weighted_v.push_back(s);
    o.abs_sum_v.push_back(a);
    o.centered_v.push_back(c);
    o.logit_centered_v.push_back(0);  // the scores are given exactly
    o.spread_centered_v.push_back(cm);
    o.max_deviation_v.push_back(most);
  }
  r.model.logit_coefficient = 0;
  r.model.weight_error = 2.0 * (1 + folds + merges);  // expf per key, per rescale, per merge factor
  r.model.accumulation_chain = h.size() + folds + 2.0 * merges + 2;
  return r;
}

void require_within_bound(const State& s, const ExactRow& exact) {
  float out[kLanes];
  s.normalize(out, kLanes);
  for (int j = 0; j < kLanes; ++j) {
    const double bound = element_bound(exact.model, exact.oracle, j, DType::f32).bound;
    const double error = std::fabs(out[j] - exact.oracle.out[j]);
    RC_ASSERT_FALSE(error > bound || std::isnan(error));
  }
}

bool bit_identical(const State& a, const State& b) {
  return std::memcmp(&a.m, &b.m, sizeof(float)) == 0 && std::memcmp(&a.d, &b.d, sizeof(float)) == 0 &&
         std::memcmp(a.o, b.o, sizeof(a.o)) == 0;
}

// Bit for bit, except that any NaN equals any NaN: which NaN an operation returns from NaN operands depends on
// their order, which a compiler may swap in a product.
bool same_bits(float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(float)) == 0; }
bool identical_up_to_nan_payload(const State& a, const State& b) {
  bool same = same_bits(a.m, b.m) && same_bits(a.d, b.d);
  for (int j = 0; j < kLanes; ++j) same = same && same_bits(a.o[j], b.o[j]);
  return same;
}

// --- the laws, over a merge function ----------------------------------------------------------------------------

void empty_state_is_the_identity(const Merge& merge) {
  const History h = *history();
  const State x = fold_range(h, 0, h.size(), *rc::gen::inRange(1, 9));
  State empty;
  empty.init(kLanes);
  State left = empty, right = x;
  merge(left, x);
  merge(right, empty);
  RC_ASSERT(bit_identical(left, x));
  RC_ASSERT(bit_identical(right, x));
}

void merge_commutes(const Merge& merge) {
  const History h = *history(2);
  const int cut = *rc::gen::inRange(1, h.size());
  const State a = fold_range(h, 0, cut, 3), b = fold_range(h, cut, h.size(), 3);
  State ab = a, ba = b;
  merge(ab, b);
  merge(ba, a);
  RC_ASSERT(bit_identical(ab, ba));
}

void merge_associates_within_bound(const Merge& merge) {
  const History h = *history(3);
  const int cut1 = *rc::gen::inRange(1, h.size() - 1);
  const int cut2 = *rc::gen::inRange(cut1 + 1, h.size());
  const State a = fold_range(h, 0, cut1, 1), b = fold_range(h, cut1, cut2, 1), c = fold_range(h, cut2, h.size(), 1);
  State left = a;  // (a . b) . c
  merge(left, b);
  merge(left, c);
  State bc = b, right = a;  // a . (b . c)
  merge(bc, c);
  merge(right, bc);
  const ExactRow exact = exact_row(h, h.size(), 2);
  require_within_bound(left, exact);
  require_within_bound(right, exact);
}

void tiled_fold_equals_merged_tiles(const Merge& merge) {
  const History h = *history();
  const int tile = *rc::gen::inRange(1, h.size() + 3);
  const State folded = fold_range(h, 0, h.size(), tile);
  State merged;
  merged.init(kLanes);
  int tiles = 0;
  for (int t = 0; t < h.size(); t += tile, ++tiles) merge(merged, fold_range(h, t, std::min(t + tile, h.size()), tile));
  const ExactRow exact = exact_row(h, tiles, tiles);
  require_within_bound(folded, exact);
  require_within_bound(merged, exact);
}

RC_GTEST_PROP(OnlineSoftmaxLaws, EmptyStateIsTheIdentityOfMerge, ()) { empty_state_is_the_identity(correct_merge); }
RC_GTEST_PROP(OnlineSoftmaxLaws, MergeCommutesBitForBit, ()) { merge_commutes(correct_merge); }
RC_GTEST_PROP(OnlineSoftmaxLaws, MergeAssociatesWithinBound, ()) { merge_associates_within_bound(correct_merge); }
RC_GTEST_PROP(OnlineSoftmaxLaws, TiledFoldEqualsMergedTilesWithinBound, ()) {
  tiled_fold_equals_merged_tiles(correct_merge);
}

TEST(OnlineSoftmaxLaws, FoldingOnlyMaskedKeysLeavesTheStateEmpty) {
  State s;
  s.init(kLanes);
  const float scores[3] = {-INFINITY, -INFINITY, -INFINITY};
  const float poison[kLanes] = {NAN, NAN, NAN, NAN};
  s.fold(scores, 3, [&](int) { return poison; }, kLanes);
  EXPECT_EQ(s.m, -INFINITY);
  EXPECT_EQ(s.d, 0.0f);
  for (float o : s.o) EXPECT_EQ(o, 0.0f);
}

// A state started from a sink (the split-K merge) has the bits of the sink folded (fold_sink); -inf: the empty state.
TEST(OnlineSoftmaxLaws, AStateStartedFromASinkIsTheSinkFoldedIntoTheEmptyState) {
  const float zeros[kLanes] = {};
  for (float sink : {-INFINITY, -1e30f, -3.5f, 0.0f, 0.75f, 88.0f, 1e30f}) {
    State folded, started;
    folded.init(kLanes);
    folded.fold(&sink, 1, [&](int) { return zeros; }, kLanes);
    started.init_sink(sink, kLanes);
    EXPECT_TRUE(bit_identical(folded, started)) << sink;
  }
}

TEST(OnlineSoftmaxLaws, MaskedKeysNeverTouchTheirValues) {
  State s;
  s.init(kLanes);
  const float scores[2] = {0.5f, -INFINITY};
  const float v0[kLanes] = {1, 2, 3, 4}, poison[kLanes] = {NAN, INFINITY, -INFINITY, NAN};
  s.fold(scores, 2, [&](int t) { return t == 0 ? v0 : poison; }, kLanes);
  float out[kLanes];
  s.normalize(out, kLanes);
  for (int j = 0; j < kLanes; ++j) EXPECT_EQ(out[j], v0[j]);
}

// Whether a property, run as RapidCheck would (fixed seed, 200 cases), fails on some case.
bool fails_on_some_case(const std::function<void()>& property) {
  rc::detail::TestParams params;
  params.seed = 7;
  params.maxSuccess = 200;
  const auto result = rc::detail::checkTestable(property, rc::detail::TestMetadata{}, params);
  rc::detail::FailureResult failure;
  return result.match(failure);
}

// The branch-free steps of online_softmax.h are bit for bit the textbook ones (a select around the exp), and a fully
// masked tile leaves a state as it was: over a grid of values with -inf, +-0, +inf and NaN, any NaN counting as any
// other. Each law is a predicate of its step, so that a plausible mistake in the step is shown to break it.
const float kExtremes[] = {-INFINITY, -1e30f, -88.5f, -3.25f, -0.0f, 0.0f, 1e-7f, 2.5f, 87.0f, 1e30f, INFINITY, NAN};

float selected_rescale_factor(float m_old, float m_new) { return m_old == -INFINITY ? 0.0f : expf(m_old - m_new); }
float selected_key_weight(float score, float m) { return score == -INFINITY ? 0.0f : expf(score - m); }

using Exp2 = std::function<float(float, float)>;
bool is_the_rescale_factor(const Exp2& factor) {
  for (float m_old : kExtremes)
    for (float m_new : kExtremes) {
      if (m_new < m_old) continue;  // factors re-express a state against a max at least its own
      if (!same_bits(factor(m_old, m_new), selected_rescale_factor(m_old, m_new))) return false;
    }
  return true;
}

TEST(OnlineSoftmaxLaws, TheRescaleFactorIsTheSelectedExp) {
  EXPECT_TRUE(is_the_rescale_factor(rescale_factor));
  // Broken: the factor of the difference alone, NaN for an empty state against a max of -inf (-inf - -inf).
  EXPECT_FALSE(is_the_rescale_factor([](float m_old, float m_new) { return expf(m_old - m_new); }));
}

bool is_the_key_weight(const Exp2& weight) {
  for (float score : kExtremes)
    for (float m : kExtremes)
      if (!same_bits(weight(score, m), selected_key_weight(score, m))) return false;
  return true;
}

TEST(OnlineSoftmaxLaws, TheKeyWeightIsTheSelectedExp) {
  EXPECT_TRUE(is_the_key_weight(key_weight));
  // Broken: the weight of the difference alone, NaN for a masked key against an empty max.
  EXPECT_FALSE(is_the_key_weight([](float score, float m) { return expf(score - m); }));
}

using Raise = std::function<float(float&, float&, float)>;
// For every reachable state and tile max: the textbook raise where the tile max is not -inf; else a factor leaving
// m, d and o alone, but NaN at m = +inf. States: m = -inf with d and o 0 or NaN (only NaN scores folded); m finite
// with any d; m = +inf with d 0 (a GPU thread's share without the infinite key) or NaN. A max is never NaN.
bool is_the_raise_and_leaves_masked_tiles_alone(const Raise& raise) {
  const float sums[] = {0.0f, 1.0f, 3.5f, 1e30f, NAN};
  for (float m0 : kExtremes)
    for (float d0 : sums)
      for (float tile_max : kExtremes) {
        if (std::isnan(m0)) continue;
        if ((m0 == -INFINITY || m0 == INFINITY) && d0 != 0.0f && !std::isnan(d0)) continue;  // no state has them
        const float o0 = m0 == -INFINITY && d0 == 0.0f ? 0.0f : d0 * 0.75f;
        float m = m0, d = d0;
        const float alpha = raise(m, d, tile_max);
        if (tile_max == -INFINITY && m0 == INFINITY) {
          if (!same_bits(m, m0) || !std::isnan(d) || !std::isnan(alpha)) return false;
        } else if (tile_max == -INFINITY) {
          if (!same_bits(m, m0) || !same_bits(d, d0) || !same_bits(o0 * alpha, o0)) return false;
        } else {
          // The new max as a value (which zero fmaxf(-0, +0) returns is unspecified); the factor and d are then the
          // textbook ones against the max the raise chose.
          const float textbook_alpha = selected_rescale_factor(m0, m);
          if (!(m == fmaxf(m0, tile_max)) || !same_bits(d, d0 * textbook_alpha) || !same_bits(alpha, textbook_alpha))
            return false;
        }
      }
  return true;
}

TEST(OnlineSoftmaxLaws, TheRaiseIsTheTextbookRaiseAndLeavesMaskedTilesAlone) {
  EXPECT_TRUE(is_the_raise_and_leaves_masked_tiles_alone(raise_running_max));
  // Broken: the factor of the difference alone, NaN when an empty state meets a fully masked tile.
  EXPECT_FALSE(is_the_raise_and_leaves_masked_tiles_alone([](float& m, float& d, float tile_max) {
    const float m_new = fmaxf(m, tile_max), alpha = expf(m - m_new);
    d *= alpha;
    m = m_new;
    return alpha;
  }));
  // Broken: the running max taken as the tile's, which forgets a larger max for a fully masked tile.
  EXPECT_FALSE(is_the_raise_and_leaves_masked_tiles_alone([](float& m, float& d, float tile_max) {
    const float alpha = rescale_factor(m, tile_max);
    d *= alpha;
    m = tile_max;
    return alpha;
  }));
}

// merge_in_order, the GPU split-K reduce's phased merge, is successive merges bit for bit (any NaN as any other), over
// any parts.
constexpr int kParts = 5;
using Parts = State[kParts];
using MergeInOrder = std::function<void(State&, const Parts&)>;

void merge_in_order_is_successive_merges(const MergeInOrder& merge_in_order) {
  const History h = *history();
  Parts parts;
  for (State& part : parts) part.init(kLanes);
  // Each part folds a random range or none; now and then a part's max is +inf and the start's NaN, where an empty
  // part's factors are NaN and only skipping it, as merge does, leaves the state alone.
  for (State& part : parts) {
    if (*rc::gen::inRange(0, 4) == 0) continue;
    const int begin = *rc::gen::inRange(0, h.size());
    part = fold_range(h, begin, *rc::gen::inRange(begin + 1, h.size() + 1), *rc::gen::inRange(1, 5));
    if (*rc::gen::inRange(0, 8) == 0) part.m = INFINITY;
  }
  State start;
  start.init(kLanes);
  if (*rc::gen::arbitrary<bool>()) start = fold_range(h, 0, h.size(), 2);
  if (*rc::gen::inRange(0, 8) == 0) start.m = NAN;
  State successive = start, phased = start;
  for (const State& part : parts) successive.merge(part, kLanes);
  merge_in_order(phased, parts);
  RC_ASSERT(identical_up_to_nan_payload(successive, phased));
}

RC_GTEST_PROP(OnlineSoftmaxLaws, MergeInOrderEqualsSuccessiveMerges, ()) {
  merge_in_order_is_successive_merges([](State& into, const Parts& parts) { into.merge_in_order(parts, kLanes); });
}

// merge_in_order's public steps, as the GPU reduce runs them, with the factors computed in reverse order.
RC_GTEST_PROP(OnlineSoftmaxLaws, MergeInOrderFromItsStepsEqualsSuccessiveMerges, ()) {
  merge_in_order_is_successive_merges([](State& into, const Parts& parts) {
    float part_max[kParts], before[kParts], self_factor[kParts], other_factor[kParts];
    for (int k = 0; k < kParts; ++k) part_max[k] = parts[k].m;
    const float merged_max = State::merge_maxima(into.m, part_max, before);
    for (int k = kParts - 1; k >= 0; --k) {
      other_factor[k] = State::merge_other_factor(before[k], part_max[k]);
      self_factor[k] = State::merge_self_factor(before[k], part_max[k]);
    }
    into.apply_merges_in_order(parts, self_factor, other_factor, merged_max, kLanes);
  });
}

TEST(OnlineSoftmaxLaws, APhasedMergeAgainstTheFinalMaxIsNotSuccessiveMerges) {
  // The tempting shortcut, every part rescaled straight to the overall max: equal in exact arithmetic, but not the
  // roundings the error model describes.
  const MergeInOrder final_max_merge = [](State& into, const Parts& parts) {
    float m = into.m;
    for (const State& part : parts) m = std::fmax(m, part.m);
    if (m == -INFINITY) return;
    const float self = rescale_factor(into.m, m);
    into.d *= self;
    for (float& o : into.o) o *= self;
    for (const State& part : parts) {
      const float f = rescale_factor(part.m, m);
      into.d += part.d * f;
      for (int j = 0; j < kLanes; ++j) into.o[j] += part.o[j] * f;
    }
    into.m = m;
  };
  EXPECT_TRUE(fails_on_some_case([&] { merge_in_order_is_successive_merges(final_max_merge); }));
}

// A merge that ignores the per-state max breaks the bounded laws on some history.
bool law_fails(void (*law)(const Merge&)) {
  return fails_on_some_case([law] { law(merge_ignoring_max); });
}

TEST(OnlineSoftmaxLaws, ABrokenMergeBreaksAssociativityWithinBound) {
  EXPECT_TRUE(law_fails(merge_associates_within_bound));
}
TEST(OnlineSoftmaxLaws, ABrokenMergeBreaksTiledFoldEquivalence) {
  EXPECT_TRUE(law_fails(tiled_fold_equals_merged_tiles));
}

// Identity and commutativity survive that bug, so they bite on theirs: a merge keeping its own max, and an empty
// max read as 0.
void merge_keeping_own_max(State& into, const State& other) {
  if (other.m == -INFINITY) return;
  const float factor = rescale_factor(other.m, into.m == -INFINITY ? other.m : into.m);
  into.d += other.d * factor;
  for (int j = 0; j < kLanes; ++j) into.o[j] += other.o[j] * factor;
  if (into.m == -INFINITY) into.m = other.m;
}

TEST(OnlineSoftmaxLaws, AnAsymmetricMergeBreaksCommutativity) {
  EXPECT_TRUE(fails_on_some_case([] { merge_commutes(merge_keeping_own_max); }));
}

TEST(OnlineSoftmaxLaws, AMergeTreatingTheEmptyMaxAsZeroBreaksTheIdentity) {
  // A common init bug: it rescales real states by exp(-m).
  const Merge zero_max_empty = [](State& into, const State& other) {
    State o = other;
    if (o.m == -INFINITY) o.m = 0;
    State self = into;
    if (self.m == -INFINITY) self.m = 0;
    const float m = std::fmax(self.m, o.m);
    const float fs = std::exp(self.m - m), fo = std::exp(o.m - m);
    into.d = self.d * fs + o.d * fo;
    for (int j = 0; j < kLanes; ++j) into.o[j] = self.o[j] * fs + o.o[j] * fo;
    into.m = m;
  };
  EXPECT_TRUE(fails_on_some_case([&] { empty_state_is_the_identity(zero_max_empty); }));
}

}  // namespace
}  // namespace pacheck
