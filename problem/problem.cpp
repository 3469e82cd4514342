#include "problem/problem.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace pacheck {

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::decode: return "decode";
    case Mode::prefill: return "prefill";
    case Mode::continuation: return "continuation";
  }
  return "?";
}

float Problem::scale() const {
  return explicit_scale ? *explicit_scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
}

int Problem::total_queries() const {
  int total = 0;
  for (const Sequence& s : sequences) total += s.num_queries;
  return total;
}

int Problem::query_row_offset(int sequence) const {
  int row = 0;
  for (int s = 0; s < sequence; ++s) row += sequences[s].num_queries;
  return row;
}

Mode Problem::mode_of(int sequence) const {
  const Sequence& s = sequences[sequence];
  if (s.num_queries == 1) return Mode::decode;
  if (s.num_queries == s.context_len) return Mode::prefill;
  return Mode::continuation;
}

float Problem::sink(int query_head) const {
  return options.sinks.empty() ? -std::numeric_limits<float>::infinity() : options.sinks[query_head];
}

std::size_t Problem::pool_size() const {
  return static_cast<std::size_t>(num_blocks) * block_size * num_kv_heads * head_dim;
}

std::size_t Problem::kv_offset_physical(int block, int slot, int kv_head) const {
  return ((static_cast<std::size_t>(block) * block_size + slot) * num_kv_heads + kv_head) * head_dim;
}

std::size_t Problem::kv_offset(int sequence, int position, int kv_head) const {
  const Sequence& s = sequences[sequence];
  return kv_offset_physical(s.block_table[position / block_size], position % block_size, kv_head);
}

std::size_t Problem::query_offset(int sequence, int token, int query_head) const {
  return (static_cast<std::size_t>(query_row_offset(sequence) + token) * num_query_heads + query_head) * head_dim;
}

namespace {

// Pools and query batches beyond this many elements are refused, not allocated (a hostile case file); it is also
// the largest count an int index holds.
constexpr std::int64_t kMaxElements = std::numeric_limits<std::int32_t>::max();

// a * b for non-negative counts, saturating at kMaxElements + 1: four hostile 31-bit sizes overflow 64 bits.
std::int64_t capped_product(std::int64_t a, std::int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > (kMaxElements + 1) / b) return kMaxElements + 1;
  return std::min(a * b, kMaxElements + 1);
}

std::string_view format_name(DType dtype) { return dtype_name(dtype); }
std::string_view format_name(Fp8Format format) { return fp8_name(format); }

std::string float_text(float x) {
  std::ostringstream m;
  m.precision(9);
  m << x;
  return m.str();
}

template <typename Format>
void check_values(std::vector<std::string>& errors, const char* field, const std::vector<float>& values,
                  std::int64_t expected, const char* shape, Format format) {
  if (static_cast<std::int64_t>(values.size()) != expected) {
    errors.push_back(std::string(field) + " has " + std::to_string(values.size()) + " elements but " + shape + " = " +
                     std::to_string(expected));
    return;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!is_representable(values[i], format)) {
      errors.push_back(std::string(field) + "[" + std::to_string(i) + "] = " + float_text(values[i]) +
                       " is not representable in " + std::string(format_name(format)));
      return;  // one names the problem
    }
  }
}

// One value per query head, each passing `ok`.
void check_per_head(std::vector<std::string>& errors, const char* field, const std::vector<float>& values,
                    int num_query_heads, bool (*ok)(float), const char* requirement) {
  if (values.empty()) return;
  if (static_cast<std::int64_t>(values.size()) != num_query_heads) {
    errors.push_back(std::string(field) + " has " + std::to_string(values.size()) + " values but num_query_heads = " +
                     std::to_string(num_query_heads) + ": one per query head");
    return;
  }
  for (std::size_t h = 0; h < values.size(); ++h)
    if (!ok(values[h])) {
      errors.push_back(std::string(field) + "[" + std::to_string(h) + "] = " + float_text(values[h]) + " " +
                       requirement);
      return;
    }
}

void fp8_cache_errors(std::vector<std::string>& errors, const Problem& p) {
  if (!p.fp8_cache) return;
  for (const auto& [field, scales] : {std::pair{"k_scales", &p.fp8_cache->k_scales},
                                      std::pair{"v_scales", &p.fp8_cache->v_scales}}) {
    if (scales->size() != 1 && static_cast<std::int64_t>(scales->size()) != p.num_kv_heads) {
      errors.push_back(std::string(field) + " has " + std::to_string(scales->size()) +
                       " values but must have 1 (per tensor) or num_kv_heads = " + std::to_string(p.num_kv_heads));
      continue;
    }
    for (std::size_t h = 0; h < scales->size(); ++h)
      if (!(std::isfinite((*scales)[h]) && (*scales)[h] > 0)) {
        errors.push_back(std::string(field) + "[" + std::to_string(h) + "] = " + float_text((*scales)[h]) +
                         " must be finite and positive");
        break;
      }
  }
}

