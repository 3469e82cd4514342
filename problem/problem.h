// The paged-attention problem: the vocabulary the oracle, the variants, the properties and the reports share.
// A KV pool holds num_blocks blocks of block_size token slots, each one key (and value) per KV head. Key t of a
// sequence lives in block block_table[t / block_size], slot t % block_size. Its num_queries query tokens are its
// last positions: query i sits at context_len - num_queries + i and attends causally to keys 0 ..= that position
// (num_queries = 1: decode; = context_len: prefill; between: a continuation). Logit options are off by default.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "problem/dtype.h"

namespace pacheck {

struct Sequence {
  // Entries past those the context needs are padding kernels never read: any value, invalid ids included.
  std::vector<std::int32_t> block_table;
  int context_len = 0;
  int num_queries = 0;

  int first_query_position() const { return context_len - num_queries; }
};

enum class Mode : std::uint8_t { decode, prefill, continuation };
const char* mode_name(Mode mode);

// What serving kernels do to the logits beyond the scale, in this order, for query head h at position pos and
// key t <= pos (ERROR_MODEL.md, "Logit options": what each costs):
//   s_t = scale * q . k_t                                   the plain logit
//   s_t = soft_cap * tanh(s_t / soft_cap)                   soft-capping (Gemma 2), when soft_cap is set
//   s_t = s_t + alibi_slopes[h] * (t - pos)                 ALiBi, when alibi_slopes is set: older keys lose
//   key t is visible only if pos - t < window               a sliding window: the last `window` positions
//   softmax over the visible keys and one more logit, sinks[h], that carries no value (an attention sink)
// FlashInfer's window_left is window - 1; vLLM's sliding_window and Mistral's are window itself.
struct LogitOptions {
  std::optional<float> soft_cap;    // finite and positive
  std::optional<int> window;        // at least 1
  std::vector<float> alibi_slopes;  // one finite slope per query head; empty: none
  std::vector<float> sinks;         // one logit per query head, finite or -inf (-inf: no sink); empty: none

  bool any() const { return soft_cap || window || !alibi_slopes.empty() || !sinks.empty(); }
};

// An fp8 KV cache (vLLM's kv_cache_dtype fp8_e4m3 / fp8_e5m2): the pools hold fp8 values, read as k_pool * k_scale
// and v_pool * v_scale, one scale per tensor or per KV head. Queries and output keep the problem's dtype.
struct Fp8Cache {
  Fp8Format format = Fp8Format::e4m3;
  std::vector<float> k_scales;  // 1 (per tensor) or num_kv_heads values, finite and positive
  std::vector<float> v_scales;  // likewise

  float k_scale(int kv_head) const { return k_scales.size() == 1 ? k_scales[0] : k_scales[kv_head]; }
  float v_scale(int kv_head) const { return v_scales.size() == 1 ? v_scales[0] : v_scales[kv_head]; }
};

struct Problem {
  int num_query_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int block_size = 0;
  int num_blocks = 0;
  DType dtype = DType::f32;
  std::optional<float> explicit_scale;  // the softmax scale; 1/sqrt(head_dim) when absent
  LogitOptions options;
  std::optional<Fp8Cache> fp8_cache;  // absent: the pools hold values of `dtype`, read as they are

  std::vector<Sequence> sequences;
  // Every value is exactly representable in dtype (the pools: in an fp8 cache's format; validate checks).
  std::vector<float> k_pool;   // [num_blocks][block_size][num_kv_heads][head_dim]
  std::vector<float> v_pool;   // same shape as k_pool
  std::vector<float> queries;  // [total_queries][num_query_heads][head_dim], sequences in order

  float scale() const;
  int gqa_ratio() const { return num_query_heads / num_kv_heads; }
  // Query heads are grouped, gqa_ratio consecutive heads per KV head.
  int kv_head_of(int query_head) const { return query_head / gqa_ratio(); }
  int total_queries() const;
  // Row of the first query of sequence s in `queries` (and in the output).
  int query_row_offset(int sequence) const;
  Mode mode_of(int sequence) const;

  std::size_t pool_size() const;
  std::size_t output_size() const { return static_cast<std::size_t>(total_queries()) * num_query_heads * head_dim; }
  // Offset of the key/value vector (head_dim floats) of a sequence's logical position, KV head.
  std::size_t kv_offset(int sequence, int position, int kv_head) const;
  std::size_t kv_offset_physical(int block, int slot, int kv_head) const;
  // Offset of the query vector (head_dim floats) of a sequence's new token, query head.
  std::size_t query_offset(int sequence, int token, int query_head) const;

  // The first key a query at `position` sees: 0, or the start of its sliding window.
  int first_visible_key(int position) const {
    return options.window && position + 1 > *options.window ? position + 1 - *options.window : 0;
  }
  // The sink logit of query head h; -inf without sinks.
  float sink(int query_head) const;
};

// The output: [total_queries][num_query_heads][head_dim], values rounded to the problem's dtype.
using Output = std::vector<float>;

// Every inconsistency of the problem, each message naming the field and the values; empty when valid.
std::vector<std::string> validation_errors(const Problem& problem);

class InvalidProblem : public std::invalid_argument {
 public:
  explicit InvalidProblem(const std::vector<std::string>& errors);
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::vector<std::string> errors_;
};

// Throws InvalidProblem listing every error.
void validate(const Problem& problem);

// The serving features used, in a fixed order ("soft_cap window alibi sinks fp8_e4m3"), or "plain": what reports
// group errors by.
std::string feature_names(const Problem& problem);

// A readable summary: shapes, dtype, scale, and per sequence its mode, lengths and the referenced table.
std::string describe(const Problem& problem);

}  // namespace pacheck
