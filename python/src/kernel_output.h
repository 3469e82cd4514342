// Turning what a Python kernel returned into pacheck's Output, exactly, or an error saying what is wrong with it.
#pragma once

#include <stdexcept>
#include <string>

#include <nanobind/nanobind.h>

#include "problem/problem.h"

namespace pacheck::python {

// The kernel broke the bridge's contract (python/README.md): an output of the wrong shape or dtype, something that
// is not an array, or a view of the problem kept after the call. Not a property failure: the check stops.
class KernelContractError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `result` as floats: any DLPack-capable or array-like object (numpy, torch on CPU or CUDA) of shape
// [total_queries, num_query_heads, head_dim] holding float32, float16 or bfloat16 values, any strides. Device arrays
// are copied to the host by pacheck._bridge.host_array. Throws KernelContractError naming `kernel`.
Output output_from(nanobind::handle result, const Problem& problem, const std::string& kernel);

}  // namespace pacheck::python
