# FlashInfer's paged-attention wrappers as pacheck kernels, with the capabilities and error models of their arithmetic.
"""FlashInfer's BatchDecodeWithPagedKVCacheWrapper (CUDA cores and tensor cores, fp16/bf16 or fp8 pages) and
BatchPrefillWithPagedKVCacheWrapper, declared for pacheck; check_flashinfer.py runs the catalogue on them (README.md).

pacheck's pools [num_blocks, block_size, num_kv_heads, head_dim] are FlashInfer's NHD pages; a sequence's pages are
the first ceil(context_len / block_size) entries of its block table."""
import torch

import pacheck

WORKSPACE_BYTES = 256 << 20
_workspace = None


def _workspace_buffer():
    global _workspace
    if _workspace is None:
        _workspace = torch.empty(WORKSPACE_BYTES, dtype=torch.uint8, device="cuda")
    return _workspace


def _paged_kv(problem, x):
    """FlashInfer's page indptr, page ids and last-page lengths for the problem's sequences."""
    indptr, indices, last = [0], [], []
    for s, seq in enumerate(problem.sequences):
        pages = (seq.context_len + problem.block_size - 1) // problem.block_size
        indices.extend(int(b) for b in problem.block_tables[s][:pages])
        indptr.append(indptr[-1] + pages)
        last.append(seq.context_len - (pages - 1) * problem.block_size)
    as_int = lambda values: torch.tensor(values, dtype=torch.int32, device="cuda")  # noqa: E731
    return as_int(indptr), as_int(indices), as_int(last)


def _window_left(problem):
    """FlashInfer keeps keys with pos - t <= window_left (-1: no window), pacheck the last `window` positions."""
    return -1 if problem.window is None else problem.window - 1


def _decode(problem, x, queries, k_pool, v_pool, *, tensor_cores, k_scale=None, v_scale=None):
    import flashinfer
    indptr, indices, last = _paged_kv(problem, x)
    wrapper = flashinfer.BatchDecodeWithPagedKVCacheWrapper(_workspace_buffer(), "NHD",
                                                            use_tensor_cores=tensor_cores)
    wrapper.plan(indptr, indices, last, queries.shape[1], k_pool.shape[2], problem.head_dim,
                 problem.block_size, pos_encoding_mode="NONE", window_left=_window_left(problem),
                 logits_soft_cap=problem.soft_cap, q_data_type=queries.dtype, kv_data_type=k_pool.dtype,
                 sm_scale=problem.scale)
    return wrapper.run(queries, (k_pool, v_pool), k_scale=k_scale, v_scale=v_scale)


def decode(problem, *, tensor_cores):
    """The decode wrapper. An fp8 cache arrives as torch float8 pages with run()'s per-tensor k_scale and v_scale; a
    cache with scales per KV head runs one KV head (and its query heads) at a time, each with its own scales."""
    x = pacheck.torch_inputs(problem, device="cuda")
    if problem.kv_cache is None:
        return _decode(problem, x, x.queries, x.k_pool, x.v_pool, tensor_cores=tensor_cores)
    k_scales, v_scales = problem.k_scales.tolist(), problem.v_scales.tolist()
    if len(k_scales) == len(v_scales) == 1:
        return _decode(problem, x, x.queries, x.k_pool, x.v_pool, tensor_cores=tensor_cores, k_scale=k_scales[0],
                       v_scale=v_scales[0])
    ratio, out = problem.gqa_ratio, torch.empty_like(x.queries)
    for g in range(problem.num_kv_heads):
        heads = slice(g * ratio, (g + 1) * ratio)
        out[:, heads] = _decode(problem, x, x.queries[:, heads].contiguous(), x.k_pool[:, :, g:g + 1].contiguous(),
                                x.v_pool[:, :, g:g + 1].contiguous(), tensor_cores=tensor_cores,
                                k_scale=k_scales[g if len(k_scales) > 1 else 0],
                                v_scale=v_scales[g if len(v_scales) > 1 else 0])
    return out


def prefill(problem):
    import flashinfer
    x = pacheck.torch_inputs(problem, device="cuda")
    indptr, indices, last = _paged_kv(problem, x)
    # FlashAttention-2: the FlashAttention-3 backend, which "auto" picks on Hopper for some shapes, is another kernel.
    wrapper = flashinfer.BatchPrefillWithPagedKVCacheWrapper(_workspace_buffer(), "NHD", backend="fa2")
    wrapper.plan(x.query_starts, indptr, indices, last, problem.num_query_heads, problem.num_kv_heads,
                 problem.head_dim, problem.block_size, causal=True, sm_scale=problem.scale,
                 window_left=_window_left(problem), logits_soft_cap=problem.soft_cap, q_data_type=x.queries.dtype,
                 kv_data_type=x.k_pool.dtype)
    return wrapper.run(x.queries, (x.k_pool, x.v_pool))


# FlashInfer JIT-compiles a module per head dim and dtype (about half a minute each), so the head dims are a choice
# (--head-dims; default 128, serving's most used). Page sizes: any. fp32 is not a storage its paged kernels take.
HEAD_DIMS = [128]

