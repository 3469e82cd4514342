// The online-softmax state: running max m, denominator d and weighted-V accumulator o, with fold and merge.
//
// One header for every kernel: the CPU streaming and split-K variants and both CUDA kernels use it, so the
// arithmetic the CPU suite proves is the arithmetic the GPU runs. It compiles as plain C++ and as CUDA
// (__host__ __device__). A state holds `Capacity` accumulator lanes; `n` of them are live. On the CPU one state
// holds a whole head (Capacity >= head_dim); on the GPU each thread holds its slice of the head, and the (m, d)
// pair is kept redundantly by every thread of the row, which all see the same scores.
//
// Invariant: the state represents the keys folded so far as
//   m = max_t s_t,   d = sum_t exp(s_t - m),   o[j] = sum_t exp(s_t - m) * v_t[j],
// and the empty state is m = -inf, d = 0, o = 0. Masked keys carry the score -inf and are skipped outright: their
// weight is exactly zero and their V is never multiplied, so a NaN or Inf in a masked slot cannot leak through
// 0 * NaN.
#pragma once

#include <math.h>

#if defined(__CUDACC__)
#define PACHECK_HOST_DEVICE __host__ __device__
#else
#define PACHECK_HOST_DEVICE
#endif

namespace pacheck {

// Each exp below is chosen on its argument (exp(-inf) = 0 exactly) rather than guarded by a branch: a GPU thread
// then evaluates its several exps side by side, where a branch around each would run them one after another.

// exp(m_old - m_new), the factor that re-expresses a state's sums against a larger max. When nothing has been
// folded yet (m_old = -inf) the factor is 0 and, importantly, is not NaN when m_new is -inf too: the value of
// `m_old == -inf ? 0 : expf(m_old - m_new)`, bit for bit.
PACHECK_HOST_DEVICE inline float rescale_factor(float m_old, float m_new) {
  return expf(m_old == -INFINITY ? -INFINITY : m_old - m_new);
}

// The steps of fold on the row statistics, for kernels that keep a row's (m, d) apart from its accumulator lanes
// (a GPU block computes a row's weights in one warp and applies them to slices of V in other threads).

// The largest score of a tile; -inf when every key is masked.
PACHECK_HOST_DEVICE inline float online_softmax_tile_max(const float* scores, int count) {
  float tile_max = -INFINITY;
  for (int t = 0; t < count; ++t) tile_max = fmaxf(tile_max, scores[t]);
  return tile_max;
}

// Raises the running max m to cover a tile whose largest score is tile_max and re-expresses the denominator d
// against it; returns the factor alpha by which the accumulator lanes must be multiplied. A tile fully masked for
// the row (tile_max = -inf) leaves m and d as they are, and its factor is 1, or 0 for a state with max -inf (whose
// sums are 0, or NaN where only NaN scores were folded), so that scaling the accumulator by it changes nothing
// either: a kernel may rescale every row every tile, with no branch on whether the tile counts. The exception is a
// max of +inf (an infinite score): the factor is NaN, as it is at the next tile that is not fully masked, so a sum
// that was still finite (a GPU thread's share without the infinite key) becomes NaN one tile sooner; the row's
// output is NaN either way.
PACHECK_HOST_DEVICE inline float raise_running_max(float& m, float& d, float tile_max) {
  const float m_new = fmaxf(m, tile_max);
  const float alpha = rescale_factor(m, m_new);
  d *= alpha;
  m = m_new;
  return alpha;
}

// The weight of a key against the running max m: exactly 0 for a masked key (score -inf), whatever m is.
PACHECK_HOST_DEVICE inline float key_weight(float score, float m) {
  return expf(score == -INFINITY ? -INFINITY : score - m);
}

// The logit options' arithmetic (problem/problem.h), for the CPU variants and both CUDA kernels alike, so that they
// round the same way (oracle/ERROR_MODEL.md, "Logit options", counts each rounding).

// Soft-capping, cap * tanh(s / cap): the quotient and the product round once each, tanhf is within 2 ulp.
PACHECK_HOST_DEVICE inline float soft_capped(float s, float cap) { return cap * tanhf(s / cap); }

// ALiBi, s + slope * (key - position): the offset is an exact integer (older keys lose), the product and the sum
// round once each (or once together, fused).
PACHECK_HOST_DEVICE inline float alibi_biased(float s, float slope, int key, int position) {
  return s + slope * static_cast<float>(key - position);
}

// The first key a query at `position` sees under a sliding window of `window` keys (0: no window), as
// Problem::first_visible_key.
PACHECK_HOST_DEVICE constexpr int window_start(int position, int window) {
  return window > 0 && position + 1 > window ? position + 1 - window : 0;
}

template <int Capacity>
struct OnlineSoftmaxState {
  float m;
  float d;
  float o[Capacity];

  PACHECK_HOST_DEVICE void init(int n) {
    m = -INFINITY;
    d = 0.0f;
    for (int j = 0; j < n; ++j) o[j] = 0.0f;
  }

  // The state of a sink alone (a logit whose value is the zero vector): what fold makes of the empty state and the
  // sink, bit for bit. A sink of -inf is no sink: the empty state.
  PACHECK_HOST_DEVICE void init_sink(float sink, int n) {
    init(n);
    if (sink != -INFINITY) {
      m = sink;
      d = 1.0f;
    }
  }

