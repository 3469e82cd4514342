// The error model shared by cuda_fused and cuda_splitk (oracle/ERROR_MODEL.md): what the kernel a problem runs on
// (kernel_arithmetic in paged_attention.h: fp32 on the CUDA cores, or bf16 operands on the tensor cores) does to
// one row's logits, weights and sums.
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