# The error models (oracle/ERROR_MODEL.md, "Declaring a model for an external kernel"), from FlashInfer's arithmetic
# and the H200 findings (README.md):
#  - exp2 by ex2.approx.ftz of logits scaled by log2(e): within 2 ulp, subnormal weights flushed (2^-126 a weight);
#  - a soft cap's tanh.approx.f32, within 2^-10.987 relative: 2^13.013 u of the capped logit, counted only with a cap;
#  - the CUDA-core decode keeps P in fp32, but a split history's partial outputs are rounded to the output dtype
#    before the fp32 merge, up to twice along a term's path (2^15 u in bf16, 2^13 u in fp16 each), and in fp16 a
#    partial below the normal range loses up to 2^-25 absolute, which merge weights summing to 1 keep;
#  - the tensor-core kernels scale the queries in the input dtype (one rounding of each logit's factors: 2^15 or
#    2^13 u), form each logit by mma (72 u per 16-element step), round P to the input dtype for the P V mma (numerator
#    only; in fp16 a weight below 2^-14 is subnormal and loses up to 2^-25), and each later 16-key mma adds 72 u.
def dtype_rounding(dtype):
    return 2.0 ** 15 if dtype == "bf16" else 2.0 ** 13


TANH_APPROX = 2.0 ** (24 - 10.987)


def cuda_core_model(dtype):
    return {"logit_constant": 3, "logit_per_head_dim": 1, "weight_constant": 8, "weight_per_record": 8,
            "chain_constant": 2 * dtype_rounding(dtype) + 4, "chain_per_key": 3, "chain_per_record": 1,
            "weight_underflow": 2.0 ** -126, "absolute_error": 0.0 if dtype == "bf16" else 2.0 ** -25,
            "soft_cap_logit_constant": TANH_APPROX}


def tensor_core_model(dtype):
    return {"logit_constant": dtype_rounding(dtype) + 4, "logit_per_head_dim": 72 / 16, "weight_constant": 8,
            "weight_per_record": 8, "chain_constant": dtype_rounding(dtype) + 8, "chain_per_key": 72 / 16 + 3,
            "chain_per_record": 1, "weight_underflow": 2.0 ** -126 if dtype == "bf16" else 2.0 ** -25,
            "soft_cap_logit_constant": TANH_APPROX}


# The logit options declared (README.md, "Logit options", says why): the window and the soft cap.
LOGIT_OPTIONS = ["window", "soft_cap"]


# fp8 caches (README.md, "fp8 caches", derives the terms): the wrapper's `out *= v_scale` on the output in its dtype
# is one more rounding (chain_constant); before it, each of the output's and a split partial's two roundings loses up
# to 2^-25 in fp16 or 2^-126 in bf16 (a flushed subnormal), which v_scale multiplies (absolute_error_per_v_scale).
FP8_CACHES = ["fp8_e4m3", "fp8_e5m2"]


def fp8_model(model, dtype):
    loss = 2.0 ** -126 if dtype == "bf16" else 2.0 ** -25
    return dict(model, chain_constant=model["chain_constant"] + dtype_rounding(dtype),
                absolute_error_per_v_scale=2 * loss)


def kernels(head_dims=None):
    """(name, callable, capabilities, error model) of every FlashInfer kernel pacheck checks."""
    head_dims = list(head_dims or HEAD_DIMS)
    out = []
    decode_gqa = [1, 2, 3, 4, 8]  # the decode kernel's compiled group sizes
    cuda_cores = lambda p: decode(p, tensor_cores=False)  # noqa: E731
    tensor_cores = lambda p: decode(p, tensor_cores=True)  # noqa: E731
    for dtype in ("bf16", "fp16"):
        def declared(modes=("decode",), **capabilities):
            return {"dtypes": [dtype], "modes": list(modes), "head_dims": head_dims, **capabilities}

        out.append((f"flashinfer_decode_{dtype}", cuda_cores,
                    declared(gqa_ratios=decode_gqa, logit_options=LOGIT_OPTIONS), cuda_core_model(dtype)))
        out.append((f"flashinfer_decode_tc_{dtype}", tensor_cores, declared(logit_options=LOGIT_OPTIONS),
                    tensor_core_model(dtype)))
        for fp8 in FP8_CACHES:  # one entry per format: a failure names the format it came from
            out.append((f"flashinfer_decode_{fp8}_{dtype}", cuda_cores,
                        declared(gqa_ratios=decode_gqa, logit_options=LOGIT_OPTIONS, fp8_caches=[fp8]),
                        fp8_model(cuda_core_model(dtype), dtype)))
            out.append((f"flashinfer_decode_tc_{fp8}_{dtype}", tensor_cores,
                        declared(logit_options=LOGIT_OPTIONS, fp8_caches=[fp8]),
                        fp8_model(tensor_core_model(dtype), dtype)))
        # The prefill plan divides the work by the whole batch, so a sequence's output depends on its batch.
        out.append((f"flashinfer_prefill_{dtype}", prefill,
                    declared(["decode", "prefill", "continuation"], batch_invariant=False,
                             logit_options=LOGIT_OPTIONS),
                    tensor_core_model(dtype)))
    return out
