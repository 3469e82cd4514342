# FlashInfer's paged-attention wrappers as pacheck kernels: each takes a pacheck.Problem and returns its output, with
# the capabilities and error model FlashInfer's arithmetic has.
"""FlashInfer's BatchDecodeWithPagedKVCacheWrapper (on the CUDA cores and on the tensor cores, over fp16/bf16 pages
and over fp8 pages with per-tensor scales) and BatchPrefillWithPagedKVCacheWrapper, declared for pacheck.
check_flashinfer.py runs the catalogue on them.

The paged layout maps one to one: pacheck's pools [num_blocks, block_size, num_kv_heads, head_dim] are FlashInfer's
NHD pages; a sequence's pages are the first ceil(context_len / block_size) entries of its block table, and its last
page holds context_len - (pages - 1) * block_size keys."""
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
    """FlashInfer's window_left for the problem's window: it keeps keys with pos - t <= window_left, pacheck's window
    the last `window` positions (pos - t < window); -1 is no window."""
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
    """The decode wrapper; an fp8 cache (problem.kv_cache) arrives as torch.float8_e4m3fn / float8_e5m2 pages with
    run()'s per-tensor k_scale and v_scale. The wrapper takes one scale per tensor, so a cache with scales per KV head
    runs one KV head (and its query heads) at a time, each with its own head's scales."""
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
    # FlashAttention-2's kernels: the sm90 (FlashAttention-3) backend, which "auto" picks on Hopper for some shapes, is
    # a kernel of its own to declare and check.
    wrapper = flashinfer.BatchPrefillWithPagedKVCacheWrapper(_workspace_buffer(), "NHD", backend="fa2")
    wrapper.plan(x.query_starts, indptr, indices, last, problem.num_query_heads, problem.num_kv_heads,
                 problem.head_dim, problem.block_size, causal=True, sm_scale=problem.scale,
                 window_left=_window_left(problem), logits_soft_cap=problem.soft_cap, q_data_type=x.queries.dtype,
                 kv_data_type=x.k_pool.dtype)
    return wrapper.run(x.queries, (x.k_pool, x.v_pool))


# FlashInfer JIT-compiles a module per head dim and dtype (about half a minute each): check_flashinfer.py takes the
# head dims to check (--head-dims, default 128, the head dim serving uses most). Page sizes: any. fp32 is not a
# storage FlashInfer's paged kernels take.
HEAD_DIMS = [128]

# The error models (oracle/ERROR_MODEL.md, "Declaring a model for an external kernel"), from FlashInfer's arithmetic
# and from what pacheck found on the H200 (examples/flashinfer/README.md gives each finding):
#  - every kernel folds the scale into log2(e) and takes exp2 with ex2.approx.ftz: within 2 ulp, subnormal weights
#    flushed (2^-126 a weight);
#  - a soft cap's tanh is tanh.approx.f32, within 2^-10.987 relative (the PTX ISA's figure): 2^13.013 u of the capped
#    logit, declared as soft_cap_logit_constant so that it counts only where a problem has a soft cap;
#  - the decode kernel on the CUDA cores keeps P in fp32, but where it splits a long history it rounds partial
#    outputs to the output dtype before merging them in fp32, up to twice along a term's path (2^-9 relative in bf16,
#    2^-11 in fp16 each: 2^15 or 2^13 in units of u), and in fp16 a partial below the normal range loses up to 2^-25
#    absolute, which merge weights summing to 1 keep at 2^-25 in the output;
#  - the tensor-core kernels multiply the queries by the scale in the input dtype (one rounding of every logit's
#    factors: 2^-9 or 2^-11 of its magnitude), form each logit by mma (72 u per 16-element step), round P to the
#    input dtype before the P V mma (on the numerator only; in fp16 a weight below 2^-14 is subnormal there and loses
#    up to 2^-25 absolute), and each later mma over 16 keys adds 72 u.
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


# The logit options declared (README.md, "Logit options", gives what they found): the sliding window, a mask that adds
# no arithmetic, and the soft cap (logits_soft_cap), whose tanh.approx.f32 the models above declare. ALiBi is left out
# because the wrappers take only FlashInfer's own slopes (pos_encoding_mode="ALIBI"), not given ones; sinks because
# the paged wrappers' default backends do not take them.
LOGIT_OPTIONS = ["window", "soft_cap"]
# The tensor-core decode over fp8 pages declares the window alone: no check of its soft cap has finished on a GPU
# (README.md, "Logit options").
TC_FP8_LOGIT_OPTIONS = ["window"]


# fp8 caches (README.md, "fp8 caches"): the decode kernels read fp8 pages by converting each value to fp32 or to the
# query dtype, exactly (every e4m3 and e5m2 value is an fp16 and a bf16 value), and fold k_scale into sm_scale
# (sm_scale * k_scale rounded once to fp32), both within the one rounding of each logit term that pacheck adds to
# every declared model for an fp8 cache. The wrapper applies v_scale after the kernel, as `out *= v_scale` on the
# output already rounded to its dtype: one more rounding of the output in that dtype (2^15 or 2^13 u on every term,
# as chain_constant), beyond the V rounding pacheck adds. Before v_scale, the kernel's partial outputs (split
# histories keep them in the output dtype) and its output are in the stored values' units, where each rounding
# loses up to 2^-25 in fp16 (half its subnormal spacing) or 2^-126 in bf16 (a subnormal flushed); v_scale multiplies
# both losses (absolute_error_per_v_scale).
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
    for dtype in ("bf16", "fp16"):
        out.append((f"flashinfer_decode_{dtype}", lambda p: decode(p, tensor_cores=False),
                    {"dtypes": [dtype], "modes": ["decode"], "head_dims": head_dims, "gqa_ratios": decode_gqa,
                     "logit_options": LOGIT_OPTIONS},
                    cuda_core_model(dtype)))
        out.append((f"flashinfer_decode_tc_{dtype}", lambda p: decode(p, tensor_cores=True),
                    {"dtypes": [dtype], "modes": ["decode"], "head_dims": head_dims, "logit_options": LOGIT_OPTIONS},
                    tensor_core_model(dtype)))
        for fp8 in FP8_CACHES:  # one entry per format: a failure names the format it came from
            out.append((f"flashinfer_decode_{fp8}_{dtype}", lambda p: decode(p, tensor_cores=False),
                        {"dtypes": [dtype], "modes": ["decode"], "head_dims": head_dims, "gqa_ratios": decode_gqa,
                         "logit_options": LOGIT_OPTIONS, "fp8_caches": [fp8]},
                        fp8_model(cuda_core_model(dtype), dtype)))
            out.append((f"flashinfer_decode_tc_{fp8}_{dtype}", lambda p: decode(p, tensor_cores=True),
                        {"dtypes": [dtype], "modes": ["decode"], "head_dims": head_dims,
                         "logit_options": TC_FP8_LOGIT_OPTIONS, "fp8_caches": [fp8]},
                        fp8_model(tensor_core_model(dtype), dtype)))
        # The prefill plan divides the work by the whole batch, so a sequence's output depends on its batch.
        out.append((f"flashinfer_prefill_{dtype}", prefill,
                    {"dtypes": [dtype], "modes": ["decode", "prefill", "continuation"], "head_dims": head_dims,
                     "batch_invariant": False, "logit_options": LOGIT_OPTIONS},
                    tensor_core_model(dtype)))
    return out
