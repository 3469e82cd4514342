// The mutant catalogue: one row per mutant, the one registration that puts every row in the registry, and the
// Mutant variant each row becomes.
//
// A row is a name, the kernel it breaks, its bug, a one-line description of what the bug does (`pacheck list` and
// `pacheck mutants` print it) and the real mistake it stands for; the comment above each row says where real
// kernels made that mistake. The bugs themselves are not written here: each is a switch in one meta-kernel
// (buggy_kernels.h, buggy_kernels.cpp), the CPU streaming and split-K loops written once more. With Bug::none that
// meta-kernel is bit-identical to the correct kernels (cpu_streaming, cpu_splitk), as
// MutantKernels.WithoutTheirBugAreBitIdenticalToTheCorrectKernels (tests/properties/kill_matrix_test.cpp) proves
// for every kernel it has, so each mutant is a correct kernel plus exactly the bug of its row.
//
// Adding a mutant: a Bug value and its switch in buggy_kernels.*, then a row here. tests/variants/registry_test.cpp
// checks the table (unique names, each bug used once, every row registered); kill_matrix_test checks that some
// property kills the new mutant.
#include <memory>

#include "variants/mutants/mutant.h"

namespace pacheck::mutants {
namespace {

// Columns: name, kernel, bug, what the bug does, the bug class it stands for.
constexpr MutantSpec kCatalogue[] = {
    // When a tile raises the running max, the denominator is rescaled by exp(m_old - m_new) but the weighted-V
    // accumulator is not, so keys folded before the new max keep weights relative to the old one. The classic
    // first-draft online-softmax bug; invisible when the first tile holds the row's max.
    {"acc_not_rescaled", Kernel::streaming, Bug::accumulator_not_rescaled,
     "the accumulator is not rescaled by exp(m_old - m_new) when the running max grows",
     "online-softmax rescale of the accumulator dropped when porting the FlashAttention loop"},
    // A GQA kernel whose program handles one KV head and its group of query heads looks the ALiBi slope up by the
    // program's head index, the KV head. Right for MHA; with groups, every query head of a group takes one slope,
    // and not its own.
    {"alibi_kv_head_slope", Kernel::streaming, Bug::alibi_slope_of_kv_head,
     "query head h takes the ALiBi slope of its KV head instead of its own",
     "per-query-head parameter indexed by the KV head in a GQA-packed kernel"},
    // The distance taken as q_pos - k_pos where the bias needs k_pos - q_pos (or a slope table stored negated):
    // older keys gain instead of losing, the opposite recency bias. Invisible on a row's own key (distance 0).
    {"alibi_sign_flipped", Kernel::streaming, Bug::alibi_sign_flipped,
     "the ALiBi bias is slope * (pos - t): older keys gain instead of losing",
     "ALiBi distance with the wrong sign: query minus key where key minus query was meant"},
    // The causal mask compares with the wrong side of the diagonal (`k_pos <= q_pos + 1`, or a query position
    // counted from 1), so every prefill or continuation query but the last sees one future key. Decode rows rely
    // on the tail mask alone and are unaffected.
    {"causal_off_by_one", Kernel::streaming, Bug::causal_off_by_one, "the causal mask lets key position + 1 through",
     "causal mask off by one: `<=` for `<`, or query positions counted from 1"},
    // Query i sees keys 0 ..= i, the convention of PyTorch's SDPA and of FlashAttention before 2.1, instead of the
    // bottom-right diagonal a KV cache needs (query i sits at position context_len - num_queries + i). Identical
    // for prefill; a continuation after a past loses most of its history (the same family as the query-offset bug
    // fixed in openai/gpt-oss#196).
    {"causal_top_left", Kernel::streaming, Bug::causal_top_left,
     "the causal mask is aligned top-left: query i sees keys 0 ..= i",
     "causal diagonal anchored top-left, as in SDPA, where a KV cache needs it bottom-right"},
    // A prefix-sharing (cascade) path that processes the blocks two tables share once, as full blocks: right for a
    // shared prefix, wrong for forks (parallel sampling, beam search) that share a partially filled tail until
    // copy-on-write, where the shorter fork reads the longer one's keys, or poison, past its own length.
    {"shared_tail_read_whole", Kernel::streaming, Bug::shared_tail_read_whole,
     "a tail block another sequence's table also holds is read to its end, past the sequence's length",
     "a shared block assumed full: forks that share a partial tail read past their length"},
    // The mirror image of acc_not_rescaled: `l_i = l_i + sum(p)` instead of `l_i = l_i * alpha + sum(p)`, so
    // outputs shrink whenever the max grows after the first tile.
    {"denom_not_rescaled", Kernel::streaming, Bug::denominator_not_rescaled,
     "the denominator is not rescaled when the running max grows",
     "online-softmax rescale of the running sum dropped"},
    // exp as 2^(x log2 e), 2^f from a degree-2 polynomial: ~1.7e-3 relative error where expf is within an ulp.
    // Kernels emulate exp2 on the FMA pipes to relieve the SFU (FlashAttention-4 does on Blackwell, with a higher
    // degree); one degree too few is a precision bug that only the error bound sees.
    {"exp_poly2", Kernel::streaming, Bug::approximate_exp,
     "exp from a degree-2 polynomial for 2^f: about 1.7e-3 relative error",
     "software exp2 on the FMA pipes with a polynomial one degree too low"},
    // The "tile" layout instead of the "repeat" layout every GQA model uses. Right for MHA and MQA, wrong for every
    // other GQA shape; jax-js shipped it (fixed in ekzhang/jax-js#180: "should be repeat instead of tile").
    {"gqa_head_modulo", Kernel::streaming, Bug::gqa_head_modulo,
     "query head h reads KV head h % num_kv_heads instead of h / ratio",
     "GQA query heads mapped to KV heads by tiling instead of repeating"},
    // Kernels specialised on power-of-two group sizes shift by log2 of the group size; handed a ratio of 3, 5, 6
    // or 7 (Qwen2.5-7B has 28 query heads over 4 KV heads) the floor(log2) shift sends heads to the wrong KV head,
    // past the last one included (compare the non-divisible GQA shapes of fla-org/flash-linear-attention#1029).
    {"gqa_head_shift", Kernel::streaming, Bug::gqa_head_shift,
     "query head h reads KV head h >> floor(log2(ratio)): wrong unless the GQA ratio is a power of two",
     "GQA group found by a shift that assumes a power-of-two group size"},
    // `num_keys // BLOCK_N` instead of `cdiv(num_keys, BLOCK_N)`: a history shorter than one tile becomes
    // 0/0 = NaN. Invisible whenever the tile size divides the row's key count.
    {"last_partial_tile_skipped", Kernel::streaming, Bug::last_partial_tile_skipped,
     "the tile count is floor(keys / tile) instead of ceil: the last partial tile is skipped",
     "tile count by floor division instead of cdiv"},
    // `tl.load(..., mask=m, other=0.0)` feeding the softmax directly, or `tl.where(mask, qk, 0)`: each lane past
    // the ragged tail or the causal limit adds exp(0 - m) to the denominator and its (zero or future) V to the
    // accumulator.
    {"masked_score_zero", Kernel::streaming, Bug::masked_score_zero,
     "masked lanes are scored 0 (the masked load's fill value) instead of -inf",
     "the masked load's fill value used as a score instead of -inf"},
    // `-1e4` or `-6e4` (fp16's safe range) for -inf in the mask, so that the scores stay finite: harmless while the
    // real logits sit near zero, wrong once every logit of a row lies below the sentinel (large |q|, |k|, a scale
    // of 1), where the masked lanes outweigh every real key.
    {"masked_score_sentinel", Kernel::streaming, Bug::masked_score_sentinel,
     "masked lanes are scored -6e4, a finite sentinel, instead of -inf",
     "a finite mask sentinel that wins when every real logit is below it"},
    // Scores are masked correctly, but every lane's V is multiplied by its weight: a masked lane contributes 0 * V,
    // which is NaN when the slot past the context holds a recycled block's NaN or Inf (the same leak as
    // pytorch/pytorch#101967, SDPA returning NaN for NaN in masked-out positions). Lanes past the table row read
    // whatever the table leads to, illegal addresses included.
    {"masked_v_not_zeroed", Kernel::streaming, Bug::masked_value_not_zeroed,
     "V is loaded without the mask and multiplied by the masked lanes' zero weight",
     "V loaded without the mask, so 0 * NaN from a recycled slot leaks into the output"},
    // `m_i = tl.zeros(...)` where `tl.full(..., -inf)` was meant. Harmless while some logit is >= 0; when every
    // logit is very negative, exp(s - 0) underflows to 0 for every key and the row is 0/0 = NaN.
    {"max_init_zero", Kernel::streaming, Bug::max_initialised_to_zero, "the running max starts at 0 instead of -inf",
     "running max initialised with zeros instead of -inf"},
    // To issue fewer, wider loads the kernel walks the history two blocks at a time, slicing both out of the pool
    // at the first block's id. Right only where the allocator happened to place them so; a shuffled pool reads
    // other blocks (a reviewer caught exactly this in hw-native-sys/pypto#470: "the block table cannot be read
    // contiguously").
    {"paired_block_load", Kernel::streaming, Bug::paired_block_load,
     "logical blocks 2i and 2i + 1 are loaded from one table entry, as if physically adjacent",
     "block table read as if consecutive logical blocks were physically adjacent"},
    // `acc = tl.zeros(..., dtype=v.dtype)`, or `tl.dot(p.to(v.dtype), v, acc)` with a bf16 acc: every rescale and
    // every add rounds to 8 significant bits. Nothing is "wrong" but the error, so only the error bound sees it.
    {"pv_in_bf16", Kernel::streaming, Bug::pv_accumulated_in_bf16,
     "the weighted-V accumulator is kept in bf16 instead of fp32",
     "PV accumulated in the storage dtype instead of fp32"},
    // The kernel expects a pre-scaled Q that no caller scales, or the scale argument is not passed through
    // (vllm-project/vllm#32149 fixed one such missing scale).
    {"scale_missing", Kernel::streaming, Bug::scale_not_applied, "the softmax scale is never applied",
     "softmax scale not passed through to the kernel"},
    // The caller pre-scales Q (as several prefill paths do) and the kernel multiplies the logits by the scale
    // again. The softmax gets sharper or flatter; exact only when every logit is equal.
    {"scale_twice", Kernel::streaming, Bug::scale_applied_twice, "the softmax scale is applied twice",
     "softmax scale applied by both the caller and the kernel"},
    // Attention sinks (gpt-oss) in a streaming kernel start the state from the sink: m = sink and l = 1, the sink's
    // exp(sink - sink). Written as l = 0, the zero of every other init, the sink raises the max but carries no
    // weight: the row comes out as if it had no sink (or 0/0 when the sink is far above every key).
    {"sink_not_in_denom", Kernel::streaming, Bug::sink_not_in_denominator,
     "the sink starts the running max but its weight never joins the denominator",
     "sink-initialised online softmax with the running sum started at 0 instead of 1"},
    // The launcher keeps the sinks finite, as kernels that avoid inf arithmetic do (`nan_to_num`, a clamp to
    // -6e4 for fp16's range): a head without a sink (-inf) gets the sink -6e4, which loses to every usual logit
    // and wins over a row whose every logit lies below it. The same class as masked_score_sentinel.
    {"sink_sentinel", Kernel::streaming, Bug::sink_sentinel,
     "a head's -inf sink (no sink) is passed as the finite sentinel -6e4",
     "-inf stood in for by a finite sentinel that wins when every real logit is below it"},
    // FlashAttention folds the softmax scale into the cap, computing cap * tanh(qk * (scale / cap)); folded on the
    // wrong side, the cap bends the unscaled logit and the scale comes after: cap * tanh(qk / cap) * scale. Right
    // when the scale is 1, and nearly so while the cap stays in tanh's linear part.
    {"softcap_before_scale", Kernel::streaming, Bug::soft_cap_before_scale,
     "the soft cap is applied to the unscaled logit, then scaled: cap * tanh(qk / cap) * scale",
     "softmax scale folded on the wrong side of the soft cap"},
    // Triton had no tanh until tl.math's libdevice bindings, and kernels wrote it as 2 * sigmoid(2x) - 1: exact
    // enough where tanh saturates, but near 0 the sum 1 + exp(-2x) keeps few of x's bits, so a cap far above
    // the logits (tanh's linear part) mangles them. Only the error bound, or a cap known to change nothing, sees it.
    {"softcap_tanh_from_sigmoid", Kernel::streaming, Bug::soft_cap_tanh_from_sigmoid,
     "the soft cap's tanh is 2 / (1 + exp(-2x)) - 1, which cancels for small arguments",
     "tanh built from exp or sigmoid, with catastrophic cancellation near zero"},
    // An atomic counter or atomicAdd accumulation, as split-K GEMMs and FlashAttention-2's backward use, modelled
    // by rotating the merge order with a per-instance launch counter. Each result is within the error bound; two
    // runs on the same input are not bit-identical, and the kernel claims to be deterministic.
    {"splitk_arrival_order", Kernel::splitk, Bug::reduce_order_from_arrival,
     "the split-K reduce merges partials in arrival order, which changes from run to run",
     "split-K reduce in completion order, which breaks determinism"},
    // The key at every split boundary is folded by two splits and counts twice. Invisible with one split.
    {"splitk_boundary_key_twice", Kernel::splitk, Bug::split_boundary_key_twice,
     "split i folds keys [i * split, (i + 1) * split] inclusive: each boundary key counts twice",
     "split key ranges with an inclusive end"},
    // `for i in range(num_splits - 1)`, or the split count computed with floor: the last split, the one holding
    // the newest keys, never reaches the output. A single split is written directly and stays right.
    {"splitk_drops_last_split", Kernel::splitk, Bug::reduce_drops_last_split,
     "the split-K reduce stops one split early", "split-K reduce loop one split short"},
    // The launcher splits the keys only when the (sequence, head) grid is too small to fill the machine, so the
    // same sequence is reduced in one order alone and another in a batch: each result within the error bound, not
    // the same bits, and the kernel claims batch invariance. The batch-variance source of "Defeating
    // Nondeterminism in LLM Inference" (Thinking Machines, 2025), shipped in many split-KV schedulers
    // (ROCm/aiter#4378, sgl-project/sgl-flash-attn#43, Dao-AILab/flash-attention#1897).
    {"splitk_from_batch_size", Kernel::splitk, Bug::splits_from_batch_size,
     "splits the keys only when the (sequence, head) grid is small: a row depends on its batch",
     "split-KV decision taken from the batch size, which breaks batch invariance"},
    // The flash-decoding reduce sums the splits' partial accumulators and denominators as they are: the per-split
    // max, or log-sum-exp, is never written or never read. Right when every split has the same max.
    {"splitk_ignores_split_max", Kernel::splitk, Bug::reduce_ignores_split_max,
     "the split-K reduce sums partial states without rescaling them by exp(m_i - m)",
     "flash-decoding reduce without the per-split max"},
    // A split-KV kernel starts every split's state from the sink, as the single-pass kernel starts its one state,
    // so the reduce adds the sink's weight once per split. Right with one split; each further split weighs the
    // sink once more.
    {"splitk_sink_per_split", Kernel::splitk, Bug::sink_per_split,
     "every split starts from the sink, so the reduce counts it once per split",
     "attention sink joined in every split of a split-KV kernel instead of once in the reduce"},
    // fp8 caches: a kernel takes K and V scales as two adjacent arguments of one type, and a call that passes them in
    // the wrong order, or a dequantise helper called with the wrong one, scales K by V's scale. Invisible while the
    // two scales are equal (a per-tensor scale of 1, the default of engines without calibration).
    {"fp8_k_scaled_by_v_scale", Kernel::streaming, Bug::fp8_k_scaled_by_v_scale,
     "K from an fp8 cache is dequantised with the V scale",
     "fp8 KV-cache scales swapped between K and V"},
    // "fp8" names e4m3 in one engine or backend and e5m2 in another, and a kernel instantiated for the other format
    // decodes every byte of the cache wrongly: values, ranges and the NaN encodings all differ.
    {"fp8_format_swapped", Kernel::streaming, Bug::fp8_format_swapped,
     "the fp8 cache's bytes are decoded as the other format (e4m3 as e5m2, e5m2 as e4m3)",
     "an fp8 kernel instantiated for e5m2 reading an e4m3 cache, or the reverse"},
    // The software-pipelined loop prefetches the next tile's block id and first key while the current tile
    // computes, and its last iteration follows whatever id lies past the end of the row. Harmless on a recycled
    // but valid block; an illegal address on an invalid one or past the table (vllm-project/flash-attention#42
    // fixed a read off the end of the block_table in the paged FlashAttention kernel).
    {"table_prefetch_past_row", Kernel::streaming, Bug::table_prefetch_past_row,
     "the pipelined loop prefetches the next tile's block through the table with no bound check",
     "pipelined prefetch of the next block id without a bound check"},
    // The kernel is handed (or computes) the context length without the newest token, so every row at the end of
    // its sequence misses its own key; a one-token context becomes 0/0 = NaN.
    {"tail_one_too_few", Kernel::streaming, Bug::tail_one_too_few,
     "the ragged-tail mask is t < context_len - 1: the newest key is dropped",
     "seq_lens / context_lens confusion in a paged-attention launcher: the length misses the newest token"},
    // `t <= context_len`, or the token being generated counted twice: a decode row reads one slot past its
    // context, the last block's stale tail slot or, at a block boundary, the block the next table entry names.
    // Prefill rows are saved by their causal mask.
    {"tail_one_too_many", Kernel::streaming, Bug::tail_one_too_many,
     "the ragged-tail mask is t <= context_len: one key too many",
     "ragged-tail mask `<=` for `<`: one slot past the context"},
    // FlashInfer's window_left counts the keys before the query (window - 1); vLLM's and Mistral's sliding_window
    // counts the query's own key too (window). Passing one for the other lets key position - window through: each
    // row sees window + 1 keys. Invisible while the window holds the whole history.
    {"window_one_too_many", Kernel::streaming, Bug::window_one_too_many,
     "the sliding window lets key position - window through: window + 1 keys",
     "sliding-window size passed as window_left, or window_left as the size: off by one"},
};

// The whole table joins the registry at static initialisation, as PACHECK_REGISTER_VARIANT does for one variant.
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
