// The exact oracle (oracle.h): attention in double over the history read through the block tables.
#include "oracle/oracle.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace pacheck {

GatheredSequence gather_sequence(const Problem& p, int sequence) {
  const Sequence& seq = p.sequences[sequence];
  const std::size_t row = static_cast<std::size_t>(p.num_kv_heads) * p.head_dim;
  GatheredSequence g;
  g.keys.resize(row * seq.context_len);
  g.values.resize(row * seq.context_len);
  for (int t = 0; t < seq.context_len; ++t) {
    // A slot holds all KV heads contiguously: copied whole.
    const std::size_t src = p.kv_offset(sequence, t, 0);
    std::memcpy(&g.keys[row * t], &p.k_pool[src], row * sizeof(float));
    std::memcpy(&g.values[row * t], &p.v_pool[src], row * sizeof(float));
  }
  return g;
}

namespace {

// A row's logits in double and magnitudes L_t, entry i for key first + i; slots[t] is key t's pool offset. The
// options apply in problem.h's order, exactly (ALiBi, the scale) or within a few double ulps (tanh).
void row_logits(const Problem& p, const std::vector<std::size_t>& slots, const float* q, int query_head, int first,
                int position, std::vector<double>& logits, std::vector<double>& magnitudes) {
  const int d = p.head_dim;
  const int kv_head = p.kv_head_of(query_head);
  const double scale = p.scale();
  const LogitOptions& o = p.options;
  const int count = position - first + 1;
  // An fp8 cache's K is k_pool * k_scale: exact in double (4 + 24 significant bits).
  const double k_scale = p.fp8_cache ? p.fp8_cache->k_scale(kv_head) : 1.0;
  logits.resize(count);
  magnitudes.resize(count);
  for (int i = 0; i < count; ++i) {
    const int t = first + i;
    const float* k = &p.k_pool[slots[t] + static_cast<std::size_t>(kv_head) * d];
    double dot = 0, mag = 0;
    for (int e = 0; e < d; ++e) {
      const double prod = static_cast<double>(q[e]) * (k[e] * k_scale);  // exact: 24+28 bits
      dot += prod;
      mag += std::fabs(prod);
    }
    double logit = scale * dot;
    // An infinite dot product (an e5m2 cache's inf) is infinite in fp32 too: a kernel's logit is exact (or exactly
    // +-cap), so no magnitude, which would make the row's bounds NaN.
    if (std::isinf(dot)) mag = 0;
    if (o.soft_cap) logit = *o.soft_cap * std::tanh(logit / *o.soft_cap);
    // A kernel rounds the bias's product and sum: they enter the magnitude.
    const double bias = o.alibi_slopes.empty() ? 0.0 : static_cast<double>(o.alibi_slopes[query_head]) * (t - position);
    logits[i] = logit + bias;
    magnitudes[i] = std::fabs(scale) * mag + std::fabs(bias);
  }
}

// Near-ties within twice the fp32 logit error count as records: a kernel's rounded logits may order them either way.
double record_tolerance(double max_logit_magnitude, double logit_coefficient) {
  return 2 * logit_coefficient * std::ldexp(1.0, -24) * max_logit_magnitude + 64 * DBL_EPSILON;
}

int count_records(const std::vector<double>& logits, int begin, int end, double tolerance) {
  int records = 0;
  double running = -std::numeric_limits<double>::infinity();
  for (int t = begin; t < end; ++t) {
    if (t > begin && logits[t] > running - tolerance) ++records;
    running = std::max(running, logits[t]);
  }
  return records;
}

}  // namespace

double fp32_logit_option_cost(const Problem& p) {
  const LogitOptions& o = p.options;
  return (o.soft_cap ? 7 : 0) + (o.alibi_slopes.empty() ? 0 : 2);
}

double fp32_logit_coefficient(const Problem& p) {
  return p.head_dim + 2 + fp32_logit_option_cost(p) + (p.fp8_cache ? 1 : 0);
}

