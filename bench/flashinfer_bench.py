#!/usr/bin/env python3
"""Times FlashInfer's paged decode (BatchDecodeWithPagedKVCacheWrapper) on paged_attention_bench's shapes.

The KV cache is what paged_attention_bench reads: K and V pools of [blocks, block_size 16, 8 KV heads, 128] bf16
(NHD layout), blocks for the largest batch x context plus 1024, handed to the sequences in one shuffled order, so
that each sequence's blocks lie scattered through the pool. Per shape the wrapper is planned once, then run() is
timed with use_tensor_cores False (the CUDA-core decode kernel) and True (the prefill kernel used for decode), the
backend left to FlashInfer (the JSON records what it resolved to). Shapes, bytes, flush and timing are
paged_attention_bench's (gpu_timing.py). --kv-cache fp8_e4m3|fp8_e5m2: the pools as an fp8 cache (the same values
rounded, scale 0.25 for K and V), planned with that kv_data_type, as paged_attention_bench --kv-cache; bytes count a
byte per K or V element.

  python3 flashinfer_bench.py [--json FILE] [--repeats N] [--only G,B,C ...] [--clean-flush] [--kv-cache C]

The JSON: {"device", "torch", "flashinfer", "repeats", "clean_flush", "results": [{"backend":
"flashinfer_cuda_cores"|"flashinfer_tensor_cores", "gqa", "batch", "context", "bytes", "ms", "tbps",
"resolved_backend"} or {..., "error"}]}; when torch or flashinfer does not import, {"skipped": why, "results": []}
(exit status 0).
"""
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts: git does not ignore it
import gpu_timing  # noqa: E402 (after the line above)

BACKENDS = (("flashinfer_cuda_cores", False), ("flashinfer_tensor_cores", True))
WORKSPACE_BYTES = 128 << 20  # FlashInfer's recommended float workspace
FP8_SCALE = 0.25  # the fp8 cache's K and V scale (a power of two, as paged_attention_bench's)


def kv_dtype(torch, kv_cache):
    return {"bf16": torch.bfloat16, "fp8_e4m3": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2}[kv_cache]


def scattered_pools(torch, kv_cache):
    """K and V pools for every shape, and the shuffled block order the sequences take their blocks from."""
    num_blocks = max(gpu_timing.BATCHES) * max(gpu_timing.CONTEXTS) // gpu_timing.BLOCK_SIZE + 1024
    shape = (num_blocks, gpu_timing.BLOCK_SIZE, gpu_timing.KV_HEADS, gpu_timing.HEAD_DIM)
    k_pool = torch.empty(shape, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
    v_pool = torch.empty_like(k_pool).uniform_(-1, 1)
    if kv_cache != "bf16":  # values in the fp8 range's middle, as paged_attention_bench's
        k_pool = (4 * k_pool).to(kv_dtype(torch, kv_cache))
        v_pool = (4 * v_pool).to(kv_dtype(torch, kv_cache))
    order = torch.randperm(num_blocks, generator=torch.Generator().manual_seed(7)).to(torch.int32).cuda()
    return k_pool, v_pool, order


def load():
    import torch
    import flashinfer
    return torch, {"torch": torch.__version__, "flashinfer": getattr(flashinfer, "__version__", "unknown")}


def measure(args):
    import torch
    import flashinfer
    flush = gpu_timing.L2Flush(args.clean_flush)
    k_pool, v_pool, order = scattered_pools(torch, args.kv_cache)
    kv_bytes = 2 if args.kv_cache == "bf16" else 1
    scales = {} if args.kv_cache == "bf16" else {"k_scale": FP8_SCALE, "v_scale": FP8_SCALE}
    workspace = torch.zeros(WORKSPACE_BYTES, dtype=torch.uint8, device="cuda")
    results = []
    gpu_timing.print_header()
    for gqa, batch, context in args.shapes:
        heads = gpu_timing.KV_HEADS * gqa
        pages = context // gpu_timing.BLOCK_SIZE
        indptr = torch.arange(batch + 1, dtype=torch.int32, device="cuda") * pages
        indices = order[:batch * pages].contiguous()
        last_page_len = torch.full((batch,), gpu_timing.BLOCK_SIZE, dtype=torch.int32, device="cuda")
        q = torch.empty(batch, heads, gpu_timing.HEAD_DIM, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
        out = torch.empty_like(q)
        for name, tensor_cores in BACKENDS:
            def time_ms(row):
                wrapper = flashinfer.BatchDecodeWithPagedKVCacheWrapper(workspace, "NHD",
                                                                        use_tensor_cores=tensor_cores)
                wrapper.plan(indptr, indices, last_page_len, heads, gpu_timing.KV_HEADS, gpu_timing.HEAD_DIM,
                             gpu_timing.BLOCK_SIZE, pos_encoding_mode="NONE", q_data_type=torch.bfloat16,
                             kv_data_type=kv_dtype(torch, args.kv_cache))
                row["resolved_backend"] = getattr(wrapper, "resolved_backend", None)
                row["kv_cache"] = args.kv_cache
                return gpu_timing.median_ms(lambda: wrapper.run(q, (k_pool, v_pool), out=out, **scales),
                                            args.repeats, flush)
            results.append(gpu_timing.timed_row(name, gqa, batch, context, time_ms, kv_bytes))
    return results


if __name__ == "__main__":
    sys.exit(gpu_timing.main("flashinfer_bench", __doc__, "flashinfer", load, measure))
