# torch through the bridge: DLPack views, exact bf16/fp16 inputs, a torch kernel's output (CPU, CUDA), logit options,
# fp8 caches as torch float8.
import numpy as np
import pytest

import pacheck
from attention_kernels import CAPABILITIES, ERROR_MODEL, EVERY_OPTION, declare

torch = pytest.importorskip("torch")


def problem(dtype):
    return pacheck.make_problem(dtype=dtype, num_kv_heads=2, gqa_ratio=2, head_dim=16, block_size=4,
                                sequences=[(7, 1), (9, 9), (12, 4)], table_padding=1, seed=5)


def test_torch_reads_the_float_views_without_a_copy():
    p = problem("fp32")
    view = p.k_pool
    tensor = torch.from_dlpack(view)
    assert tensor.data_ptr() == view.__array_interface__["data"][0]
    assert torch.equal(tensor, torch.from_numpy(np.array(view)))


@pytest.mark.parametrize("dtype, torch_dtype", [("fp32", "float32"), ("fp16", "float16"), ("bf16", "bfloat16")])
def test_torch_inputs_hold_the_problem_values_in_its_dtype(dtype, torch_dtype):
    p = problem(dtype)
    x = pacheck.torch_inputs(p)
    for name in ("queries", "k_pool", "v_pool"):
        tensor = getattr(x, name)
        assert tensor.dtype == getattr(torch, torch_dtype)
        assert torch.equal(tensor.float(), torch.from_numpy(np.array(getattr(p, name))))
    for name in ("block_tables", "context_lens", "query_lens", "query_starts"):
        tensor = getattr(x, name)
        assert tensor.dtype == torch.int32
        assert torch.equal(tensor, torch.from_numpy(np.array(getattr(p, name))))


def torch_attention(problem, device="cpu", alibi_sign=1):
    """Attention in torch: one softmax over each row's keys in double, with the problem's logit options, rounded to
    the dtype once at the end (alibi_sign=-1 plants a bug: the ALiBi bias with its sign flipped).
    (torch's float32 CPU matmul rounds differently with the memory alignment of its inputs, which BatchIsolation
    catches; double products and sums round to the same float32 wherever the tensors lie.)"""
    x = pacheck.torch_inputs(problem, device=device)
    out = torch.empty(x.queries.shape, dtype=torch.float32, device=device)
    for s in range(problem.num_sequences):
        context, start, end = int(x.context_lens[s]), int(x.query_starts[s]), int(x.query_starts[s + 1])
        blocks = x.block_tables[s, : -(-context // problem.block_size)].long()

        def gather(pool):
            rows = pool[blocks].reshape(-1, problem.num_kv_heads, problem.head_dim)[:context]
            return rows.double().repeat_interleave(problem.gqa_ratio, dim=1)

        keys, values = gather(x.k_pool), gather(x.v_pool)
        logits = torch.einsum("qhd,thd->qht", x.queries[start:end].double(), keys) * problem.scale
        if problem.soft_cap is not None:
            logits = problem.soft_cap * torch.tanh(logits / problem.soft_cap)
        positions = torch.arange(context - (end - start), context, device=device)
        keys_at = torch.arange(context, device=device)
        if x.alibi_slopes is not None:
            offsets = (keys_at[None, :] - positions[:, None]).double()
            logits = logits + alibi_sign * x.alibi_slopes.double()[None, :, None] * offsets[:, None, :]
        hidden = keys_at[None, :] > positions[:, None]
        if problem.window is not None:
            hidden |= keys_at[None, :] <= positions[:, None] - problem.window
        logits = logits.masked_fill(hidden[:, None, :], float("-inf"))
        # The sink: one more logit per head, with a zero value (-inf: none), in the max and the sum only.
        sink = torch.full((problem.num_query_heads,), float("-inf"), dtype=torch.float64, device=device)
        if x.sinks is not None:
            sink = x.sinks.double()
        top = torch.maximum(logits.amax(dim=-1), sink[None, :])
        weights = torch.exp(logits - top[..., None])
        total = weights.sum(dim=-1) + torch.exp(sink[None, :] - top)
        out[start:end] = (torch.einsum("qht,thd->qhd", weights, values) / total[..., None]).float()
    return out.to(x.queries.dtype)


def test_a_torch_kernel_passes_the_catalogue(tmp_path):
    results = pacheck.check(torch_attention, name="torch_attention", capabilities=CAPABILITIES,
                            error_model=ERROR_MODEL, cases=30, failure_dir=tmp_path)
    assert all(r.cases == 30 for r in results)


def test_a_bf16_tensor_output_is_read_exactly():
    p = problem("bf16")
    out = torch_attention(p)
    assert out.dtype == torch.bfloat16
    np.testing.assert_array_equal(declare(lambda q: out).run(p), out.float().numpy())


def test_a_tensor_that_requires_grad_is_read():
    p = problem("fp32")
    out = torch_attention(p).requires_grad_()
    np.testing.assert_array_equal(declare(lambda q: out * 1).run(p), out.detach().numpy())


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_a_torch_kernel_computes_the_logit_options_and_a_flipped_alibi_is_caught(dtype, tmp_path):
    path = tmp_path / "options.json"
    pacheck.save_case(str(path), pacheck.make_problem(dtype=dtype, num_kv_heads=2, gqa_ratio=2, head_dim=16,
                                                      block_size=4, sequences=[(19, 1), (23, 9)], seed=3,
                                                      **EVERY_OPTION))
    pacheck.replay(path, torch_attention, error_model=ERROR_MODEL, logit_options=list(EVERY_OPTION))

    def flipped(problem):
        return torch_attention(problem, alibi_sign=-1)

    with pytest.raises(pacheck.PropertyFailure):
        pacheck.replay(path, flipped, error_model=ERROR_MODEL, logit_options=list(EVERY_OPTION))


@pytest.mark.parametrize("kv_cache, torch_dtype", [("fp8_e4m3", "float8_e4m3fn"), ("fp8_e5m2", "float8_e5m2")])
def test_an_fp8_cache_is_torch_float8_sharing_the_bytes(kv_cache, torch_dtype):
    p = pacheck.make_problem(num_kv_heads=2, head_dim=8, block_size=4, sequences=[(9, 1)], seed=5, kv_cache=kv_cache)
    x = pacheck.torch_inputs(p)
    assert x.k_pool.dtype == x.v_pool.dtype == getattr(torch, torch_dtype)
    assert torch.equal(x.k_pool.float(), torch.from_dlpack(p.k_pool))  # the fp8 values, exactly
    assert torch.equal(x.v_pool.float(), torch.from_dlpack(p.v_pool))
    assert torch.equal(x.k_scales, torch.from_dlpack(p.k_scales)) and x.v_scales.shape == (1,)
    storage = p.k_pool_storage
    assert pacheck.torch_float8(storage, kv_cache).data_ptr() == storage.ctypes.data  # a view, not a copy
    with pytest.raises(ValueError, match="kv_cache must be"):
        pacheck.torch_float8(storage, "fp8_e3m4")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_a_cuda_kernel_is_read_back_to_the_host(tmp_path):
    results = pacheck.check(lambda problem: torch_attention(problem, device="cuda"), name="torch_cuda",
                            capabilities=CAPABILITIES, error_model=ERROR_MODEL, cases=20, failure_dir=tmp_path)
    assert all(r.cases == 20 for r in results)
