// The mutants' meta-kernel: the CPU kernels written once more, with a Bug switch wherever real kernels went wrong.
//
// The streaming loop (cpu_streaming) and the split-K loop (cpu_splitk) carry a `Bug` switch at each place a real
// paged-attention kernel has gone wrong. With Bug::none every kernel of kKernels is bit-identical to its correct
// counterpart, so each mutant differs from a correct kernel by exactly one bug; tests/properties/kill_matrix_test.cpp
// proves it over every kernel of kKernels in MutantKernels.WithoutTheirBugAreBitIdenticalToTheCorrectKernels.
//
// Mutant loads that leave the sequence's keys go through DeviceMemory, which reads what a GPU would: a recycled
// (poisoned) block gives its garbage, an id outside the pool is an illegal address and throws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "problem/knobs.h"
#include "problem/problem.h"

namespace pacheck::mutants {

// One bug each; the catalogue (catalogue.cpp) says which real kernels shipped (or plausibly ship) it.
enum class Bug {
  none,
  // The online softmax.
  accumulator_not_rescaled,    // o is not multiplied by exp(m_old - m_new) when the running max grows
  denominator_not_rescaled,    // d is not
  max_initialised_to_zero,     // m starts at 0 instead of -inf
  approximate_exp,             // exp from a degree-2 polynomial for 2^f: ~1.7e-3 relative error
  pv_accumulated_in_bf16,      // the weighted-V accumulator is stored in bf16
  // Masking.
  masked_score_zero,           // masked lanes get the masked load's fill value 0 as their score, not -inf
  masked_score_sentinel,       // masked lanes get the finite sentinel -6e4 as their score, not -inf
  masked_value_not_zeroed,     // V is loaded without the mask and multiplied by the zero weight: 0 * NaN
  tail_one_too_many,           // the ragged-tail mask lets key context_len through
  tail_one_too_few,            // ... drops key context_len - 1
  causal_off_by_one,           // the causal mask lets key position + 1 through
  causal_top_left,             // the causal mask aligned top-left: query i sees keys 0 ..= i
  shared_tail_read_whole,      // a tail block another table also holds is read whole, past the sequence's length
  last_partial_tile_skipped,   // the tile count is floor(keys / tile) instead of ceil
  // Addressing.
  gqa_head_modulo,             // kv head = h % num_kv_heads instead of h / ratio
  gqa_head_shift,              // kv head = h >> floor(log2(ratio)): right only for power-of-two ratios
  table_prefetch_past_row,     // the pipelined loop prefetches the next tile's block id without a bound check
  paired_block_load,           // two logical blocks loaded from one table entry, as if physically adjacent
  // The scale.
  scale_applied_twice,
  scale_not_applied,
  // Split-K.
  reduce_ignores_split_max,    // partial states summed without exp(m_i - m)
  reduce_drops_last_split,     // the reduce loop stops one split early
  split_boundary_key_twice,    // split i folds keys [i * split, (i + 1) * split] inclusive
  splits_from_batch_size,      // split-K only when the batch is small (a launch heuristic on the batch)
  reduce_order_from_arrival,   // partials merged in the order they arrive, which varies run to run
  // The logit options.
  soft_cap_before_scale,       // the cap applied to the unscaled logit: cap * tanh(qk / cap) * scale
  soft_cap_tanh_from_sigmoid,  // tanh(x) as 2 / (1 + exp(-2x)) - 1, which cancels for small x
  window_one_too_many,         // the window lets key position - window through: window + 1 keys
  alibi_sign_flipped,          // the ALiBi bias is slope * (pos - t): older keys gain
  alibi_slope_of_kv_head,      // the ALiBi slope is looked up by the KV head instead of the query head
  sink_not_in_denominator,     // the sink raises the running max, but its weight never joins the denominator
  sink_sentinel,               // a head's -inf sink (none) is passed as the finite sentinel -6e4
  sink_per_split,              // split-K starts every split from the sink: it joins the row once per split
  // fp8 caches.
  fp8_k_scaled_by_v_scale,     // K is dequantised with the V scale
  fp8_format_swapped,          // the cache's bytes are decoded as the other fp8 format (e4m3 as e5m2, or back)
  // Not a bug: one past the last, so a test can walk every value. New bugs go above it.
  count,
};

// The kernels of the meta-kernel, each the buggy twin of one correct variant.
enum class Kernel { streaming, splitk };
inline constexpr Kernel kKernels[] = {Kernel::streaming, Kernel::splitk};

// The correct variant a kernel is the twin of: "cpu_streaming" or "cpu_splitk".
const char* counterpart_name(Kernel kernel);

// What a GPU load reads when a kernel's index math is wrong. The block table is laid out the way vLLM passes it:
// one row per sequence, padded with 0 to the widest row; the KV pool is one flat allocation. Reads inside an
// allocation return whatever is there (a recycled block's poison, another sequence's keys); reads outside one are
// illegal addresses (CUDA faults, compute-sanitizer reports them) and throw std::runtime_error.
class DeviceMemory {
 public:
  explicit DeviceMemory(const Problem& problem);
  // Entry `index` of the sequence's row; past the row it is the padding or the next row.
  std::int32_t table_entry(int sequence, int index) const;
  // The K (or V) vector in slot `slot` of physical block `block`, for any block id the kernel computed.
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

// The split-K kernel (cpu_splitk) with the bug. `launch` numbers the call; only reduce_order_from_arrival uses it,
// as the source of its arrival order.
Output run_splitk(const Problem& problem, const Knobs& knobs, Bug bug, unsigned launch = 0);

// Whichever kernel `kernel` names, with the bug; `launch` as for run_splitk.
Output run_kernel(Kernel kernel, const Problem& problem, const Knobs& knobs, Bug bug, unsigned launch = 0);

// exp(x) by 2^(x log2 e) with 2^f, f in [0, 1), from a degree-2 polynomial: ~1.7e-3 relative error.
float approximate_expf(float x);

}  // namespace pacheck::mutants
