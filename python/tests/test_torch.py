# torch through the bridge: DLPack views of a problem, exact bf16/fp16 inputs, a torch kernel's output (CPU and CUDA).
import numpy as np
import pytest

import pacheck

torch = pytest.importorskip("torch")

CAPABILITIES = {"dtypes": ["fp32", "fp16", "bf16"], "modes": ["decode", "prefill", "continuation"],
                "max_head_dim": 256}


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


def torch_attention(problem, device="cpu"):
    """Attention in torch: one softmax over each row's keys in double, rounded to the dtype once at the end.
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
        positions = torch.arange(context - (end - start), context, device=device)
        hidden = torch.arange(context, device=device)[None, :] > positions[:, None]
        logits = logits.masked_fill(hidden[:, None, :], float("-inf"))
        weights = torch.exp(logits - logits.amax(dim=-1, keepdim=True))
        out[start:end] = (torch.einsum("qht,thd->qhd", weights, values) / weights.sum(dim=-1, keepdim=True)).float()
    return out.to(x.queries.dtype)


def test_a_torch_kernel_passes_the_catalogue(tmp_path):
    results = pacheck.check(torch_attention, name="torch_attention", capabilities=CAPABILITIES,
                            error_model="fp32_online_softmax", cases=30, failure_dir=tmp_path)
    assert all(r.cases == 30 for r in results)


def test_a_bf16_tensor_output_is_read_exactly():
    p = problem("bf16")
    out = torch_attention(p)
    assert out.dtype == torch.bfloat16
    declared = pacheck._pacheck.DeclaredKernel(lambda q: out, "bf16_out", CAPABILITIES, "fp32_online_softmax")
    np.testing.assert_array_equal(declared.run(p), out.float().numpy())


def test_a_tensor_that_requires_grad_is_read():
    p = problem("fp32")
    out = torch_attention(p).requires_grad_()
    declared = pacheck._pacheck.DeclaredKernel(lambda q: out * 1, "grad_out", CAPABILITIES, "fp32_online_softmax")
    np.testing.assert_array_equal(declared.run(p), out.detach().numpy())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_a_cuda_kernel_is_read_back_to_the_host(tmp_path):
    results = pacheck.check(lambda problem: torch_attention(problem, device="cuda"), name="torch_cuda",
                            capabilities=CAPABILITIES, error_model="fp32_online_softmax", cases=20,
                            failure_dir=tmp_path)
    assert all(r.cases == 20 for r in results)
