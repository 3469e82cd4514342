"""Finds copies that read an unwritten cache descriptor in `cuobjdump -sass` output (stdin).

A global access on sm_90 names a 64-bit memory descriptor in uniform registers (`desc[URn]`); a copy under an L2
cache policy (`.L2::cache_hint`) takes the policy there. ptxas 13.0 dropped the policy's definition in some kernels
and kept its copies (session 27 of issue8-perf.md), which then fault with an illegal instruction when they run. This
lists, for each function with LDGSTS copies, the descriptor registers those copies read that no instruction of the
function writes, and exits 1 if there are any.
    cuobjdump -sass paged_attention_bench | python3 sass_descriptor_check.py
"""
import re
import sys


def instructions_by_function(lines):
    functions, name = {}, None
    for line in lines:
        header = re.search(r"Function : (\S+)", line)
        if header:
            name = header.group(1)
            functions[name] = []
            continue
        instruction = re.search(r"/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;", line)
        if name is not None and instruction:
            functions[name].append(instruction.group(1))
    return functions


def unwritten_descriptors(instructions):
    """(number of LDGSTS with a descriptor, their descriptor registers, those no instruction writes)."""
    copies = [i for i in instructions if "LDGSTS" in i and "desc[" in i]
    read = sorted({int(r) for i in copies for r in re.findall(r"desc\[UR(\d+)\]", i)})
    written = set()
    for i in instructions:
        # The destination is an instruction's first operand; a 64-bit write (ULDC.64, a pair) covers the next one.
        m = re.match(r"(?:@!?U?P\w+\s+)?([A-Z0-9_.]+)\s+UR(\d+)\b", i)
        if m and not m.group(1).startswith(("LDGSTS", "LDG", "STG", "LDS", "STS")):
            written |= {int(m.group(2)), int(m.group(2)) + 1}
    return len(copies), read, [r for r in read if r not in written]


def main():
    functions = instructions_by_function(sys.stdin)
    checked, bad = 0, 0
    for name, instructions in functions.items():
        copies, read, unwritten = unwritten_descriptors(instructions)
        if not copies:
            continue
        checked += 1
        if unwritten:
            bad += 1
            print(f"UNWRITTEN DESCRIPTOR UR{unwritten}: {copies} LDGSTS read desc[UR{read}] in {name}")
    print(f"sass_descriptor_check: {checked} functions with LDGSTS copies, {bad} reading an unwritten descriptor")
    return 1 if bad or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
