// The exact oracle.
//
// Each row reads its sequence's history through the block table, key by key, as the kernels do (no gathered copy:
// memory stays in proportion to the problem, not to its context times its heads); attention is computed in double
// precision (scores, the logit options of problem.h, max-subtracted softmax, weighted sum of V, the causal mask
// and window per query position). A sink enters every sum below as one more key whose value is 0. With 53-bit arithmetic on inputs of at most 24 significant bits the oracle's own error is
// ~1e-13 relative, far below any fp32 kernel's, so it serves as the exact value.
//
// Besides the result the oracle returns the condition quantities that the error model (error_model.h) turns into
// a per-element bound. For output element j of a row (query token, query head) with softmax weights p_t, logits
// s_t, row max m and logit magnitudes L_t = scale * sum_i |q_i k_ti|:
//   S_j  = sum_t p_t |v_tj|                  how much cancellation the weighted sum of V can suffer
//   C_j  = sum_t p_t |v_tj - o_j|            the softmax's sensitivity to a uniform logit perturbation
//   CL_j = sum_t p_t L_t |v_tj - o_j|        ... to logit errors that scale with the logit's magnitude
//   CM_j = sum_t p_t (m - s_t) |v_tj - o_j|  ... to errors that scale with the distance from the max
// The first-order perturbation of o_j by logit errors eps_t is sum_t p_t eps_t (v_tj - o_j) (the mean of eps
// cancels because sum_t p_t (v_tj - o_j) = 0), which is why the centred quantities appear.
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
  int context_len = 0;              // of the row's sequence
  int num_keys = 0;                 // keys the row attends to: causal, and inside its window
  int first_key = 0;                // the first of them: 0, or its window's start
  bool has_sink = false;            // a sink joins the row's softmax (counted in none of the key counts)
  double max_logit_magnitude = 0;   // max_t L_t
  double max_spread = 0;            // max_t (m - s_t)
  // Strict running-max increases when the row's keys are visited in position order, counting near-ties (within
  // the logit error) as increases. Any tiled fold in position order rescales at most this often. A sink is
  // visited first and counts once more, so a kernel may join it first or last.
  int records = 0;

  // The chunks of `size` positions, cut from position 0, that hold a key the row sees: a split-K kernel's splits,
  // or the tiles of a kernel whose tiles start at position 0 (at least ceil(num_keys / size), as a window's start
  // need not fall on a chunk's).
  int chunks(int size) const { return (first_key + num_keys - 1) / size - first_key / size + 1; }
};

struct OracleResult {
  std::vector<double> out;                // [total_queries][num_query_heads][head_dim]
  std::vector<double> abs_weighted_v;     // S_j
  std::vector<double> abs_sum_v;          // A_j = sum_t |v_tj| over the row's keys, unweighted (the underflow term)
  std::vector<double> centered_v;         // C_j
  std::vector<double> logit_centered_v;   // CL_j
  std::vector<double> spread_centered_v;  // CM_j
  std::vector<RowCondition> rows;         // [total_queries][num_query_heads]
  // False when some logit or accumulator could overflow fp32 (|logit| or num_keys * |v| near FLT_MAX), or when a
  // value some row reads (q, or K and V of a referenced slot) is inf or NaN: fp32 kernels are not expected to be
  // exact there (the exact answer may not even exist), so such problems lie outside every variant's error model.
  bool fits_fp32 = true;

  // For each requested split size, per row: the largest record count of any one split when the row's positions
  // are cut into splits of that many keys from position 0, each split's visible keys folded from an empty state
  // without the sink (what a split-K kernel can rescale).
  std::vector<int> split_sizes;
  std::vector<int> split_records;  // [row][split size index]

  // Throws std::out_of_range if the oracle was not asked for this split size.
  int records_in_splits(std::size_t row, int split_size) const;
};

// Validates the problem (throws InvalidProblem) and computes the exact attention, plus the split record counts
// for each split size a split-K variant will use.
// Throws OracleLimitError, before allocating anything, for a problem beyond kOracleLimits.
//
// `progress`, when given, is called now and then with the rows done and the rows in all (a long case's progress).
using OracleProgress = std::function<void(std::size_t rows_done, std::size_t rows_total)>;
OracleResult run_oracle(const Problem& problem, const std::vector<int>& split_sizes = {},
                        const OracleProgress& progress = {});

// The largest problem the oracle computes (problem/CASE_FORMAT.md, "Errors and limits"): beyond these a case costs
// minutes and gigabytes in double precision, far past any test case's worth.
struct OracleLimits {
  // Keys of one sequence: 2^22, four million, past every serving context a test needs.
  std::int64_t context_keys = std::int64_t{1} << 22;
  // K (and V) elements of every sequence's history, sum of context_len * num_kv_heads * head_dim: 2^26, so that a
  // variant that gathers the history (cpu_gather) holds at most 512 MB of it.
  std::int64_t history_elements = std::int64_t{1} << 26;
  // Output elements (rows times head_dim): the result holds six doubles per element, 2^23 of them 400 MB.
  std::int64_t output_elements = std::int64_t{1} << 23;
  // Multiply-adds of the logits, sum over rows of keys times head_dim: 2^31, seconds in double.
  std::int64_t multiply_adds = std::int64_t{1} << 31;
};
inline constexpr OracleLimits kOracleLimits{};

class OracleLimitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The coefficient a of a logit error a * u * L_t (error_model.h) for an fp32 kernel that computes the logit as
// problem.h states it: head_dim + 2 for the dot product and the scale, 7 more for a soft cap, 2 more for ALiBi
// (ERROR_MODEL.md, "Logit options") and 1 more for an fp8 cache's K, dequantised in fp32 ("fp8 caches"). It also
// sets how near a tie the record counts treat as a record.
double fp32_logit_coefficient(const Problem& problem);
// What the logit options alone add to that coefficient (7 for a soft cap, 2 for ALiBi): the part of any kernel's
// logit error that its fp32 option arithmetic, after the dot product and the scale, contributes.
double fp32_logit_option_cost(const Problem& problem);

// Empty when the oracle takes the problem, else which limit it exceeds and by how much (the problem must be valid).
std::string oracle_limit_error(const Problem& problem);

}  // namespace pacheck
