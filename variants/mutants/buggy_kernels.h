// The mutants' meta-kernel: cpu_streaming's and cpu_splitk's loops once more, with a Bug switch wherever real
// paged-attention kernels went wrong. With Bug::none each kernel is bit-identical to its correct counterpart
// (MutantKernels.WithoutTheirBugAreBitIdenticalToTheCorrectKernels in kill_matrix_test). Loads go through
// DeviceMemory, which reads what a GPU would: a recycled block's garbage, or an illegal address that throws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "problem/knobs.h"
#include "problem/problem.h"

namespace pacheck::mutants {

// One bug each; its row in catalogue.cpp says what it does and which real kernels shipped it.
enum class Bug {
  none,
  // The online softmax.
  accumulator_not_rescaled,
  denominator_not_rescaled,
  max_initialised_to_zero,
  approximate_exp,
  pv_accumulated_in_bf16,
  // Masking.
  masked_score_zero,
  masked_score_sentinel,
  masked_value_not_zeroed,
  tail_one_too_many,
  tail_one_too_few,
  causal_off_by_one,
  causal_top_left,
  shared_tail_read_whole,
  last_partial_tile_skipped,
  // Addressing.
  gqa_head_modulo,
  gqa_head_shift,
  table_prefetch_past_row,
  paired_block_load,
  // The scale.
  scale_applied_twice,
  scale_not_applied,
  // Split-K.
  reduce_ignores_split_max,
  reduce_drops_last_split,
  split_boundary_key_twice,
  splits_from_batch_size,
  reduce_order_from_arrival,
  // The logit options.
  soft_cap_before_scale,
  soft_cap_tanh_from_sigmoid,
  window_one_too_many,
  alibi_sign_flipped,
  alibi_slope_of_kv_head,
  sink_not_in_denominator,
  sink_sentinel,
  sink_per_split,
  // fp8 caches.
  fp8_k_scaled_by_v_scale,
  fp8_format_swapped,
  // One past the last, so a test can walk every value. New bugs go above it.
  count,
};

// The kernels of the meta-kernel, each the buggy twin of one correct variant.
enum class Kernel { streaming, splitk };
inline constexpr Kernel kKernels[] = {Kernel::streaming, Kernel::splitk};

// The correct variant a kernel is the twin of: "cpu_streaming" or "cpu_splitk".
const char* counterpart_name(Kernel kernel);

// What a GPU load reads when a kernel's index math is wrong: the block table as vLLM passes it (a row per sequence,
// padded with 0 to the widest), the KV pool as one allocation. Reads inside an allocation return whatever is
// there; reads outside one are illegal addresses (CUDA faults) and throw std::runtime_error.
class DeviceMemory {
 public:
  explicit DeviceMemory(const Problem& problem);
  // Entry `index` of the sequence's row; past the row it is the padding or the next row.
  std::int32_t table_entry(int sequence, int index) const;
  // The K (or V) vector in slot `slot` of physical block `block`, for any block id.
  const float* key_at(std::int64_t block, int slot, int kv_head) const;
  const float* value_at(std::int64_t block, int slot, int kv_head) const;

 private:
  std::size_t vector_offset(std::int64_t block, int slot, int kv_head) const;

  const Problem& problem_;
  int row_width_ = 0;
  std::vector<std::int32_t> table_;
};

// The streaming kernel (cpu_streaming) with the bug.
Output run_streaming(const Problem& problem, const Knobs& knobs, Bug bug);

// The split-K kernel (cpu_splitk) with the bug; `launch` numbers the call (reduce_order_from_arrival's order).
Output run_splitk(const Problem& problem, const Knobs& knobs, Bug bug, unsigned launch = 0);

Output run_kernel(Kernel kernel, const Problem& problem, const Knobs& knobs, Bug bug, unsigned launch = 0);

// exp(x) by 2^(x log2 e) with 2^f, f in [0, 1), from a degree-2 polynomial: ~1.7e-3 relative error.
float approximate_expf(float x);

}  // namespace pacheck::mutants
