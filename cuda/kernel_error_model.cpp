// The CUDA kernels' error model: the tiled-kernel model with the shape launch_rules.h gives the problem.
#include "cuda/kernel_error_model.h"

#include <algorithm>

#include "cuda/device_problem.h"
#include "cuda/launch_rules.h"
#include "oracle/stock_error_models.h"

namespace pacheck::cuda {

ErrorModel kernel_error_model(const Problem& p, const OracleResult& oracle, std::size_t row, const Knobs& knobs,
                              int split_size) {
  // The error models read the same rule as the dispatch, so that bound and kernel cannot disagree.
  const KernelArithmetic kernel = kernel_arithmetic(storage_of(p.dtype), p.head_dim);
  const TiledKernelShape shape{kernel.tensor_cores, std::max(1, std::min(knobs.tile_size, kernel.max_tile_keys)),
                               kernel.key_groups};
  return tiled_kernel_error_model(p, oracle, row, shape, split_size);
}

}  // namespace pacheck::cuda
