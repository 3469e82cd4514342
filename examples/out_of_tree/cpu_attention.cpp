// my_cpu_attention: a kernel project's fp32 paged attention on the CPU, one online-softmax pass per query row and
// head, registered with pacheck as an external variant that declares the stock fp32_online_softmax model.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fp32_variant.h"

namespace {

// The KV cache as the project lays it out: K and V pools of [num_blocks][block_size][kv_heads][head_dim] floats.
struct KvCache {
  const float* k;
  const float* v;
  int block_size;
  int kv_heads;
  int head_dim;
};

// One query row: attends to keys 0..=position through its block table, keeping a running max, the softmax
// denominator and the weighted sum of V, both rescaled whenever the max grows.
void attend(const KvCache& cache, const std::int32_t* block_table, int position, int kv_head, const float* query,
            float scale, float* out) {
  const int d = cache.head_dim;
  std::vector<float> weighted_sum(d, 0.0f);
  float running_max = -INFINITY;
  float denominator = 0.0f;
  for (int t = 0; t <= position; ++t) {
    const std::int64_t block = block_table[t / cache.block_size];
    const std::size_t slot =
        static_cast<std::size_t>((block * cache.block_size + t % cache.block_size) * cache.kv_heads + kv_head);
    const float* key = cache.k + slot * d;
    const float* value = cache.v + slot * d;
    float score = 0.0f;
    for (int i = 0; i < d; ++i) score += query[i] * key[i];
    score *= scale;
    const float new_max = std::max(running_max, score);
    const float rescale = running_max == -INFINITY ? 0.0f : std::exp(running_max - new_max);
    const float weight = std::exp(score - new_max);
    denominator = denominator * rescale + weight;
    for (int i = 0; i < d; ++i) weighted_sum[i] = weighted_sum[i] * rescale + weight * value[i];
    running_max = new_max;
  }
  for (int i = 0; i < d; ++i) out[i] = weighted_sum[i] / denominator;
}

// pacheck's problem in, the kernel over every (sequence, query token, query head), the output out.
pacheck::Output run(const pacheck::Problem& p, const pacheck::Knobs&) {
  pacheck::Output out(p.output_size());
  const KvCache cache{p.k_pool.data(), p.v_pool.data(), p.block_size, p.num_kv_heads, p.head_dim};
  for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s) {
    const pacheck::Sequence& sequence = p.sequences[s];
    for (int token = 0; token < sequence.num_queries; ++token)
      for (int head = 0; head < p.num_query_heads; ++head) {
        const std::size_t at = p.query_offset(s, token, head);  // the output row has the query's offset
        attend(cache, sequence.block_table.data(), sequence.first_query_position() + token, p.kv_head_of(head),
               &p.queries[at], p.scale(), &out[at]);
      }
  }
  return out;
}

[[maybe_unused]] const pacheck::Variant& registered = pacheck::register_external_variant(fp32_online_softmax_variant(
    "my_cpu_attention", "fp32 paged attention on the CPU, one online-softmax pass per query row and head", run));

}  // namespace
