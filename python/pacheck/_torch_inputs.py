# pacheck.torch_inputs: a problem's arrays as torch tensors in the problem's own dtype, on the device a kernel wants.
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class TorchInputs:
    """A problem's inputs as torch tensors: values in the problem's dtype (float32, float16 or bfloat16), tables
    and lengths in int32."""

    queries: object  # [total_queries, num_query_heads, head_dim]
    k_pool: object  # [num_blocks, block_size, num_kv_heads, head_dim]
    v_pool: object  # same shape as k_pool
    block_tables: object  # [num_sequences, widest table], padded with -1
    context_lens: object  # [num_sequences]
    query_lens: object  # [num_sequences]
    query_starts: object  # [num_sequences + 1]


def torch_inputs(problem, device="cpu") -> TorchInputs:
    """The problem's arrays as torch tensors on `device`, exactly: every value of the float views is representable
    in the problem's dtype, so torch's conversion to it rounds nothing. On the CPU an fp32 problem's value tensors
    share the problem's memory, so they are valid only during the kernel call, like the problem's own views."""
    try:
        import torch
    except ImportError as e:
        raise ImportError("pacheck.torch_inputs needs torch; install it, or read the problem's numpy arrays") from e
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[problem.dtype]

    def values(view):
        return torch.from_dlpack(view).to(device=device, dtype=dtype)

    def integers(array):
        return torch.from_dlpack(array).to(device)

    return TorchInputs(
        queries=values(problem.queries),
        k_pool=values(problem.k_pool),
        v_pool=values(problem.v_pool),
        block_tables=integers(problem.block_tables),
        context_lens=integers(problem.context_lens),
        query_lens=integers(problem.query_lens),
        query_starts=integers(problem.query_starts),
    )
