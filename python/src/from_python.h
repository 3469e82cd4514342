// What a Python caller hands pacheck, read into pacheck's types: the dtypes, capabilities, error model and knobs
// it declares, and the arrays its kernel returns; anything else gets an error naming the argument and the value.
#pragma once

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>

#include "oracle/stock_error_models.h"
#include "problem/knobs.h"
#include "problem/problem.h"
#include "variants/variant.h"

namespace pacheck::python {

// "fp32", "fp16", "bf16" or torch's "float32", "float16", "bfloat16"; else std::invalid_argument naming `what`.
DType parse_dtype_name(const std::string& name, const std::string& what);

// The value whose name(value) is `name`, else std::invalid_argument listing the names.
template <typename T, typename Name>
T parse_named(const std::string& name, const std::string& what, std::initializer_list<T> values, Name name_of) {
  std::string known;
  for (T v : values) {
    if (name == name_of(v)) return v;
    known += (known.empty() ? "" : ", ") + std::string(name_of(v));
  }
  throw std::invalid_argument(what + ": unknown value '" + name + "'; known: " + known);
}

// tile_size >= 1, split_size >= 1, num_splits >= 0.
Knobs parse_knobs(int tile_size, int split_size, int num_splits, const std::string& what);

// A dict of Capabilities fields, by the keys python/README.md lists.
Capabilities parse_capabilities(nanobind::handle declared);

// The names of the logit options `options` sets, in the order they apply, as capabilities['logit_options'] spells
// them: "soft_cap", "window", "alibi_slopes", "sinks".
std::vector<std::string> logit_option_names(const LogitOptions& options);

// A stock model's name (stock_error_models.h) or a dict of ErrorCoefficients fields.
DeclaredErrorModel parse_error_model(nanobind::handle declared);

// The kernel broke the bridge's contract (python/README.md): an output of the wrong shape or dtype, not an array, or
// a view of the problem kept after the call. Not a property failure: the check stops.
class KernelContractError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `result` as floats: any DLPack-capable or array-like object (device arrays copied by pacheck._bridge.host_array)
// of float32, float16 or bfloat16 [total_queries, num_query_heads, head_dim], any strides. Throws
// KernelContractError naming `kernel`.
Output output_from(nanobind::handle result, const Problem& problem, const std::string& kernel);

}  // namespace pacheck::python