void logit_option_errors(std::vector<std::string>& errors, const Problem& p) {
  const LogitOptions& o = p.options;
  if (o.soft_cap && !(std::isfinite(*o.soft_cap) && *o.soft_cap > 0))
    errors.push_back("soft_cap must be finite and positive, got " + float_text(*o.soft_cap));
  if (o.window && *o.window < 1)
    errors.push_back("window must be at least 1 (the query's own position), got " + std::to_string(*o.window));
  check_per_head(errors, "alibi_slopes", o.alibi_slopes, p.num_query_heads,
                 [](float x) { return static_cast<bool>(std::isfinite(x)); }, "must be finite");
  check_per_head(errors, "sinks", o.sinks, p.num_query_heads,
                 [](float x) { return std::isfinite(x) || x == -std::numeric_limits<float>::infinity(); },
                 "must be finite or -inf (no sink)");
}

}  // namespace

std::vector<std::string> validation_errors(const Problem& p) {
  std::vector<std::string> errors;
  auto positive = [&](const char* field, int value) {
    if (value <= 0) errors.push_back(std::string(field) + " must be positive, got " + std::to_string(value));
  };
  positive("num_query_heads", p.num_query_heads);
  positive("num_kv_heads", p.num_kv_heads);
  positive("head_dim", p.head_dim);
  positive("block_size", p.block_size);
  positive("num_blocks", p.num_blocks);
  if (p.num_query_heads > 0 && p.num_kv_heads > 0 && p.num_query_heads % p.num_kv_heads != 0) {
    errors.push_back("num_query_heads (" + std::to_string(p.num_query_heads) + ") is not a multiple of num_kv_heads (" +
                     std::to_string(p.num_kv_heads) + "): the GQA ratio must be an integer");
  }
  if (p.explicit_scale && !std::isfinite(*p.explicit_scale))
    errors.push_back("scale must be finite, got " + float_text(*p.explicit_scale));
  if (p.sequences.empty()) errors.push_back("sequences is empty: a batch needs at least one sequence");
  logit_option_errors(errors, p);
  fp8_cache_errors(errors, p);
  if (!errors.empty()) return errors;  // the checks below index with these sizes

  std::int64_t total_queries = 0;
  for (std::size_t s = 0; s < p.sequences.size(); ++s) {
    const Sequence& seq = p.sequences[s];
    const std::string where = "sequence " + std::to_string(s) + ": ";
    if (seq.context_len <= 0) {
      errors.push_back(where + "context_len must be positive, got " + std::to_string(seq.context_len));
      continue;
    }
    if (seq.num_queries <= 0) errors.push_back(where + "num_queries must be positive, got " + std::to_string(seq.num_queries));
    if (seq.num_queries > seq.context_len) {
      errors.push_back(where + "num_queries (" + std::to_string(seq.num_queries) + ") exceeds context_len (" +
                       std::to_string(seq.context_len) + "): every query token is part of the context");
    }
    total_queries += std::max(seq.num_queries, 0);
    const std::int64_t needed = (static_cast<std::int64_t>(seq.context_len) + p.block_size - 1) / p.block_size;
    if (static_cast<std::int64_t>(seq.block_table.size()) < needed) {
      errors.push_back(where + "block_table has " + std::to_string(seq.block_table.size()) + " entries but context_len " +
                       std::to_string(seq.context_len) + " with block_size " + std::to_string(p.block_size) +
                       " needs " + std::to_string(needed));
      continue;
    }
    for (std::int64_t i = 0; i < needed; ++i) {
      const std::int32_t id = seq.block_table[i];
      if (id < 0 || id >= p.num_blocks) {
        errors.push_back(where + "block_table[" + std::to_string(i) + "] = " + std::to_string(id) +
                         (id < 0 ? " is negative" : " is out of range") + " (num_blocks = " +
                         std::to_string(p.num_blocks) + ")");
      }
    }
  }
  // Every factor is positive here (checked above).
  const std::int64_t pool =
      capped_product(capped_product(capped_product(p.num_blocks, p.block_size), p.num_kv_heads), p.head_dim);
  const std::int64_t query_elems =
      capped_product(capped_product(std::min(total_queries, kMaxElements + 1), p.num_query_heads), p.head_dim);
  if (pool > kMaxElements)
    errors.push_back("the KV pool (num_blocks*block_size*num_kv_heads*head_dim) would hold more than " +
                     std::to_string(kMaxElements) + " elements, over the limit");
  if (query_elems > kMaxElements)
    errors.push_back("the queries (total_queries*num_query_heads*head_dim) would hold more than " +
                     std::to_string(kMaxElements) + " elements, over the limit");
  if (!errors.empty()) return errors;
  const char* pool_shape = "num_blocks*block_size*num_kv_heads*head_dim";
  if (p.fp8_cache) {
    check_values(errors, "k_pool", p.k_pool, pool, pool_shape, p.fp8_cache->format);
    check_values(errors, "v_pool", p.v_pool, pool, pool_shape, p.fp8_cache->format);
  } else {
    check_values(errors, "k_pool", p.k_pool, pool, pool_shape, p.dtype);
    check_values(errors, "v_pool", p.v_pool, pool, pool_shape, p.dtype);
  }
  check_values(errors, "queries", p.queries, query_elems, "total_queries*num_query_heads*head_dim", p.dtype);
  return errors;
}

