"""The decode shapes and timing method of paged_attention_bench, shared by the scripts that time other kernels.

Shapes: bf16 K/V, head dim 128, block size 16, 8 KV heads, GQA 4 and 8, batch 1/8/64/256, context 1k/8k/32k.
Bytes: K + V read, plus Q and the output. Time: the median CUDA-event time over repeats, after three warm-up calls,
the L2 flushed before each repeat (256 MB written; with --clean-flush then 256 MB read, leaving clean lines rather
than the flush's dirty ones). torch is imported where needed, so that a script can record its absence.
"""
import argparse
import json
import statistics
import sys

HEAD_DIM = 128
BLOCK_SIZE = 16
KV_HEADS = 8
GQA_RATIOS = (4, 8)
BATCHES = (1, 8, 64, 256)
CONTEXTS = (1024, 8192, 32768)
SHAPES = tuple((g, b, c) for g in GQA_RATIOS for b in BATCHES for c in CONTEXTS)
KV_CACHES = ("bf16", "fp8_e4m3", "fp8_e5m2")  # the pools: bf16, or an fp8 cache with per-tensor scales


def bytes_moved(gqa, batch, context, kv_bytes=2):
    """K and V read (bf16, or kv_bytes 1: an fp8 cache), plus Q read and the output written (bf16): what
    paged_attention_bench counts."""
    query_elements = batch * KV_HEADS * gqa * HEAD_DIM
    return 2 * batch * context * KV_HEADS * HEAD_DIM * kv_bytes + 2 * query_elements * 2


def parse_args(description, default_json, argv=None):
    """The options every timing script takes; args.shapes: the shapes to run, in the benchmark's order."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", default=default_json, help="write the results here")
    parser.add_argument("--repeats", type=int, default=20, help="timed runs per shape (the median is kept)")
    parser.add_argument("--only", action="append", default=[], help="a shape GQA,BATCH,CONTEXT (repeatable)")
    parser.add_argument("--clean-flush", action="store_true", help="leave clean lines in the L2, not dirty ones")
    parser.add_argument("--kv-cache", choices=KV_CACHES, default="bf16", help="what the K and V pools hold")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, not {args.repeats}")
    only = set()
    for text in args.only:
        try:
            shape = tuple(int(x) for x in text.split(","))
        except ValueError:
            shape = ()
        if len(shape) != 3:
            parser.error(f"--only takes GQA,BATCH,CONTEXT, not '{text}'")
        if shape not in SHAPES:
            parser.error(f"--only {text} is not one of the benchmark's shapes (GQA {GQA_RATIOS}, batch {BATCHES}, "
                         f"context {CONTEXTS})")
        only.add(shape)
    args.shapes = [s for s in SHAPES if not only or s in only]
    return args


def write_json(path, document):
    with open(path, "w") as out:
        json.dump(document, out, indent=2)
        out.write("\n")


def record_skip(args, reason):
    """Says why nothing was timed, on one line and in the JSON; the exit status for main()."""
    print(f"skipped: {reason}")
    write_json(path=args.json, document={"skipped": reason, "clean_flush": args.clean_flush, "results": []})
    return 0


class L2Flush:
    """Overwrites 256 MB (more than the L2) before each timed call; clean: then reads another 256 MB."""

    def __init__(self, clean):
        import torch
        self.written = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
        self.clean = torch.zeros(32 << 20, dtype=torch.int64, device="cuda") if clean else None

    def __call__(self, run):
        self.written.fill_(run & 0xFF)
        if self.clean is not None:
            self.clean.sum()

    @staticmethod
    def describe(clean):
        return "256 MB written, then 256 MB read (clean lines)" if clean else "256 MB written (dirty lines)"


def median_ms(fn, repeats, flush):
    """The median CUDA-event time of fn over repeats, each after flush(i), after three untimed warm-up calls."""
    import torch
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


def timed_row(backend, gqa, batch, context, time_ms, kv_bytes=2):
    """A result row of the JSON: ms and TB/s, or the error that stopped the backend. time_ms(row) returns the median
    ms; it may add facts to the row (what the backend resolved to)."""
    moved = bytes_moved(gqa, batch, context, kv_bytes)
    row = {"backend": backend, "gqa": gqa, "batch": batch, "context": context, "bytes": moved}
    try:
        ms = time_ms(row)
        row.update(ms=ms, tbps=moved / (ms * 1e-3) / 1e12)
        print(f"{backend:24} {gqa:4d} {batch:6d} {context:8d} {ms:10.4f} {row['tbps']:8.3f}", flush=True)
    except Exception as error:  # a backend that refuses a shape (or fails to compile for it) says why, the rest run
        row["error"] = (str(error).strip().splitlines() or [type(error).__name__])[0]
        print(f"{backend:24} {gqa:4d} {batch:6d} {context:8d}   error: {row['error']}", flush=True)
    return row


def print_header():
    print(f"{'backend':24} {'gqa':>4} {'batch':>6} {'context':>8} {'ms':>10} {'TB/s':>8}")


def main(script, description, needs, load, measure):
    """A timing script's main(): its options; when load() raises ImportError, a JSON recording the skip (needs names
    what is missing); the device check; measure(args)'s rows as JSON. load() returns torch and the versions of what
    the script times, {name: version}, which the JSON records."""
    args = parse_args(description, f"{script}.json")
    try:
        torch, versions = load()
    except ImportError as error:
        return record_skip(args, f"{needs} is not importable: {error}")
    if not torch.cuda.is_available():
        sys.exit(f"{script}: no CUDA device")
    device = torch.cuda.get_device_properties(0).name
    print(f"device: {device}, " + ", ".join(f"{name} {version}" for name, version in versions.items()))
    print("L2 flush: " + L2Flush.describe(args.clean_flush))
    rows = measure(args)
    write_json(args.json, {"device": device, **versions, "repeats": args.repeats, "clean_flush": args.clean_flush,
                           "results": rows})
    return 0
