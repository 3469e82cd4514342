// The mutant catalogue: one row per mutant, their registration, and the Mutant variant each row becomes.
//
// A row's comment says where real kernels made its mistake. Each bug is a switch in one meta-kernel
// (buggy_kernels.*), bit-identical with Bug::none to its correct kernel (buggy_kernels.h), so each mutant is a
// correct kernel plus exactly its row's bug. Adding one: a Bug value and its switch there, then a row here;
// registry_test checks the table, kill_matrix_test that some property kills it.
#include <memory>

#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

using enum Kernel;
using enum Bug;

// Columns: name, kernel, bug, what it does (`pacheck list` and `pacheck mutants` print it), its bug class.
constexpr MutantSpec kCatalogue[] = {
    // The classic first-draft bug: d rescaled when a tile raises the max, o not. Invisible if tile 0 holds the max.
    {"acc_not_rescaled", streaming, accumulator_not_rescaled,
     "the accumulator is not rescaled by exp(m_old - m_new) when the running max grows",
     "online-softmax rescale of the accumulator dropped when porting the FlashAttention loop"},
    // A GQA program handling one KV head looks the slope up by its own head index. Right for MHA only.
    {"alibi_kv_head_slope", streaming, alibi_slope_of_kv_head,
     "query head h takes the ALiBi slope of its KV head instead of its own",
     "per-query-head parameter indexed by the KV head in a GQA-packed kernel"},
    // q_pos - k_pos for k_pos - q_pos (or negated slopes): the opposite recency bias. Invisible at distance 0.
    {"alibi_sign_flipped", streaming, alibi_sign_flipped,
     "the ALiBi bias is slope * (pos - t): older keys gain instead of losing",
     "ALiBi distance with the wrong sign: query minus key where key minus query was meant"},
    // `k_pos <= q_pos + 1`, or positions from 1: each prefill query but the last sees a future key. Decode rows
    // rely on the tail mask alone.
    {"causal_off_by_one", streaming, causal_off_by_one, "the causal mask lets key position + 1 through",
     "causal mask off by one: `<=` for `<`, or query positions counted from 1"},
    // SDPA's and pre-2.1 FlashAttention's convention. Same for prefill; a continuation loses most of its history
    // (the family of the query-offset bug fixed in openai/gpt-oss#196).
    {"causal_top_left", streaming, causal_top_left, "the causal mask is aligned top-left: query i sees keys 0 ..= i",
     "causal diagonal anchored top-left, as in SDPA, where a KV cache needs it bottom-right"},
    // A prefix-sharing (cascade) path reads shared blocks whole: wrong for forks (parallel sampling, beam search)
    // sharing a partial tail until copy-on-write.
    {"shared_tail_read_whole", streaming, shared_tail_read_whole,
     "a tail block another sequence's table also holds is read to its end, past the sequence's length",
     "a shared block assumed full: forks that share a partial tail read past their length"},
    // The mirror of acc_not_rescaled: `l_i + sum(p)` for `l_i * alpha + sum(p)`.
    {"denom_not_rescaled", streaming, denominator_not_rescaled,
     "the denominator is not rescaled when the running max grows", "online-softmax rescale of the running sum dropped"},
    // exp2 emulated on the FMA pipes to relieve the SFU (FlashAttention-4 on Blackwell, higher degree); one degree
    // too few is a precision bug only the error bound sees.
    {"exp_poly2", streaming, approximate_exp, "exp from a degree-2 polynomial for 2^f: about 1.7e-3 relative error",
     "software exp2 on the FMA pipes with a polynomial one degree too low"},
    // Right for MHA and MQA only; jax-js shipped it (ekzhang/jax-js#180: "should be repeat instead of tile").
    {"gqa_head_modulo", streaming, gqa_head_modulo, "query head h reads KV head h % num_kv_heads instead of h / ratio",
     "GQA query heads mapped to KV heads by tiling instead of repeating"},
    // Kernels specialised on power-of-two groups, given a ratio of 3, 5, 6 or 7 (Qwen2.5-7B: 28 over 4; compare
    // fla-org/flash-linear-attention#1029), send heads to the wrong KV head or past the last.
    {"gqa_head_shift", streaming, gqa_head_shift,
     "query head h reads KV head h >> floor(log2(ratio)): wrong unless the GQA ratio is a power of two",
     "GQA group found by a shift that assumes a power-of-two group size"},
    // `num_keys // BLOCK_N` for `cdiv(num_keys, BLOCK_N)`: a history shorter than a tile is 0/0 = NaN.
    {"last_partial_tile_skipped", streaming, last_partial_tile_skipped,
     "the tile count is floor(keys / tile) instead of ceil: the last partial tile is skipped",
     "tile count by floor division instead of cdiv"},
    // `tl.load(..., mask=m, other=0.0)` or `tl.where(mask, qk, 0)` feeding the softmax: each masked lane adds
    // exp(0 - m) and its (zero or future) V.
    {"masked_score_zero", streaming, masked_score_zero,
     "masked lanes are scored 0 (the masked load's fill value) instead of -inf",
     "the masked load's fill value used as a score instead of -inf"},
    // `-1e4` or `-6e4` for -inf to keep scores finite: wrong once every real logit of a row lies below it.
    {"masked_score_sentinel", streaming, masked_score_sentinel,
     "masked lanes are scored -6e4, a finite sentinel, instead of -inf",
     "a finite mask sentinel that wins when every real logit is below it"},
    // 0 * V is NaN for a recycled slot's NaN or Inf (as pytorch/pytorch#101967); lanes past the table row read
    // whatever it leads to, illegal addresses included.
    {"masked_v_not_zeroed", streaming, masked_value_not_zeroed,
     "V is loaded without the mask and multiplied by the masked lanes' zero weight",
     "V loaded without the mask, so 0 * NaN from a recycled slot leaks into the output"},
    // `m_i = tl.zeros(...)` for `tl.full(..., -inf)`: when every logit is very negative, the row is 0/0 = NaN.
    {"max_init_zero", streaming, max_initialised_to_zero, "the running max starts at 0 instead of -inf",
     "running max initialised with zeros instead of -inf"},
    // Two blocks sliced at the first one's id for wider loads: right only where the allocator placed them so
    // (hw-native-sys/pypto#470: "the block table cannot be read contiguously").
    {"paired_block_load", streaming, paired_block_load,
     "logical blocks 2i and 2i + 1 are loaded from one table entry, as if physically adjacent",
     "block table read as if consecutive logical blocks were physically adjacent"},
    // `acc = tl.zeros(..., dtype=v.dtype)`, or `tl.dot(p.to(v.dtype), v, acc)` with a bf16 acc.
    {"pv_in_bf16", streaming, pv_accumulated_in_bf16, "the weighted-V accumulator is kept in bf16 instead of fp32",
     "PV accumulated in the storage dtype instead of fp32"},
    // A pre-scaled Q that no caller scales, or a scale not passed through (vllm-project/vllm#32149 fixed one).
    {"scale_missing", streaming, scale_not_applied, "the softmax scale is never applied",
     "softmax scale not passed through to the kernel"},
    // The caller pre-scales Q and the kernel scales again. Exact only when every logit is equal.
    {"scale_twice", streaming, scale_applied_twice, "the softmax scale is applied twice",
     "softmax scale applied by both the caller and the kernel"},
    // Sinks (gpt-oss) start the state at m = sink, l = 1; written l = 0, the sink raises the max with no weight.
    {"sink_not_in_denom", streaming, sink_not_in_denominator,
     "the sink starts the running max but its weight never joins the denominator",
     "sink-initialised online softmax with the running sum started at 0 instead of 1"},
    // Launchers avoiding inf (`nan_to_num`, a clamp to -6e4): a head without a sink wins over a row whose every
    // logit is below -6e4. The class of masked_score_sentinel.
    {"sink_sentinel", streaming, sink_sentinel, "a head's -inf sink (no sink) is passed as the finite sentinel -6e4",
     "-inf stood in for by a finite sentinel that wins when every real logit is below it"},
    // FlashAttention computes cap * tanh(qk * (scale / cap)); folded on the wrong side, the scale comes after.
    // Right for scale 1, nearly so in tanh's linear part.
    {"softcap_before_scale", streaming, soft_cap_before_scale,
     "the soft cap is applied to the unscaled logit, then scaled: cap * tanh(qk / cap) * scale",
     "softmax scale folded on the wrong side of the soft cap"},
    // Triton before libdevice tanh: 2 sigmoid(2x) - 1 keeps few of x's bits near 0; a cap far above the logits
    // mangles them.
    {"softcap_tanh_from_sigmoid", streaming, soft_cap_tanh_from_sigmoid,
     "the soft cap's tanh is 2 / (1 + exp(-2x)) - 1, which cancels for small arguments",
     "tanh built from exp or sigmoid, with catastrophic cancellation near zero"},
    // An atomic-counter or atomicAdd reduce (split-K GEMMs, FlashAttention-2's backward), modelled by a launch
    // counter: each result within bound, in a kernel claiming determinism.
    {"splitk_arrival_order", splitk, reduce_order_from_arrival,
     "the split-K reduce merges partials in arrival order, which changes from run to run",
     "split-K reduce in completion order, which breaks determinism"},
    // Invisible with one split.
    {"splitk_boundary_key_twice", splitk, split_boundary_key_twice,
     "split i folds keys [i * split, (i + 1) * split] inclusive: each boundary key counts twice",
     "split key ranges with an inclusive end"},
    // `range(num_splits - 1)`, or a floor split count: the newest keys never reach the output.
    {"splitk_drops_last_split", splitk, reduce_drops_last_split, "the split-K reduce stops one split early",
     "split-K reduce loop one split short"},
    // Splitting only a grid too small to fill the machine: the batch variance of "Defeating Nondeterminism in LLM
    // Inference" (Thinking Machines, 2025), in many split-KV schedulers (ROCm/aiter#4378,
    // sgl-project/sgl-flash-attn#43, Dao-AILab/flash-attention#1897).
    {"splitk_from_batch_size", splitk, splits_from_batch_size,
     "splits the keys only when the (sequence, head) grid is small: a row depends on its batch",
     "split-KV decision taken from the batch size, which breaks batch invariance"},
    // The per-split max (or log-sum-exp) never written or never read. Right when every split has the same max.
    {"splitk_ignores_split_max", splitk, reduce_ignores_split_max,
     "the split-K reduce sums partial states without rescaling them by exp(m_i - m)",
     "flash-decoding reduce without the per-split max"},
    // Each split started from the sink, as the single-pass kernel starts its state. Right with one split.
    {"splitk_sink_per_split", splitk, sink_per_split,
     "every split starts from the sink, so the reduce counts it once per split",
     "attention sink joined in every split of a split-KV kernel instead of once in the reduce"},
    // Two adjacent scale arguments swapped. Invisible while the scales are equal (1 in engines without calibration).
    {"fp8_k_scaled_by_v_scale", streaming, fp8_k_scaled_by_v_scale,
     "K from an fp8 cache is dequantised with the V scale", "fp8 KV-cache scales swapped between K and V"},
    // "fp8" is e4m3 in one engine and e5m2 in another: values, ranges and NaN encodings all differ.
    {"fp8_format_swapped", streaming, fp8_format_swapped,
     "the fp8 cache's bytes are decoded as the other format (e4m3 as e5m2, e5m2 as e4m3)",
     "an fp8 kernel instantiated for e5m2 reading an e4m3 cache, or the reverse"},
    // The pipelined loop's last prefetch follows the id past the row: an illegal address unless a valid block
    // (vllm-project/flash-attention#42 fixed a read off the end of the block_table).
    {"table_prefetch_past_row", streaming, table_prefetch_past_row,
     "the pipelined loop prefetches the next tile's block through the table with no bound check",
     "pipelined prefetch of the next block id without a bound check"},
    // The launcher's length misses the newest token: a one-token context becomes 0/0 = NaN.
    {"tail_one_too_few", streaming, tail_one_too_few,
     "the ragged-tail mask is t < context_len - 1: the newest key is dropped",
     "seq_lens / context_lens confusion in a paged-attention launcher: the length misses the newest token"},
    // `t <= context_len`, or the new token counted twice: a decode row reads a stale slot or the next entry's
    // block. Prefill rows are saved by their causal mask.
    {"tail_one_too_many", streaming, tail_one_too_many, "the ragged-tail mask is t <= context_len: one key too many",
     "ragged-tail mask `<=` for `<`: one slot past the context"},
    // FlashInfer's window_left is window - 1; vLLM's and Mistral's sliding_window is window. Invisible while the
    // window holds the whole history.
    {"window_one_too_many", streaming, window_one_too_many,
     "the sliding window lets key position - window through: window + 1 keys",
     "sliding-window size passed as window_left, or window_left as the size: off by one"},
};

