#!/usr/bin/env python3
"""Times torch's scaled_dot_product_attention on paged_attention_bench's decode shapes: cuDNN and flash backends.

K and V are contiguous [batch, kv_heads, context, head_dim] (no paging), GQA through enable_gqa=True. Shapes,
bytes, flush and timing are paged_attention_bench's (gpu_timing.py).

  python3 torch_sdpa_bench.py [--json FILE] [--repeats N] [--only G,B,C ...] [--clean-flush]

The JSON: {"device", "torch", "cudnn", "repeats", "clean_flush", "results": [{"backend": "cudnn"|"flash", "gqa",
"batch", "context", "bytes", "ms", "tbps"} or {..., "error"}]}; without torch, {"skipped": why, "results": []}
(exit status 0).
"""
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts: git does not ignore it
import gpu_timing  # noqa: E402 (after the line above)

BACKENDS = ("cudnn", "flash")


def load():
    import torch
    return torch, {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version()}


def measure(args):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
    flush = gpu_timing.L2Flush(args.clean_flush)
    results = []
    gpu_timing.print_header()
    for gqa, batch, context in args.shapes:
        heads = gpu_timing.KV_HEADS * gqa
        q = torch.empty(batch, heads, 1, gpu_timing.HEAD_DIM, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
        k = torch.empty(batch, gpu_timing.KV_HEADS, context, gpu_timing.HEAD_DIM, dtype=torch.bfloat16,
                        device="cuda").uniform_(-1, 1)
        v = torch.empty_like(k).uniform_(-1, 1)
        for name in BACKENDS:
            def time_ms(row):
                with sdpa_kernel([backends[name]]):
                    return gpu_timing.median_ms(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                                                args.repeats, flush)
            results.append(gpu_timing.timed_row(name, gqa, batch, context, time_ms))
        del q, k, v
        torch.cuda.empty_cache()
    return results


if __name__ == "__main__":
    sys.exit(gpu_timing.main("torch_sdpa_bench", __doc__, "torch", load, measure))