namespace {
std::string join_errors(const std::vector<std::string>& errors) {
  std::string text = "invalid problem:";
  for (const std::string& e : errors) text += "\n  - " + e;
  return text;
}
}  // namespace

InvalidProblem::InvalidProblem(const std::vector<std::string>& errors)
    : std::invalid_argument(join_errors(errors)), errors_(errors) {}

void validate(const Problem& problem) {
  std::vector<std::string> errors = validation_errors(problem);
  if (!errors.empty()) throw InvalidProblem(errors);
}

std::string feature_names(const Problem& p) {
  std::string names;
  const auto add = [&names](bool present, std::string_view name) {
    if (present) names += (names.empty() ? "" : " ") + std::string(name);
  };
  const LogitOptions& o = p.options;
  add(o.soft_cap.has_value(), "soft_cap");
  add(o.window.has_value(), "window");
  add(!o.alibi_slopes.empty(), "alibi");
  add(!o.sinks.empty(), "sinks");
  if (p.fp8_cache) add(true, fp8_name(p.fp8_cache->format));
  return names.empty() ? "plain" : names;
}

std::string describe(const Problem& p) {
  // Long batches and tables are elided: the case file holds them whole.
  constexpr std::size_t kShownSequences = 32, kShownEntries = 16;
  std::ostringstream out;
  out.precision(9);
  out << "dtype=" << dtype_name(p.dtype) << " query_heads=" << p.num_query_heads << " kv_heads=" << p.num_kv_heads
      << " (gqa " << (p.num_kv_heads > 0 ? p.num_query_heads / p.num_kv_heads : 0) << ") head_dim=" << p.head_dim
      << " block_size=" << p.block_size << " num_blocks=" << p.num_blocks << " scale=" << p.scale()
      << (p.explicit_scale ? " (explicit)" : " (default)") << "\n";
  const LogitOptions& o = p.options;
  if (o.any() || p.fp8_cache) {
    out << " ";
    if (p.fp8_cache) out << " kv_cache=" << fp8_name(p.fp8_cache->format);
    if (o.soft_cap) out << " soft_cap=" << *o.soft_cap;
    if (o.window) out << " window=" << *o.window;
    const auto per_head = [&](const char* name, const std::vector<float>& values) {
      if (values.empty()) return;
      out << " " << name << "=[";
      for (std::size_t h = 0; h < values.size() && h < kShownEntries; ++h) out << (h ? " " : "") << values[h];
      if (values.size() > kShownEntries) out << " ... " << values.size() - kShownEntries << " more";
      out << "]";
    };
    per_head("alibi_slopes", o.alibi_slopes);
    per_head("sinks", o.sinks);
    if (p.fp8_cache) {
      per_head("k_scales", p.fp8_cache->k_scales);
      per_head("v_scales", p.fp8_cache->v_scales);
    }
    out << "\n";
  }
  for (std::size_t s = 0; s < p.sequences.size() && s < kShownSequences; ++s) {
    const Sequence& seq = p.sequences[s];
    out << "  seq " << s << ": " << mode_name(p.mode_of(static_cast<int>(s))) << " context_len=" << seq.context_len
        << " num_queries=" << seq.num_queries << " table=[";
    for (std::size_t i = 0; i < seq.block_table.size() && i < kShownEntries; ++i)
      out << (i ? " " : "") << seq.block_table[i];
    if (seq.block_table.size() > kShownEntries) out << " ... " << seq.block_table.size() - kShownEntries << " more";
    out << "]\n";
  }
  if (p.sequences.size() > kShownSequences)
    out << "  ... " << p.sequences.size() - kShownSequences << " more sequences\n";
  return out.str();
}

}  // namespace pacheck
