// The online-softmax state: running max m, denominator d and weighted-V accumulator o, with fold and merge.
//
// One header (__host__ __device__) for the CPU variants and both CUDA kernels: the arithmetic the CPU suite proves
// is the arithmetic the GPU runs. `Capacity` lanes, `n` live: a whole head on the CPU, a thread's slice on the GPU
// (every thread of a row keeps the same (m, d)).
//
// Invariant over the keys folded so far: m = max_t s_t, d = sum_t exp(s_t - m), o[j] = sum_t exp(s_t - m) v_t[j];
// empty: m = -inf, d = 0, o = 0. Masked keys (score -inf) are skipped: weight exactly zero, and their V never
// multiplied, so a NaN in a masked slot cannot leak through 0 * NaN.
#pragma once

#include <math.h>

#if defined(__CUDACC__)
#define PACHECK_HOST_DEVICE __host__ __device__
#else
#define PACHECK_HOST_DEVICE
#endif

namespace pacheck {

// Each exp below selects its argument (exp(-inf) = 0 exactly) instead of branching, so a GPU thread evaluates its
// exps side by side.

// exp(m_old - m_new), re-expressing sums against a larger max: bit for bit `m_old == -inf ? 0 : expf(m_old -
// m_new)`, so 0, not NaN, when both are -inf.
PACHECK_HOST_DEVICE inline float rescale_factor(float m_old, float m_new) {
  return expf(m_old == -INFINITY ? -INFINITY : m_old - m_new);
}

// fold's steps on (m, d), for kernels that keep them apart from the lanes (a GPU warp computes a row's weights,
// other threads apply them to slices of V).

// The largest score of a tile; -inf when every key is masked.
PACHECK_HOST_DEVICE inline float online_softmax_tile_max(const float* scores, int count) {
  float tile_max = -INFINITY;
  for (int t = 0; t < count; ++t) tile_max = fmaxf(tile_max, scores[t]);
  return tile_max;
}

// Raises m to cover tile_max, re-expresses d against it, and returns the lanes' factor alpha. A fully masked tile
// (tile_max = -inf) leaves m, d and the lanes alone (alpha 1, or 0 for an empty state), so a kernel may rescale
// every row every tile without a branch. At m = +inf alpha is NaN one tile sooner; the output is NaN either way.
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

// The logit options' arithmetic (problem/problem.h), shared so every kernel rounds the same way
// (oracle/ERROR_MODEL.md, "Logit options", counts each rounding).

// Soft-capping, cap * tanh(s / cap): the quotient and the product round once each, tanhf is within 2 ulp.
PACHECK_HOST_DEVICE inline float soft_capped(float s, float cap) { return cap * tanhf(s / cap); }

// ALiBi, s + slope * (key - position): the offset is exact, the product and the sum round once each (or fused).
PACHECK_HOST_DEVICE inline float alibi_biased(float s, float slope, int key, int position) {
  return s + slope * static_cast<float>(key - position);
}

// The first key a query at `position` sees under a window of `window` keys (0: none), as Problem::first_visible_key.
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

  // The state of a sink alone (a logit with a zero value), bit for bit what fold makes of it; -inf: empty.
  PACHECK_HOST_DEVICE void init_sink(float sink, int n) {
    init(n);
    if (sink != -INFINITY) {
      m = sink;
      d = 1.0f;
    }
  }

  // Folds `count` keys with scores[t] (-inf = masked) and values value_row(t)[j]. The tile's max comes first, so the
  // state is rescaled at most once per tile. Written as the step functions, in this order, so a kernel spreading
  // the steps over threads performs exactly these operations.
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

  // Merges the state of a disjoint key range into this one; the empty state is the identity.
  PACHECK_HOST_DEVICE void merge(const OnlineSoftmaxState& other, int n) {
    if (other.m == -INFINITY) return;
    const float m_new = fmaxf(m, other.m);
    const float self_factor = rescale_factor(m, m_new);
    const float other_factor = rescale_factor(other.m, m_new);
    d = d * self_factor + other.d * other_factor;
    for (int j = 0; j < n; ++j) o[j] = o[j] * self_factor + other.o[j] * other_factor;
    m = m_new;
  }

  // Merges parts[0 .. Parts) in order: the operations of Parts successive merge() calls, so bit for bit the same
  // state on the host (on a GPU, up to FMA contraction, which the error model allows). Maxima and factors come
  // before any sum, so a GPU thread evaluates the 2 x Parts exps side by side, not as a chain. The steps are public
  // for the GPU reduce (part k's factors in lane k): merge_maxima, merge_{self,other}_factor, apply_merges_in_order.
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

  // The running maxima of an in-order merge into a state of max m: before[k] as part k joins; returns the last.
  // An empty part (max -inf) leaves the max alone, as merge skips it.
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
  // merge's factors for a part joining a state of max `before`: the state's and the part's (unused for an empty part).
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
