// The error model shared by cuda_fused and cuda_splitk: the tiled-kernel model of oracle/stock_error_models.h for
// the arithmetic the problem runs on (kernel_arithmetic in launch_rules.h: fp32 on the CUDA cores, or bf16
// operands on the tensor cores).
#pragma once

#include <cstddef>

#include "oracle/error_model.h"
#include "oracle/oracle.h"
#include "problem/knobs.h"
#include "problem/problem.h"

namespace pacheck::cuda {

// split_size: the keys per split of cuda_splitk (effective_split_size), or 0 for cuda_fused.
ErrorModel kernel_error_model(const Problem& p, const OracleResult& oracle, std::size_t row, const Knobs& knobs,
                              int split_size);

}  // namespace pacheck::cuda
