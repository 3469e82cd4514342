# The bridge's Python side: what the C++ bridge calls (a kernel's output read into host memory, a kernel's exception
# as text), and pacheck.torch_inputs, a problem's arrays as torch tensors in its own dtype on the device a kernel
# wants.
from __future__ import annotations

import dataclasses
import traceback

import numpy

# DLPack device types whose memory the host reads in place: the CPU and pinned CUDA host memory.
_HOST_DEVICES = (1, 3)


def host_array(value):
    """`value` as something the bridge reads as a host array: tensors are detached, device arrays copied to the
    host (torch's .cpu(), else numpy.from_dlpack), anything without DLPack or the buffer protocol given to
    numpy.asarray."""
    detach = getattr(value, "detach", None)
    if callable(detach):
        value = detach()
    dlpack_device = getattr(value, "__dlpack_device__", None)
    if callable(dlpack_device):
        if dlpack_device()[0] in _HOST_DEVICES:
            return value
        cpu = getattr(value, "cpu", None)
        if callable(cpu):
            return cpu()
        return numpy.from_dlpack(value, device="cpu", copy=True)
    return numpy.asarray(value)


def exception_text(exc):
    """The exception's traceback and message, after which its frames (and the chained exceptions' frames) are
    cleared: their locals may hold views of a problem whose loan has ended."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)
        exc = exc.__cause__ or exc.__context__
    return text


@dataclasses.dataclass(frozen=True)
class TorchInputs:
    """A problem's inputs as torch tensors: values in the problem's dtype (float32, float16 or bfloat16), tables
    and lengths in int32, the per-head logit options in float32 (None when the problem does not set them; the
    scalar options are problem.soft_cap and problem.window)."""

    queries: object  # [total_queries, num_query_heads, head_dim]
    k_pool: object  # [num_blocks, block_size, num_kv_heads, head_dim]
    v_pool: object  # same shape as k_pool
    block_tables: object  # [num_sequences, widest table], padded with -1
    context_lens: object  # [num_sequences]
    query_lens: object  # [num_sequences]
    query_starts: object  # [num_sequences + 1]
    alibi_slopes: object = None  # [num_query_heads] float32, or None without ALiBi
    sinks: object = None  # [num_query_heads] float32 (-inf: no sink for that head), or None without sinks


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

    def per_head(array):
        return None if array is None else torch.from_dlpack(array).to(device)

    return TorchInputs(
        queries=values(problem.queries),
        k_pool=values(problem.k_pool),
        v_pool=values(problem.v_pool),
        block_tables=integers(problem.block_tables),
        context_lens=integers(problem.context_lens),
        query_lens=integers(problem.query_lens),
        query_starts=integers(problem.query_starts),
        alibi_slopes=per_head(problem.alibi_slopes),
        sinks=per_head(problem.sinks),
    )
