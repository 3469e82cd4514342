// The kernel interface every paged-attention variant implements, and the registry. Adding a variant is one .cpp
// (or .cu) file: define the class, then PACHECK_REGISTER_VARIANT(Class).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "oracle/error_model.h"
#include "oracle/oracle.h"
#include "problem/knobs.h"
#include "problem/problem.h"

namespace pacheck {

// The logit options (problem.h) a variant computes; it is never given a problem with another.
struct LogitOptionSupport {
  bool soft_cap = false;
  bool window = false;
  bool alibi = false;
  bool sinks = false;
  static LogitOptionSupport all() { return {true, true, true, true}; }
};

struct Capabilities {
  std::vector<DType> dtypes;
  std::vector<Mode> modes;
  int max_head_dim = 0;
  // False for head dims it cannot take (say, not a multiple of its vector width).
  std::function<bool(int head_dim)> supports_head_dim = [](int) { return true; };
  // Block sizes (tokens per KV block) and GQA ratios (query heads per KV head) it takes; empty: any.
  std::vector<int> block_sizes;
  std::vector<int> gqa_ratios;
  // The same problem always gives bit-identical output.
  bool deterministic = true;
  // A sequence's output does not depend on the other sequences of its batch.
  bool batch_invariant = true;
  // A deliberately broken kernel: only kill runs include it.
  bool is_mutant = false;
  bool needs_gpu = false;
  // Whether split_size / num_splits change the arithmetic.
  bool uses_splits = false;
  LogitOptionSupport logit_options;
  // The fp8 KV cache formats it reads (problem.h, Fp8Cache); empty: none.
  std::vector<Fp8Format> fp8_caches;
  // With an fp8 cache: the query dtypes it takes (empty: all of dtypes) and what head dims must be multiples of.
  std::vector<DType> fp8_query_dtypes;
  int fp8_head_dim_multiple = 1;
};

class Variant {
 public:
  virtual ~Variant() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual Capabilities capabilities() const = 0;
  // Output [total_queries][num_query_heads][head_dim] in the problem's dtype, for a valid problem it covers.
  virtual Output run(const Problem& problem, const Knobs& knobs) const = 0;
  // Its error model for one row (an index into OracleResult::rows).
  virtual ErrorModel error_model(const Problem& problem, const OracleResult& oracle, std::size_t row,
                                 const Knobs& knobs) const = 0;
};

// Whether the capabilities cover the problem; coverage_gap says why not, in words ("" when they do).
bool covers(const Capabilities& caps, const Problem& problem);
std::string coverage_gap(const Capabilities& caps, const Problem& problem);
// The first logit option the problem sets that `takes` leaves out ("window not supported"), or "".
std::string logit_option_gap(const LogitOptionSupport& takes, const LogitOptions& options);
// "kv_cache fp8_e5m2 not supported" when the problem's fp8 cache is in a format `takes` leaves out, else "".
std::string fp8_cache_gap(const std::vector<Fp8Format>& takes, const Problem& problem);
// Whether an fp8 cache may come with this query dtype and head dim (fp8_query_dtypes, fp8_head_dim_multiple).
bool fp8_cache_shape_taken(const std::vector<DType>& query_dtypes, int head_dim_multiple, DType dtype, int head_dim);
// "kv_cache fp8_e4m3 with dtype fp32 and head_dim 40 not supported" when `caps` takes no fp8 cache with them, else "".
std::string fp8_cache_shape_gap(const Capabilities& caps, const Problem& problem);

class Registry {
 public:
  static Registry& instance();
  void add(std::unique_ptr<Variant> variant);
  // nullptr when no variant has this name.
  const Variant* find(const std::string& name) const;
  // Like find, but throws std::invalid_argument naming the known variants.
  const Variant& get(const std::string& name) const;
  // Registered variants, sorted by name; mutants only when asked.
  std::vector<const Variant*> variants(bool include_mutants = false) const;
  std::vector<const Variant*> mutants() const;

 private:
  std::vector<std::unique_ptr<Variant>> variants_;
};

namespace detail {
struct Registration {
  explicit Registration(std::unique_ptr<Variant> variant) { Registry::instance().add(std::move(variant)); }
};
}  // namespace detail

}  // namespace pacheck

#define PACHECK_REGISTER_VARIANT_CONCAT2(a, b) a##b
#define PACHECK_REGISTER_VARIANT_CONCAT(a, b) PACHECK_REGISTER_VARIANT_CONCAT2(a, b)
#define PACHECK_REGISTER_VARIANT(Class)                                                                \
  static const ::pacheck::detail::Registration PACHECK_REGISTER_VARIANT_CONCAT(pacheck_registration_, \
                                                                               __LINE__){std::make_unique<Class>()}
