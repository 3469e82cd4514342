// cpu_gather: the simplest reference kernel. Gathers the history into a contiguous float buffer, then one
// ordinary softmax (max, exp, sum, normalise) and a weighted sum of V, all in fp32.
#include <algorithm>
#include <cmath>
#include <vector>

#include "variants/cpu_grid.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

// An fp8 cache's gathered history in fp32: every element times its KV head's scale, one rounding each.
void dequantise(const Problem& p, GatheredSequence& g) {
  const std::size_t d = p.head_dim, row = d * p.num_kv_heads;
  for (std::size_t e = 0; e < g.keys.size(); ++e) {
    const int kv_head = static_cast<int>(e % row / d);
    g.keys[e] *= p.fp8_cache->k_scale(kv_head);
    g.values[e] *= p.fp8_cache->v_scale(kv_head);
  }
}

class CpuGather final : public Variant {
 public:
  std::string name() const override { return "cpu_gather"; }
  std::string description() const override { return "gather into a contiguous buffer, one fp32 softmax"; }
  Capabilities capabilities() const override { return cpu_capabilities(); }
  Output run(const Problem& p, const Knobs&) const override {
    Output out(p.output_size());
    const int d = p.head_dim;
    std::vector<GatheredSequence> gathered;
    for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s) {
      gathered.push_back(gather_sequence(p, s));
      if (p.fp8_cache) dequantise(p, gathered.back());
    }
    std::vector<float> weights;
    for_each_row(p, [&](const RowProgram& row) {
      const GatheredSequence& g = gathered[row.sequence];
      const auto kv = [&](int t) { return (static_cast<std::size_t>(t) * p.num_kv_heads + row.kv_head) * d; };
      // The row's keys first_key ..= position; weights[i] is key first_key + i's.
      const int first = row.first_key, n = row.position + 1 - first;
      weights.resize(n);
      for (int i = 0; i < n; ++i)
        weights[i] = logit_fp32(p, row, &p.queries[row.offset], &g.keys[kv(first + i)], first + i);
      // The sink joins the max and the sum with no value (-inf: weight exactly 0).
      const float sink = p.sink(row.query_head);
      const float m = std::max(*std::max_element(weights.begin(), weights.end()), sink);
      float sum = sink == -INFINITY ? 0.0f : std::exp(sink - m);
      for (float& w : weights) sum += (w = std::exp(w - m));
      for (float& w : weights) w /= sum;
      for (int j = 0; j < d; ++j) {
        float acc = 0.0f;
        for (int i = 0; i < n; ++i) acc += weights[i] * g.values[kv(first + i) + j];
        out[row.offset + j] = round_to_dtype_f(acc, p.dtype);
      }
    });
    return out;
  }
  ErrorModel error_model(const Problem& p, const OracleResult& oracle, std::size_t row, const Knobs&) const override {
    ErrorModel m;
    const RowCondition& c = oracle.rows[row];
    m.logit_coefficient = fp32_logit_coefficient(p);
    m.weight_error = 3;  // expf (2u) and the division by the sum (u)
    // The sum's roundings scale every weight alike (the sink one more term); the weighted sum's adds and product,
    // and an fp8 cache's V dequantisation.
    m.accumulation_chain = 2.0 * c.num_keys + c.has_sink + 2 + (p.fp8_cache ? 1 : 0);
    return m;
  }
};

PACHECK_REGISTER_VARIANT(CpuGather);

}  // namespace
}  // namespace pacheck
