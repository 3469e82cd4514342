#!/usr/bin/env python3
"""The competitor figures for cuda/bench/paged_attention_bench: torch's scaled_dot_product_attention on the same
decode shapes (bf16, head dim 128, 8 KV heads, GQA 4 and 8 with enable_gqa=True, batch 1/8/64/256, context
1k/8k/32k), K and V contiguous [batch, kv_heads, context, head_dim] (no paging), through the cuDNN and the flash
backends. Bandwidth counts the same bytes as the C++ benchmark (K + V + Q + output) over the median CUDA-event
time of the repeats, the L2 flushed before each.

  python3 torch_sdpa_bench.py [--json FILE] [--repeats N] [--only G,B,C ...] [--clean-flush]
                              [--compare paged_attention_bench.json [--markdown FILE]]

With --compare it also prints (and writes as a markdown table) each CUDA kernel's bandwidth next to cuDNN's.
--only (repeatable) and --clean-flush mean what they mean to paged_attention_bench: a shape; a flush that reads a
second buffer after its writes, so that the L2 holds clean lines, not dirty ones, when the timed call starts.
"""
import argparse
import json
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HEAD_DIM = 128
KV_HEADS = 8
GQA_RATIOS = (4, 8)
BATCHES = (1, 8, 64, 256)
CONTEXTS = (1024, 8192, 32768)
BACKENDS = (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION))


class L2Flush:
    """Overwrites 256 MB (more than the L2) before each timed call; clean: then reads another 256 MB."""

    def __init__(self, clean):
        self.written = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
        self.clean = torch.zeros(32 << 20, dtype=torch.int64, device="cuda") if clean else None

    def __call__(self, run):
        self.written.fill_(run & 0xFF)
        if self.clean is not None:
            self.clean.sum()


def median_ms(fn, repeats, flush):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for i in range(repeats):
        flush(i)
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def measure(repeats, only, clean_flush):
    flush = L2Flush(clean_flush)
    results = []
    print(f"{'backend':8} {'gqa':>4} {'batch':>6} {'context':>8} {'ms':>10} {'TB/s':>8}")
    for gqa in GQA_RATIOS:
        for batch in BATCHES:
            for context in CONTEXTS:
                if only and (gqa, batch, context) not in only:
                    continue
                heads = KV_HEADS * gqa
                q = torch.empty(batch, heads, 1, HEAD_DIM, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
                k = torch.empty(batch, KV_HEADS, context, HEAD_DIM, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
                v = torch.empty_like(k).uniform_(-1, 1)
                moved = 2 * k.numel() * 2 + 2 * q.numel() * 2
                for name, backend in BACKENDS:
                    row = {"backend": name, "gqa": gqa, "batch": batch, "context": context, "bytes": moved}
                    try:
                        with sdpa_kernel([backend]):
                            ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                                           repeats, flush)
                        row.update(ms=ms, tbps=moved / (ms * 1e-3) / 1e12)
                        print(f"{name:8} {gqa:4d} {batch:6d} {context:8d} {ms:10.4f} {row['tbps']:8.3f}", flush=True)
                    except RuntimeError as error:  # a backend that refuses the shape says why
                        row["error"] = str(error).splitlines()[0]
                        print(f"{name:8} {gqa:4d} {batch:6d} {context:8d}   refused: {row['error']}", flush=True)
                    results.append(row)
                del q, k, v
                torch.cuda.empty_cache()
    return results


def compare(torch_rows, bench_path, markdown_path):
    bench = json.load(open(bench_path))
    variants = []
    for r in bench["results"]:
        if r["variant"] not in variants:
            variants.append(r["variant"])
    ours = {(r["variant"], r["gqa"], r["batch"], r["context"]): r for r in bench["results"]}
    theirs = {(r["backend"], r["gqa"], r["batch"], r["context"]): r for r in torch_rows}
    lines = [
        f"copy bandwidth (read + write): {bench['copy_tbps']:.2f} TB/s; all figures TB/s (K + V + Q + out bytes / "
        "median time); 'x cuDNN' is the kernel's bandwidth over cuDNN's",
        "",
        "| gqa | batch | context | " + " | ".join(variants) + " | split | cuDNN | flash | "
        + " | ".join(f"{v} x cuDNN" for v in variants) + " |",
        "| " + " | ".join(["---:"] * (6 + 2 * len(variants))) + " |",
    ]
    for gqa in GQA_RATIOS:
        for batch in BATCHES:
            for context in CONTEXTS:
                cudnn = theirs.get(("cudnn", gqa, batch, context), {})
                flash = theirs.get(("flash", gqa, batch, context), {})
                mine = [ours.get((v, gqa, batch, context)) for v in variants]
                if not any(mine):
                    continue
                def tb(r):
                    return f"{r['tbps']:.2f}" if r and "tbps" in r else "-"
                def ratio(r):
                    return f"{r['tbps'] / cudnn['tbps']:.2f}" if r and "tbps" in cudnn else "-"
                splitk = ours.get(("cuda_splitk", gqa, batch, context))
                lines.append(f"| {gqa} | {batch} | {context} | " + " | ".join(tb(r) for r in mine)
                             + f" | {splitk['split_size'] if splitk else '-'} | {tb(cudnn)} | {tb(flash)} | "
                             + " | ".join(ratio(r) for r in mine) + " |")
    text = "\n".join(lines)
    print("\n" + text)
    if markdown_path:
        with open(markdown_path, "w") as out:
            out.write(text + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", default="torch_sdpa_bench.json")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--compare", help="the JSON written by paged_attention_bench")
    parser.add_argument("--markdown", help="write the comparison table here")
    parser.add_argument("--only", action="append", help="a shape GQA,BATCH,CONTEXT (repeatable)")
    parser.add_argument("--clean-flush", action="store_true", help="leave clean lines in the L2, not dirty ones")
    args = parser.parse_args()
    only = set()
    for shape in args.only or []:
        try:
            fields = tuple(int(x) for x in shape.split(","))
        except ValueError:
            fields = ()
        if len(fields) != 3:
            parser.error(f"--only takes GQA,BATCH,CONTEXT, not '{shape}'")
        only.add(fields)
    if not torch.cuda.is_available():
        sys.exit("torch_sdpa_bench: no CUDA device")
    props = torch.cuda.get_device_properties(0)
    print(f"device: {props.name}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
    print("L2 flush: " + ("256 MB written, then 256 MB read (clean lines)" if args.clean_flush
                          else "256 MB written (dirty lines)"))
    rows = measure(args.repeats, only, args.clean_flush)
    with open(args.json, "w") as out:
        json.dump({"device": props.name, "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                   "repeats": args.repeats, "clean_flush": args.clean_flush, "results": rows}, out, indent=2)
    if args.compare:
        compare(rows, args.compare, args.markdown)


if __name__ == "__main__":
    main()