std::string oracle_limit_error(const Problem& p) {
  // In double: sums of products of 31-bit sizes cannot overflow.
  double history = 0, rows = 0, multiply_adds = 0;
  int longest = 0;
  for (const Sequence& s : p.sequences) {
    longest = std::max(longest, s.context_len);
    history += static_cast<double>(s.context_len) * p.num_kv_heads * p.head_dim;
    rows += static_cast<double>(s.num_queries) * p.num_query_heads;
    // Row i sees first_query_position + i + 1 keys.
    const double first = s.first_query_position() + 1.0, last = s.context_len;
    multiply_adds += (first + last) * s.num_queries / 2 * p.num_query_heads * p.head_dim;
  }
  const OracleLimits& limit = kOracleLimits;
  const auto over = [](const char* what, double value, std::int64_t most) {
    std::ostringstream m;
    m.precision(4);
    m << "the exact oracle's limit: " << what << " is " << value << ", over " << most
      << " (problem/CASE_FORMAT.md, \"Errors and limits\")";
    return m.str();
  };
  if (longest > limit.context_keys) return over("the longest context (keys)", longest, limit.context_keys);
  if (history > limit.history_elements)
    return over("the history (sum of context_len * num_kv_heads * head_dim)", history, limit.history_elements);
  if (rows * p.head_dim > limit.output_elements)
    return over("the output (rows * head_dim elements)", rows * p.head_dim, limit.output_elements);
  if (multiply_adds > limit.multiply_adds)
    return over("the logits' multiply-adds (sum over rows of keys * head_dim)", multiply_adds, limit.multiply_adds);
  return "";
}