  // Folds `count` keys with scores[t] (-inf = masked) and value rows value_row(t) (this state's n lanes of key
  // t's V: a float pointer, or anything whose [j] reads lane j as a float). The max is taken over the whole tile
  // first, so the state is rescaled at most once per tile: a tile of one key is the classic per-key online
  // softmax. Written as the step functions below, in this order, so that a kernel which spreads the steps over
  // threads performs exactly these operations.
  template <typename ValueRow>
  PACHECK_HOST_DEVICE void fold(const float* scores, int count, ValueRow value_row, int n) {
    const float tile_max = online_softmax_tile_max(scores, count);
    if (tile_max == -INFINITY) return;  // a fully masked tile changes nothing
    scale_lanes(raise_running_max(m, d, tile_max), n);
    for (int t = 0; t < count; ++t) {
      if (scores[t] == -INFINITY) continue;
      const float p = key_weight(scores[t], m);
      d += p;
      add_weighted(p, value_row(t), n);
    }
  }

  // o *= alpha: the accumulator half of a rescale (raise_running_max does the (m, d) half).
  PACHECK_HOST_DEVICE void scale_lanes(float alpha, int n) {
    for (int j = 0; j < n; ++j) o[j] *= alpha;
  }

  // o += p * v for one unmasked key of weight p (the caller adds p to the denominator).
  template <typename Lanes>
  PACHECK_HOST_DEVICE void add_weighted(float p, const Lanes& v, int n) {
    for (int j = 0; j < n; ++j) o[j] += p * v[j];
  }

  // Combines the keys of `other` into this state: the partial states of disjoint key ranges merge into the
  // state of their union. The empty state is the identity.
  PACHECK_HOST_DEVICE void merge(const OnlineSoftmaxState& other, int n) {
    if (other.m == -INFINITY) return;
    const float m_new = fmaxf(m, other.m);
    const float self_factor = rescale_factor(m, m_new);
    const float other_factor = rescale_factor(other.m, m_new);
    d = d * self_factor + other.d * other_factor;
    for (int j = 0; j < n; ++j) o[j] = o[j] * self_factor + other.o[j] * other_factor;
    m = m_new;
  }

  // Merges parts[0], ..., parts[Parts - 1] into this state, in that order: the same operations on the same
  // values as Parts successive merge() calls, so the same state bit for bit on the host (on a GPU, up to which
  // product of a * b + c * d the compiler fuses into an FMA; the error model allows either). The running maxima
  // and every part's two factors are computed before any sum is touched, so that a GPU thread evaluates the
  // 2 x Parts exps side by side instead of as one chain of merges, each waiting on the last (the split-K reduce
  // is bound by that chain). Its three steps are public for code that computes the factors elsewhere: the GPU
  // reduce spreads a batch's exps over a warp's lanes (merge_maxima, then part k's merge_self_factor and
  // merge_other_factor in lane k, then apply_merges_in_order).
  template <int Parts>
  PACHECK_HOST_DEVICE void merge_in_order(const OnlineSoftmaxState (&parts)[Parts], int n) {
    float part_max[Parts], before[Parts], self_factor[Parts], other_factor[Parts];
    for (int k = 0; k < Parts; ++k) part_max[k] = parts[k].m;
    const float merged_max = merge_maxima(m, part_max, before);
    for (int k = 0; k < Parts; ++k) {
      self_factor[k] = merge_self_factor(before[k], part_max[k]);
      other_factor[k] = merge_other_factor(before[k], part_max[k]);
    }
    apply_merges_in_order(parts, self_factor, other_factor, merged_max, n);
  }

  // The running max of an in-order merge of parts with maxima part_max[0..Parts) into a state of max m: before[k]
  // is the max the state has when part k joins it; returns the max after the last part. An empty part (max -inf)
  // leaves the max alone, as merge skips it.
  template <int Parts>
  PACHECK_HOST_DEVICE static float merge_maxima(float m, const float (&part_max)[Parts], float (&before)[Parts]) {
    float running_max = m;
    for (int k = 0; k < Parts; ++k) {
      before[k] = running_max;
      const float m_new = fmaxf(running_max, part_max[k]);
      running_max = part_max[k] == -INFINITY ? running_max : m_new;
    }
    return running_max;
  }
  // The factors of merge's step for a part of max part_max joining a state of max `before`: the state's and the
  // part's. (For an empty part they are whatever they are: apply_merges_in_order skips that part.)
  PACHECK_HOST_DEVICE static float merge_self_factor(float before, float part_max) {
    return rescale_factor(before, fmaxf(before, part_max));
  }
  PACHECK_HOST_DEVICE static float merge_other_factor(float before, float part_max) {
    return rescale_factor(part_max, fmaxf(before, part_max));
  }
  // Merge's sums for each part in order, given its factors, then the max merge_maxima returned.
  template <int Parts>
  PACHECK_HOST_DEVICE void apply_merges_in_order(const OnlineSoftmaxState (&parts)[Parts],
                                                 const float (&self_factor)[Parts], const float (&other_factor)[Parts],
                                                 float merged_max, int n) {
    for (int k = 0; k < Parts; ++k) {
      const bool empty = parts[k].m == -INFINITY;  // the empty state is the identity, as in merge
      const float d_new = d * self_factor[k] + parts[k].d * other_factor[k];
      d = empty ? d : d_new;
      for (int j = 0; j < n; ++j) {
        const float o_new = o[j] * self_factor[k] + parts[k].o[j] * other_factor[k];
        o[j] = empty ? o[j] : o_new;
      }
    }
    m = merged_max;
  }

  // The attention output o / d. Only meaningful once a key has been folded (d >= 1 then).
  PACHECK_HOST_DEVICE void normalize(float* out, int n) const {
    for (int j = 0; j < n; ++j) out[j] = o[j] / d;
  }
};

}  // namespace pacheck
