"""What the bench/ script tests share: where the scripts and fixtures are, running a script, fake tools."""
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree: git does not ignore it
REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
SAMPLES = REPO / "tests" / "fixtures" / "samples.json"
sys.path.insert(0, str(BENCH))


def run(args, stdin=None, env=None):
    """Runs args (a script path first: .py under python3, .sh under bash) and returns the CompletedProcess."""
    command = [str(a) for a in args]
    command[:0] = {".py": [sys.executable], ".sh": ["bash"]}.get(Path(command[0]).suffix, [])
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env or {})))


def assert_exits(test, args, status, message, stream="stderr", **run_args):
    """Runs args (see run); test asserts the exit status and that message is in stream ("stdout" or "stderr")."""
    result = run(args, **run_args)
    test.assertEqual(result.returncode, status, result.stdout + result.stderr)
    test.assertIn(message, getattr(result, stream))
    return result


def write_sample_logs(folder):
    """Writes the sample logs folder of run_gpu_suite.sh (samples.json: the repository tracks no .log files) under
    folder; returns folder."""
    folder = Path(folder)
    for name, text in json.loads(SAMPLES.read_text())["logs"].items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def write_sample_results(path):
    """Writes the sample results.json (tests/fixtures/samples.json) to path; returns path."""
    path = Path(path)
    path.write_text(json.dumps(json.loads(SAMPLES.read_text())["results"], indent=1) + "\n")
    return path


def write_executable(path, text):
    """Writes a script (its text starts with #!) and makes it executable; returns its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def sass_listing(kernels):
    """`cuobjdump -sass`-like text: kernels is [(name, [instruction])]."""
    lines = ["", "Fatbin elf code:", "================", "arch = sm_90", "", "\tcode for sm_90"]
    for name, instructions in kernels:
        lines += [f"\t\tFunction : {name}", '\t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"']
        for i, instruction in enumerate(instructions + ["EXIT"]):
            lines.append(f"        /*{i * 16:04x}*/                   {instruction} ;"
                         f"                                        /* 0x000000000000{i:04x} */")
    return "\n".join(lines) + "\n"


CLEAN_KERNEL = ("clean_kernel", ["ULDC.64 UR4, c[0x0][0x208]", "LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64]"])
FAULTING_KERNEL = ("faulting_kernel", ["ULDC.64 UR4, c[0x0][0x208]",
                                       "LDGSTS.E.BYPASS.LTC128B.128 [R2], desc[UR6][R4.64]"])
NO_COPY_KERNEL = ("no_copy_kernel", ["ULDC.64 UR4, c[0x0][0x208]", "LDG.E.128 R8, desc[UR4][R2.64]"])

# A fake nvidia-smi: the queries run_gpu_suite.sh and ab_compare.sh make, answered for "Sample GPU".
FAKE_NVIDIA_SMI = """#!/bin/bash
case "$*" in
  *--query-gpu=name*) echo "Sample GPU" ;;
  *driver_version*) echo "999.1" ;;
  *compute_cap*) echo "9.0" ;;
  *) echo "| NVIDIA-SMI 999.1    Driver Version: 999.1    CUDA Version: 13.0 |" ;;
esac
"""

# A fake paged_attention_bench: rows as the benchmark prints them, and its JSON; FACTOR scales its times.
FAKE_BENCH = """#!/usr/bin/env python3
import json, sys
FACTOR = {factor}
args = sys.argv[1:]
path = args[args.index("--json") + 1]
clean = "--clean-flush" in args
shapes = [(4, 1, 1024), (8, 64, 8192)]
if "--only" in args:
    shapes = [tuple(int(x) for x in args[args.index("--only") + 1].split(","))]
rows = []
for gqa, batch, context in shapes:
    moved = 2 * batch * context * 8 * 128 * 2 + 2 * batch * 8 * gqa * 128 * 2
    for variant, split, ms in (("cuda_fused", context, 0.05), ("cuda_splitk", 64, 0.02)):
        ms = ms * FACTOR * (0.9 if clean else 1.0) * (1.02 if "--soft-cap" in args else 1.0)
        rows.append(dict(variant=variant, gqa=gqa, batch=batch, context=context, split_size=split, ms=ms,
                         bytes=moved, tbps=moved / (ms * 1e-3) / 1e12))
        print(f"{{gqa:4d}} {{batch:6d}} {{context:8d}}  {{variant:<18}} {{split:8d}} {{ms:10.4f}} "
              f"{{moved / 1e9:10.3f}} {{rows[-1]['tbps']:8.3f}}")
json.dump(dict(device="Sample GPU", cuda_runtime="13.0", copy_tbps=4.0, repeats=20, clean_flush=clean,
               results=rows), open(path, "w"))
"""


def fake_bench(path, factor=1.0):
    return write_executable(path, FAKE_BENCH.format(factor=factor))


def fake_module(folder, name, body):
    """A package NAME under folder (put folder on PYTHONPATH) whose __init__.py is body."""
    package = Path(folder) / name
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(body)
    return folder
