"""Finds copies that read an unwritten cache descriptor in `cuobjdump -sass` output (stdin).

A global access on sm_90 names a 64-bit memory descriptor in uniform registers (`desc[URn]`); a copy under an L2
cache policy (`.L2::cache_hint`) takes the policy there. ptxas 13.0 dropped the policy's definition in some kernels
and kept its copies (session 27 of issue8-perf.md), which then fault with an illegal instruction when they run. This
lists, for each kernel with LDGSTS copies, the descriptor registers those copies read that no instruction of the
kernel writes, and exits 1 if there are any, or if the input holds no kernel with such copies (no SASS read).
The check is per kernel, not along paths: a write anywhere in the kernel counts, even one after the copy.
    cuobjdump -sass paged_attention_bench | python3 sass_descriptor_check.py
"""
import re
import sys


def instructions_by_kernel(lines):
    """[(name, [instruction text])], one entry per function listing: a binary holds one kernel in several cubins."""
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
    """The uniform registers an instruction writes: its first operand, and the next register too for a 64-bit
    result (.64, .WIDE)."""
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


def main():
    checked, bad = 0, 0
    for name, instructions in instructions_by_kernel(sys.stdin):
        copies, read, unwritten = unwritten_descriptors(instructions)
        if not copies:
            continue
        checked += 1
        if unwritten:
            bad += 1
            print(f"UNWRITTEN DESCRIPTOR UR{unwritten}: {copies} LDGSTS read desc[UR{read}] in {name}")
    if not checked:
        print("sass_descriptor_check: FAILED, no kernel with LDGSTS copies in the input (was it SASS?)")
        return 1
    print(f"sass_descriptor_check: {checked} kernels with LDGSTS copies, {bad} reading an unwritten descriptor")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
