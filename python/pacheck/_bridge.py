# The bridge's Python side: what the C++ bridge calls (a kernel's output read into host memory, its exception as
# text), pacheck.torch_inputs (a problem's arrays as torch tensors in its dtype on the kernel's device) and
# pacheck.torch_float8 (an fp8 cache's bytes as torch float8 tensors).
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
    """The exception's traceback and message; then its and its chained exceptions' frames are cleared, since their
    locals may hold views of a problem whose loan has ended."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)
        exc = exc.__cause__ or exc.__context__
    return text


@dataclasses.dataclass(frozen=True)
class TorchInputs:
    """A problem's inputs as torch tensors: values in the problem's dtype, tables and lengths in int32, the per-head
    logit options in float32 (the scalar ones are problem.soft_cap and problem.window). With an fp8 cache
    (problem.kv_cache) the pools are torch.float8_e4m3fn or torch.float8_e5m2 tensors of the fp8 values before their
    scales."""

    queries: object  # [total_queries, num_query_heads, head_dim]
    k_pool: object  # [num_blocks, block_size, num_kv_heads, head_dim]
    v_pool: object  # same shape as k_pool
    block_tables: object  # [num_sequences, widest table], padded with -1
    context_lens: object  # [num_sequences]
    query_lens: object  # [num_sequences]
    query_starts: object  # [num_sequences + 1]
    alibi_slopes: object = None  # [num_query_heads] float32, or None without ALiBi
    sinks: object = None  # [num_query_heads] float32 (-inf: no sink for that head), or None without sinks
    k_scales: object = None  # [1] or [num_kv_heads] float32, or None without an fp8 cache
    v_scales: object = None  # likewise


def _torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("pacheck's torch helpers need torch; install it, or read the problem's numpy arrays") from e
    return torch


def torch_float8(array, kv_cache):
    """An fp8 cache's uint8 bit patterns (problem.k_pool_storage, problem.v_pool_storage) as a torch float8 tensor
    of the same shape: torch.float8_e4m3fn for kv_cache 'fp8_e4m3', torch.float8_e5m2 for 'fp8_e5m2'. It shares the
    array's memory (DLPack, then a view of the bytes), so it is valid as long as the array is."""
    torch = _torch()
    formats = {"fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2"}
    if kv_cache not in formats:
        raise ValueError(f"kv_cache must be 'fp8_e4m3' or 'fp8_e5m2', got {kv_cache!r}")
    dtype = getattr(torch, formats[kv_cache], None)
    if dtype is None:
        raise ImportError(f"this torch ({torch.__version__}) has no torch.{formats[kv_cache]}")
    return torch.from_dlpack(array).view(dtype)


def torch_inputs(problem, device="cpu") -> TorchInputs:
    """The problem's arrays as torch tensors on `device`, exactly: every float view's value is representable in the
    problem's dtype, so the conversion rounds nothing. On the CPU an fp32 problem's value tensors share the problem's
    memory: valid only during the kernel call, like its views."""
    torch = _torch()
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[problem.dtype]

    def values(view):
        return torch.from_dlpack(view).to(device=device, dtype=dtype)

    def moved(array):  # tables, lengths and per-head floats keep their dtype; an absent option stays None
        return None if array is None else torch.from_dlpack(array).to(device)

    def pool(view, storage):
        if problem.kv_cache is None:
            return values(view)
        return torch_float8(storage, problem.kv_cache).to(device)

    return TorchInputs(
        queries=values(problem.queries),
        k_pool=pool(problem.k_pool, problem.k_pool_storage),
        v_pool=pool(problem.v_pool, problem.v_pool_storage),
        block_tables=moved(problem.block_tables),
        context_lens=moved(problem.context_lens),
        query_lens=moved(problem.query_lens),
        query_starts=moved(problem.query_starts),
        alibi_slopes=moved(problem.alibi_slopes),
        sinks=moved(problem.sinks),
        k_scales=moved(problem.k_scales),
        v_scales=moved(problem.v_scales),
    )
