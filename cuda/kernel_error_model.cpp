#include "cuda/kernel_error_model.h"

#include <algorithm>

#include "cuda/device_problem.h"
#include "cuda/paged_attention.h"

namespace pacheck::cuda {
namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// An mma instruction's error, in units of u, relative to |C| + sum |A_k B_k| of each output element: the
// tensor-core model of ERROR_MODEL.md ("Tensor cores").
constexpr double kMmaError = 72;
// hi + lo reproduces an fp32 weight to within 2^-18 = 64 u (tensor_core_attention_kernel.cuh, split_weight).
constexpr double kWeightSplitError = 64;

}  // namespace

ErrorModel kernel_error_model(const Problem& p, const OracleResult& oracle, std::size_t row, const Knobs& knobs,
                              int split_size) {
  const RowCondition& c = oracle.rows[row];
  const KernelArithmetic kernel = kernel_arithmetic(storage_of(p.dtype), p.head_dim);
  const bool split_k = split_size > 0;
  // The keys one block walks for this row's item: the whole context (fused) or one split.
  const int item_keys = split_k ? std::min(split_size, c.context_len) : c.context_len;
  const int records_in_item = split_k ? oracle.records_in_splits(row, split_size) : c.records;
  const int splits = split_k ? ceil_div(c.num_keys, split_size) : 1;

  ErrorModel m;
  // CUDA's expf is within 2 ulp (4u). A key's weight is one expf, times one expf per later raise of its item's
  // running max (at most records_in_item, whatever the tile size); split-K adds the factor its split is merged
  // with and each later merge that raises the merged max: such a merge brings in a record of the whole row, so
  // at most `records` of them.
  m.weight_error = split_k ? 4.0 * (2 + records_in_item + c.records) : 4.0 * (1 + records_in_item);
  // Split-K: each merge adds a multiply and an add to every term already merged.
  const double merge_chain = split_k ? 2.0 * splits : 0.0;
  if (!kernel.tensor_cores) {
    // A head_dim-term fp32 dot product in any order is within gamma_{head_dim}; the scale multiply adds one.
    m.logit_coefficient = p.head_dim + 2;
    // A term is rounded when it joins its key group's sum and by each later add there (fewer than num_keys), by
    // each rescale (records_in_item), and by the adds of the key groups' sums at the end (key_groups - 1).
    m.accumulation_chain = c.num_keys + records_in_item + kernel.key_groups + 2 + merge_chain;
    return m;
  }
  // Tensor cores: a weight's bf16 hi and lo lose up to half bf16's subnormal spacing each, or all of a value below
  // 2^-126 if the hardware flushes subnormal inputs (not documented): 2^-126 per rounding covers both.
  m.weight_underflow = 0x1p-126;
  // A logit is ceil(head_dim / 16) chained mma steps, then the scale multiply.
  m.logit_coefficient = kMmaError * ceil_div(p.head_dim, 16) + 2;
  // A term of P V enters one mma and passes through the two (hi, lo) of every later tile of its item; the
  // weights' split, the rescales, the warp sums at the end (key_groups), and the merges add theirs, and 4 more
  // cover the end's adds with room to spare. (The denominator is an fp32 sum of a thread's 2 keys a tile, then
  // 3 adds over the row's 8 threads and the warp sums: a far shorter chain.)
  const int tile = std::max(1, std::min(knobs.tile_size, kernel.max_tile_keys));
  m.accumulation_chain = kMmaError * 2 * ceil_div(item_keys, tile) + kWeightSplitError + records_in_item +
                         kernel.key_groups + 2 + 2 + merge_chain;
  return m;
}

}  // namespace pacheck::cuda