OracleResult run_oracle(const Problem& p, const std::vector<int>& split_sizes, const OracleProgress& progress) {
  validate(p);
  for (int size : split_sizes)
    if (size <= 0) throw std::invalid_argument("split size must be positive, got " + std::to_string(size));
  if (const std::string error = oracle_limit_error(p); !error.empty()) throw OracleLimitError(error);
  const int d = p.head_dim;
  OracleResult r;
  const std::size_t n_out = p.output_size();
  r.out.assign(n_out, 0);
  r.abs_weighted_v.assign(n_out, 0);
  r.abs_sum_v.assign(n_out, 0);
  r.centered_v.assign(n_out, 0);
  r.logit_centered_v.assign(n_out, 0);
  r.spread_centered_v.assign(n_out, 0);
  r.max_deviation_v.assign(n_out, 0);
  r.rows.assign(n_out / d, RowCondition{});
  r.split_sizes = split_sizes;
  r.split_records.assign(r.rows.size() * split_sizes.size(), 0);

  std::vector<double> logits, magnitudes, weights;
  std::vector<std::size_t> slots;
  std::size_t rows_done = 0;
  double max_abs_v = 0;
  int max_keys = 0;
  double max_logit = 0;
  // Every value a row reads must be finite: 0 * inf is NaN, and std::max would drop a NaN magnitude.
  bool finite_inputs = std::all_of(p.queries.begin(), p.queries.end(), [](float x) { return std::isfinite(x); });
  const LogitOptions& options = p.options;
  // An fp8 cache's V is v_pool * v_scale, exact in double.
  const auto v_scale = [&p](int kv_head) { return p.fp8_cache ? static_cast<double>(p.fp8_cache->v_scale(kv_head)) : 1.0; };
  finite_inputs = finite_inputs && std::all_of(options.sinks.begin(), options.sinks.end(), [](float x) {
                    return std::isfinite(x) || x == -std::numeric_limits<float>::infinity();
                  });
  for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s) {
    const Sequence& seq = p.sequences[s];
    const std::size_t slot_elements = static_cast<std::size_t>(p.num_kv_heads) * d;
    slots.resize(seq.context_len);
    // Keys before the first query's window are read by no row: they may hold anything (a recycled block's NaN).
    const int first_read = p.first_visible_key(seq.first_query_position());
    for (int t = 0; t < seq.context_len; ++t) {
      slots[t] = p.kv_offset(s, t, 0);
      if (t < first_read) continue;
      for (std::size_t e = slots[t]; e < slots[t] + slot_elements; ++e) {
        const int kv_head = static_cast<int>((e - slots[t]) / d);
        max_abs_v = std::max(max_abs_v, std::fabs(p.v_pool[e] * v_scale(kv_head)));
        finite_inputs = finite_inputs && std::isfinite(p.k_pool[e]) && std::isfinite(p.v_pool[e]);
      }
    }
    max_keys = std::max(max_keys, seq.context_len);
    for (int i = 0; i < seq.num_queries; ++i) {
      const int position = seq.first_query_position() + i;
      const int first = p.first_visible_key(position);  // the window's start, or 0
      const int num_keys = position - first + 1;         // causal: keys first ..= own position
      for (int h = 0; h < p.num_query_heads; ++h) {
        const int kvh = p.kv_head_of(h);
        const std::size_t out_base = p.query_offset(s, i, h);
        row_logits(p, slots, &p.queries[out_base], h, first, position, logits, magnitudes);
        // A sink is one more logit, first in line, value 0, exact (magnitude 0).
        const double sink = p.sink(h);
        const bool has_sink = sink != -std::numeric_limits<double>::infinity();
        if (has_sink) {
          logits.insert(logits.begin(), sink);
          magnitudes.insert(magnitudes.begin(), 0.0);
        }
        const int lead = has_sink ? 1 : 0;  // logits[lead + k] is visible key first + k
        const int n = num_keys + lead;
        const double m = *std::max_element(logits.begin(), logits.end());
        weights.resize(n);
        double denom = 0;
        for (int t = 0; t < n; ++t) denom += (weights[t] = std::exp(logits[t] - m));
        for (double& w : weights) w /= denom;

        RowCondition& row = r.rows[out_base / d];
        row.sequence = s;
        row.context_len = seq.context_len;
        row.num_keys = num_keys;
        row.first_key = first;
        row.has_sink = has_sink;
        for (int t = 0; t < n; ++t) {
          // A logit of -inf (an e5m2 cache's inf) has weight exactly 0 in fp32 too: no error, and its infinite
          // spread would make the row's bounds NaN.
          if (logits[t] == -std::numeric_limits<double>::infinity() && m > logits[t]) continue;
          row.max_logit_magnitude = std::max(row.max_logit_magnitude, magnitudes[t]);
          row.max_spread = std::max(row.max_spread, m - logits[t]);
        }
        const double tolerance = record_tolerance(row.max_logit_magnitude, fp32_logit_coefficient(p));
        // The sink counts first (a kernel starting from it), and once more (one joining it last).
        row.records = count_records(logits, 0, n, tolerance) + lead;
        // Splits cut the positions from 0, each folded from an empty state without the sink.
        for (std::size_t k = 0; k < split_sizes.size(); ++k) {
          int worst = 0;
          for (int begin = first / split_sizes[k] * split_sizes[k]; begin <= position; begin += split_sizes[k]) {
            const int lo = std::max(begin, first), hi = std::min(begin + split_sizes[k], position + 1);
            worst = std::max(worst, count_records(logits, lead + lo - first, lead + hi - first, tolerance));
          }
          r.split_records[(out_base / d) * split_sizes.size() + k] = worst;
        }
        max_logit = std::max({max_logit, row.max_logit_magnitude, std::fabs(has_sink ? sink : 0.0)});

        for (int j = 0; j < d; ++j) {
          // Entry t's value: a visible key's V, or 0 for the sink.
          const double row_v_scale = v_scale(kvh);
          const auto v = [&](int t) {
            return t < lead ? 0.0 : p.v_pool[slots[first + t - lead] + static_cast<std::size_t>(kvh) * d + j] * row_v_scale;
          };
          double o = 0, abs_sum = 0, unweighted_abs_sum = 0;
          for (int t = 0; t < n; ++t) {
            o += weights[t] * v(t);
            abs_sum += weights[t] * std::fabs(v(t));
            unweighted_abs_sum += std::fabs(v(t));
          }
          double c = 0, cl = 0, cm = 0, most = 0;
          for (int t = 0; t < n; ++t) {
            most = std::max(most, std::fabs(v(t) - o));  // every entry, weighted or not: a kernel may weight it
            if (weights[t] == 0) continue;  // nothing to deviate, and 0 x an infinite magnitude would be NaN
            const double dev = weights[t] * std::fabs(v(t) - o);
            c += dev;
            cl += dev * magnitudes[t];
            cm += dev * (m - logits[t]);
          }
          r.out[out_base + j] = o;
          r.abs_weighted_v[out_base + j] = abs_sum;
          r.abs_sum_v[out_base + j] = unweighted_abs_sum;
          r.centered_v[out_base + j] = c;
          r.logit_centered_v[out_base + j] = cl;
          r.spread_centered_v[out_base + j] = cm;
          r.max_deviation_v[out_base + j] = most;
        }
        if (progress && ++rows_done % 256 == 0) progress(rows_done, r.rows.size());
      }
    }
  }
  // Margins of 2^10 leave room for the kernels' partial sums and rescaled accumulators.
  const double limit = static_cast<double>(FLT_MAX) / 1024;
  r.fits_fp32 = finite_inputs && max_logit < limit && max_abs_v * std::max(max_keys, 1) < limit;
  return r;
}

int OracleResult::records_in_splits(std::size_t row, int split_size) const {
  for (std::size_t k = 0; k < split_sizes.size(); ++k)
    if (split_sizes[k] == split_size) return split_records[row * split_sizes.size() + k];
  throw std::out_of_range("the oracle was not asked for split size " + std::to_string(split_size));
}

}  // namespace pacheck
