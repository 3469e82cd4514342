#!/usr/bin/env python3
"""Finds LDGSTS copies that read a cache descriptor no instruction writes, in `cuobjdump -sass` output.

A global access on sm_90 names a 64-bit memory descriptor in uniform registers (`desc[URn]`); a copy under an L2
cache policy (`.L2::cache_hint`) takes the policy there. ptxas 13.0 can drop the policy's definition in a kernel
and keep its copies, which then fault with an illegal instruction. This lists, per kernel with LDGSTS copies, the
descriptor registers they read that no instruction of the kernel writes, and fails if there are any, or if an input
holds no kernel with such copies (no SASS read). The check is per kernel, not along paths: a write anywhere in the
kernel counts, even one after the copy.

    cuobjdump -sass paged_attention_bench | python3 sass_descriptor_check.py
    python3 sass_descriptor_check.py [--cuobjdump PATH] FILE...   (runs cuobjdump -sass on each FILE)

Exit status: 0 clean; 1 an unwritten descriptor, or an input without kernels; 2 cuobjdump failed;
77 cuobjdump not found (ctest's skip code).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

CUOBJDUMP_NOT_FOUND = 77


def instructions_by_kernel(lines):
    """[(name, [instruction text])], an entry per function listing (a binary holds a kernel in several cubins)."""
    kernels = []
    for line in lines:
        header = re.search(r"Function : (\S+)", line)
        if header:
            kernels.append((header.group(1), []))
            continue
        instruction = re.search(r"/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;", line)
        if kernels and instruction:
            kernels[-1][1].append(instruction.group(1))
    return kernels


def uniform_registers_written(instruction):
    """The uniform registers an instruction writes: its first operand, and the next one for a 64-bit result."""
    m = re.match(r"(?:@!?U?P\w+\s+)?([A-Z0-9_.]+)\s+UR(\d+)\b", instruction)
    if not m or m.group(1).startswith(("LDGSTS", "LDG", "STG", "LDS", "STS")):
        return set()
    first = int(m.group(2))
    wide = ".64" in m.group(1) or ".WIDE" in m.group(1)
    return {first, first + 1} if wide else {first}


def unwritten_descriptors(instructions):
    """(number of LDGSTS with a descriptor, their descriptor registers, those no instruction writes)."""
    copies = [i for i in instructions if "LDGSTS" in i and "desc[" in i]
    read = sorted({int(r) for i in copies for r in re.findall(r"desc\[UR(\d+)\]", i)})
    written = set().union(*(uniform_registers_written(i) for i in instructions))
    return len(copies), read, [r for r in read if r not in written]


def check(lines, label):
    """(0 clean or 1, the report: each kernel reading an unwritten descriptor, then a summary line)."""
    checked, report = 0, []
    for name, instructions in instructions_by_kernel(lines):
        copies, read, unwritten = unwritten_descriptors(instructions)
        if not copies:
            continue
        checked += 1
        if unwritten:
            report.append(f"UNWRITTEN DESCRIPTOR UR{unwritten}: {copies} LDGSTS read desc[UR{read}] in {name}")
    if not checked:
        return 1, [f"sass_descriptor_check: FAILED, no kernel with LDGSTS copies in {label} (was it SASS?)"]
    bad = len(report)
    report.append(f"sass_descriptor_check: {checked} kernels with LDGSTS copies in {label}, "
                  f"{bad} reading an unwritten descriptor")
    return (1 if bad else 0), report


def check_file(cuobjdump, path):
    """Runs `cuobjdump -sass path` and checks its output; 2 when cuobjdump fails."""
    with tempfile.TemporaryFile("w+") as errors, \
            subprocess.Popen([cuobjdump, "-sass", path], stdout=subprocess.PIPE, stderr=errors, text=True,
                             errors="replace") as process:
        status, report = check(process.stdout, path)
        process.wait()
        errors.seek(0)
        error = errors.read().strip()
    if process.returncode != 0:
        print(f"sass_descriptor_check: cuobjdump -sass {path} failed (exit {process.returncode}): {error}")
        return 2
    print("\n".join(report))
    return status


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cuobjdump", default="", help="cuobjdump to run on FILE (default: the one on PATH)")
    parser.add_argument("files", nargs="*", metavar="FILE", help="binaries or libraries (default: SASS on stdin)")
    args = parser.parse_args(argv)
    if not args.files:
        status, report = check(sys.stdin, "the input")
        print("\n".join(report))
        return status
    cuobjdump = args.cuobjdump or shutil.which("cuobjdump")
    if not cuobjdump or not os.access(cuobjdump, os.X_OK):
        print(f"cuobjdump not found: {args.cuobjdump or 'none on PATH'} (it comes with the CUDA toolkit, or "
              "pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm and put nvidia/cu13/bin on PATH)")
        return CUOBJDUMP_NOT_FOUND
    return max(check_file(cuobjdump, path) for path in args.files)


if __name__ == "__main__":
    sys.exit(main())
