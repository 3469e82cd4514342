// The exact oracle: each row reads its history through the block table, key by key (memory in proportion to the
// problem), and computes attention in double (problem.h's logit options, the causal mask and window, a
// max-subtracted softmax; a sink is one more key of value 0). With 53-bit arithmetic on inputs of at most 24
// significant bits its own error is ~1e-13 relative, far below any fp32 kernel's: it serves as the exact value.
// It also returns the condition quantities (ERROR_MODEL.md defines them) that error_model.h turns into a bound;
// they are centred on o_j because logit errors eps_t move o_j by sum_t p_t eps_t (v_tj - o_j) to first order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "problem/problem.h"

namespace pacheck {

// A sequence's history gathered through its table: keys and values [context_len][num_kv_heads][head_dim].
struct GatheredSequence {
  std::vector<float> keys;
  std::vector<float> values;
};
GatheredSequence gather_sequence(const Problem& problem, int sequence);

// Per row (query token, query head) facts the error model needs.
struct RowCondition {
  int sequence = 0;
  int context_len = 0;             // of the row's sequence
  int num_keys = 0;                // keys the row attends to: causal, and inside its window
  int first_key = 0;               // the first of them: 0, or its window's start
  bool has_sink = false;           // a sink joins the row's softmax (in none of the key counts)
  double max_logit_magnitude = 0;  // max_t L_t
  double max_spread = 0;           // max_t (m - s_t)
  // Running-max increases over the keys in position order, near-ties (within the logit error) included: any tiled
  // fold in that order rescales at most this often. A sink counts first and once more (joined first or last).
  int records = 0;

  // The chunks of `size` positions, cut from 0, holding a key the row sees (split-K's splits, or tiles from 0): at
  // least ceil(num_keys / size), as a window need not start on a chunk's start.
  int chunks(int size) const { return (first_key + num_keys - 1) / size - first_key / size + 1; }
};

// Per output element j (ERROR_MODEL.md, "Condition quantities"), [total_queries][num_query_heads][head_dim].
struct OracleResult {
  std::vector<double> out;                // o_j
  std::vector<double> abs_weighted_v;     // S_j = sum_t p_t |v_tj|
  std::vector<double> abs_sum_v;          // A_j = sum_t |v_tj|, unweighted (the underflow term)
  std::vector<double> centered_v;         // C_j = sum_t p_t |v_tj - o_j|
  std::vector<double> logit_centered_v;   // CL_j = sum_t p_t L_t |v_tj - o_j|
  std::vector<double> spread_centered_v;  // CM_j = sum_t p_t (m - s_t) |v_tj - o_j|
  std::vector<double> max_deviation_v;    // D_j = max_t |v_tj - o_j| over the row's keys and sink
  std::vector<RowCondition> rows;         // [total_queries][num_query_heads]
  // False when a logit or accumulator could overflow fp32, or a value some row reads is inf or NaN: such problems
  // (whose exact answer may not exist) lie outside every error model.
  bool fits_fp32 = true;

  // Per row and requested split size: the most records of any one split (cut from position 0, each folded from an
  // empty state without the sink), what a split-K kernel can rescale.
  std::vector<int> split_sizes;
  std::vector<int> split_records;  // [row][split size index]

  // Throws std::out_of_range if the oracle was not asked for this split size.
  int records_in_splits(std::size_t row, int split_size) const;
};

// Validates the problem (throws InvalidProblem), then computes the exact attention and the split record counts for
// each split size. Throws OracleLimitError, before allocating, beyond kOracleLimits. `progress`, if given, is
// called now and then with the rows done and in all.
using OracleProgress = std::function<void(std::size_t rows_done, std::size_t rows_total)>;
OracleResult run_oracle(const Problem& problem, const std::vector<int>& split_sizes = {},
                        const OracleProgress& progress = {});

// The largest problem the oracle computes; problem/CASE_FORMAT.md ("Errors and limits") gives each one's reason.
struct OracleLimits {
  std::int64_t context_keys = std::int64_t{1} << 22;      // keys of one sequence
  std::int64_t history_elements = std::int64_t{1} << 26;  // sum of context_len * num_kv_heads * head_dim
  std::int64_t output_elements = std::int64_t{1} << 23;   // rows times head_dim
  std::int64_t multiply_adds = std::int64_t{1} << 31;     // the logits': sum over rows of keys times head_dim
};
inline constexpr OracleLimits kOracleLimits{};

class OracleLimitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The coefficient a of a logit error a * u * L_t for an fp32 kernel computing the logit as problem.h states it:
// head_dim + 2 for the dot product and scale, the options' cost, 1 for an fp8 cache's K (ERROR_MODEL.md, "Logit
// options", "fp8 caches"). It also sets how near a tie the record counts count.
double fp32_logit_coefficient(const Problem& problem);
// What the logit options' fp32 arithmetic adds to it: 7 for a soft cap, 2 for ALiBi.
double fp32_logit_option_cost(const Problem& problem);

// Empty when the oracle takes the (valid) problem, else which limit it exceeds and by how much.
std::string oracle_limit_error(const Problem& problem);

}  // namespace pacheck
