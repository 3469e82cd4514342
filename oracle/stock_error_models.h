// The error models an external kernel (a plugin, a Python callable) can declare: four stock models named after the
// arithmetic they bound, or explicit coefficients, each turning a row's RowCondition into an ErrorModel
// (ERROR_MODEL.md, "Declaring a model for an external kernel").
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "oracle/error_model.h"
#include "oracle/oracle.h"
#include "problem/knobs.h"
#include "problem/problem.h"

namespace pacheck {

// A tiled GPU kernel: both inner products on tensor cores (mma, fp32 accumulators, weights split into hi + lo) or
// not, fp16 operands (else bf16), keys per online-softmax step, thread groups whose partial sums are added at the end.
struct TiledKernelShape {
  bool tensor_cores = false;
  bool fp16_operands = false;
  int tile_keys = 32;
  int key_groups = 1;
};
// Its model (pacheck's CUDA kernels): fused for split_size 0, else split-K, splits of split_size keys merged in
// order. Its exp is CUDA's expf (2 ulp).
ErrorModel tiled_kernel_error_model(const Problem& problem, const OracleResult& oracle, std::size_t row,
                                    const TiledKernelShape& shape, int split_size);

enum class StockErrorModel {
  // fp32 logits and sums, exp within 2 ulp, one online softmax in tiles of any size, partial sums in any order.
  fp32_online_softmax,
  // The same per split of effective_split_size(knobs) keys, the splits merged in order.
  fp32_split_k,
  // pacheck's tensor-core kernel: logits and P V by mma.m16n8k16, fp32 accumulators, tiles of min(tile_size, 64)
  // keys, weights split into bf16 hi + lo, four warps' sums added; split-K with uses_splits.
  bf16_tensor_cores,
  // The same with fp16 operands, the weights split into fp16 hi + lo.
  fp16_tensor_cores,
};
const char* stock_error_model_name(StockErrorModel model);
std::optional<StockErrorModel> parse_stock_error_model(const std::string& name);
// "fp32_online_softmax, fp32_split_k, bf16_tensor_cores, fp16_tensor_cores", for error messages.
std::string stock_error_model_names();

// Explicit coefficients: constants plus multiples of head_dim, the row's keys, records (split-K: one split's),
// splits (1 unless split-K) and tiles of tile_size keys. The defaults are fp32_online_softmax's model.
struct ErrorCoefficients {
  double logit_constant = 2, logit_per_head_dim = 1;                       // a, in units of u per |logit|
  double weight_constant = 4, weight_per_record = 4, weight_per_split = 0;  // w, in units of u
  double chain_constant = 3, chain_per_key = 1, chain_per_record = 1, chain_per_split = 0, chain_per_tile = 0;
  double accumulator_unit_roundoff = kFp32UnitRoundoff;
  double weight_underflow = 0x1p-150;
  double absolute_error = 0;  // ErrorModel::absolute_error
  double absolute_error_per_v_scale = 0;  // with an fp8 cache, times the row's V scale (output rounded before it)
  double soft_cap_logit_constant = 0;     // with a soft cap, u per |logit| beyond fp32's (tanh.approx.f32: 2^13.013)
};
// Empty when all are finite and non-negative, the unit roundoff in (0, 1), the underflow in [0, 1); else what is
// wrong, naming the coefficient.
std::string coefficients_problem(const ErrorCoefficients& coefficients);

// What an external kernel declares: a stock model, or explicit coefficients.
struct DeclaredErrorModel {
  std::optional<StockErrorModel> stock = StockErrorModel::fp32_online_softmax;
  ErrorCoefficients coefficients;  // used when stock is empty
};
// The declared model for one row. split_k: whether the kernel splits (its capabilities' uses_splits).
ErrorModel declared_error_model(const DeclaredErrorModel& declared, const Problem& problem, const OracleResult& oracle,
                                std::size_t row, const Knobs& knobs, bool split_k);

}  // namespace pacheck
