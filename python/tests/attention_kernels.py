# Paged-attention kernels in numpy for the tests: a correct online softmax with logit options and fp8 caches, and
# planted-bug copies.
import numpy as np

import pacheck

# Every kernel here takes every dtype, mode and head dim, and is the fp32 online softmax that the stock model of that
# name bounds (logits and sums in fp32, exp rounded from double).
CAPABILITIES = {"dtypes": ["fp32", "fp16", "bf16"], "modes": ["decode", "prefill", "continuation"],
                "max_head_dim": 256}
# They compute every logit option (the stock model adds their fp32 cost) and read both fp8 cache formats (every
# model adds the dequantisation's fp32 roundings).
ALL_OPTIONS = ["soft_cap", "window", "alibi_slopes", "sinks"]
WITH_OPTIONS = dict(CAPABILITIES, logit_options=ALL_OPTIONS)
WITH_FP8 = dict(WITH_OPTIONS, fp8_caches=["fp8_e4m3", "fp8_e5m2"])
ERROR_MODEL = "fp32_online_softmax"
# Every logit option, for four query heads.
EVERY_OPTION = dict(soft_cap=2.5, window=6, alibi_slopes=[0.5, 0.25, -0.125, 0.0],
                    sinks=[float("-inf"), 0.5, -1.0, 2.0])


def declare(kernel, capabilities=CAPABILITIES, name="kernel"):
    """The kernel declared to the bridge with ERROR_MODEL: .run(problem) returns its output as pacheck reads it."""
    return pacheck._pacheck.DeclaredKernel(kernel, name, capabilities, ERROR_MODEL)


def round_to_bf16(x):
    """float32 values rounded to the nearest bf16 value (ties to even), kept as float32."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return np.where(np.isnan(x), x, rounded.view(np.float32))


def in_output_dtype(out, dtype):
    """The fp32 result stored the way a kernel stores it: float16 for fp16, bf16 values for bf16."""
    if dtype == "fp16":
        with np.errstate(over="ignore"):  # values past fp16's range round to inf, as a kernel's store does
            return out.astype(np.float16)
    if dtype == "bf16":
        return round_to_bf16(out)
    return out


def exp_fp32(x):
    """exp in double rounded to float32: within half an ulp, inside the stock model's two."""
    return np.exp(x.astype(np.float64)).astype(np.float32)


def tanh_fp32(x):
    """tanh in double rounded to float32: within half an ulp, inside the two that a soft cap's model allows."""
    return np.tanh(x.astype(np.float64)).astype(np.float32)


def dequantised(gathered, scales):
    """An fp8 cache's gathered values [keys, num_kv_heads, head_dim] times their scales (one or one per KV head),
    one float32 rounding each."""
    return gathered * scales[None, :, None]  # a per-tensor scale, shape [1], broadcasts over the heads