// The whole table joins the registry at static initialisation, as PACHECK_REGISTER_VARIANT does for one.
[[maybe_unused]] const bool kRegistered = [] {
  for (const MutantSpec& spec : kCatalogue) Registry::instance().add(std::make_unique<Mutant>(spec));
  return true;
}();

}  // namespace

std::span<const MutantSpec> catalogue() { return kCatalogue; }

const Variant& Mutant::counterpart() const { return Registry::instance().get(counterpart_name(spec_.kernel)); }

std::string Mutant::description() const {
  return std::string(counterpart_name(spec_.kernel)) + " with one bug: " + std::string(spec_.bug_description);
}

Capabilities Mutant::capabilities() const {
  Capabilities c = counterpart().capabilities();
  c.is_mutant = true;
  c.logit_options = LogitOptionSupport::all();  // the meta-kernel computes every option, as the CPU kernels do
  return c;
}

Output Mutant::run(const Problem& problem, const Knobs& knobs) const {
  return run_kernel(spec_.kernel, problem, knobs, spec_.bug, launches_++);
}

ErrorModel Mutant::error_model(const Problem& problem, const OracleResult& oracle, std::size_t row,
                               const Knobs& knobs) const {
  return counterpart().error_model(problem, oracle, row, knobs);
}

}  // namespace pacheck::mutants