def online_softmax_attention(problem, *, mask_shift=0, rescale_accumulator=True, alibi_sign=1, v_scale_on_k=False,
                             v_scale_last=False, tanh_error=0.0):
    """Attention over the paged KV cache by an online softmax over tiles of problem.tile_size keys, vectorised over
    a sequence's queries and heads, with the logit options in fp32 and an fp8 cache dequantised in fp32. Planted bugs:
    mask_shift > 0 lets each query see that many future keys; rescale_accumulator=False forgets to rescale the running
    sum of V when the max rises; alibi_sign=-1 flips the ALiBi bias; v_scale_on_k=True multiplies K by the V scales.
    v_scale_last=True stores P V over the stored values in the dtype, then multiplies it by the V scales and stores it
    again (as FlashInfer's fp8 decode wrapper does); tanh_error is the soft cap's tanh's relative error."""
    queries, k_pool, v_pool = problem.queries, problem.k_pool, problem.v_pool
    heads, dim, ratio = problem.num_query_heads, problem.head_dim, problem.gqa_ratio
    scale = np.float32(problem.scale)
    soft_cap = None if problem.soft_cap is None else np.float32(problem.soft_cap)
    slopes = None if problem.alibi_slopes is None else np.float32(alibi_sign) * problem.alibi_slopes
    # A sink is a first key whose value is zero: the running max starts at it, the denominator at exp(0) = 1.
    sinks = np.full(heads, -np.inf, dtype=np.float32) if problem.sinks is None else problem.sinks
    out = np.empty(queries.shape, dtype=np.float32)
    starts = problem.query_starts
    for s, seq in enumerate(problem.sequences):
        context, count = seq.context_len, seq.num_queries
        blocks = np.asarray(seq.block_table[: -(-context // problem.block_size)])
        keys = k_pool[blocks].reshape(-1, problem.num_kv_heads, dim)[:context]
        values = v_pool[blocks].reshape(-1, problem.num_kv_heads, dim)[:context]
        if problem.kv_cache is not None:
            keys = dequantised(keys, problem.v_scales if v_scale_on_k else problem.k_scales)
            values = values if v_scale_last else dequantised(values, problem.v_scales)
        keys, values = np.repeat(keys, ratio, axis=1), np.repeat(values, ratio, axis=1)
        q = np.array(queries[starts[s]:starts[s + 1]])  # [count, heads, dim]
        positions = np.arange(context - count, context)
        first = np.zeros_like(positions) if problem.window is None else positions - problem.window + 1
        running_max = np.broadcast_to(sinks, (count, heads)).astype(np.float32)
        denominator = np.where(np.isneginf(running_max), np.float32(0), np.float32(1))
        accumulator = np.zeros((count, heads, dim), dtype=np.float32)
        # Keys before every query's window are never read: they may hold anything (a weight of 0 times an inf is NaN).
        for start in range(max(0, int(first.min())), context, problem.tile_size):
            k, v = keys[start:start + problem.tile_size], values[start:start + problem.tile_size]
            keys_at = np.arange(start, start + len(k))
            logits = np.einsum("qhd,thd->qht", q, k) * scale
            if soft_cap is not None:
                logits = soft_cap * (tanh_fp32(logits / soft_cap) * np.float32(1 + tanh_error))
            if slopes is not None:
                offsets = (keys_at[None, :] - positions[:, None]).astype(np.float32)  # t - pos, exact
                logits = logits + slopes[None, :, None] * offsets[:, None, :]
            visible = (keys_at[None, :] <= positions[:, None] + mask_shift) & (keys_at[None, :] >= first[:, None])
            logits = np.where(visible[:, None, :], logits, np.float32(-np.inf))
            new_max = np.maximum(running_max, logits.max(axis=-1))
            # Rows that have seen no key yet keep a max of -inf: subtract 0 there so exp gives 0, not NaN.
            shift = np.where(np.isneginf(new_max), np.float32(0), new_max)
            alpha = exp_fp32(running_max - shift)
            weights = exp_fp32(logits - shift[..., None])
            denominator = denominator * alpha + weights.sum(axis=-1, dtype=np.float32)
            carried = accumulator * alpha[..., None] if rescale_accumulator else accumulator
            accumulator = carried + np.einsum("qht,thd->qhd", weights, v)
            running_max = new_max
        out[starts[s]:starts[s + 1]] = accumulator / denominator[..., None]
    if v_scale_last and problem.kv_cache is not None:
        v_scales = np.repeat(np.broadcast_to(problem.v_scales, (problem.num_kv_heads,)), ratio)  # per query head
        out = in_output_dtype(out, problem.dtype).astype(np.float32) * v_scales[None, :, None]
    return in_output_dtype(out, problem.dtype)


def reference_kernel(problem):
    return online_softmax_attention(problem)


def mask_off_by_one_kernel(problem):
    return online_softmax_attention(problem, mask_shift=1)


def unrescaled_accumulator_kernel(problem):
    return online_softmax_attention(problem, rescale_accumulator=False)


def alibi_sign_flipped_kernel(problem):
    return online_softmax_attention(problem, alibi_sign=-1)


def fp8_v_scale_on_k_kernel(problem):
    return online_softmax_attention(problem, v_scale_on_k=True)


def fp8_v_scale_last_kernel(problem):
    return online_softmax_attention(problem, v_scale_last=True)


def approximate_tanh_kernel(problem):
    return online_softmax_attention(problem, tanh_error=2.0 ** -11)
