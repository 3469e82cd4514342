#!/usr/bin/env python3
"""Summarises an interleaved A/B log of paged_attention_bench builds: ab_table.py LOG BIN[,BIN...]

A log is a sequence of '== <bin> <shape> [<config>] rep <n> <flush>' headers, each followed by the benchmark's
rows for that run (gqa batch context kernel split ms ...); sections headed '== torch ...' (torch's SDPA, which
ab_on_h200.sh runs between passes) are skipped. Prints, per (shape, config, flush, kernel), every run's time in
microseconds for each binary, and each binary's mean change against the first one. Written in session 20 of
reports/gpu/issue8-perf.md; ab_on_h200.sh (beside it) writes such logs.
"""
import collections
import sys


def read(path):
    times = collections.defaultdict(list)
    current = None
    for line in open(path):
        fields = line.split()
        if line.startswith("=="):
            if fields[1] == "torch":
                current = None
                continue
            config = fields[3] if fields[3] != "rep" else "-"
            current = (fields[1], fields[2], config, fields[-1])
            continue
        if current and len(fields) >= 8:
            binary, shape, config, flush = current
            times[(shape, config, flush, fields[3], binary)].append(float(fields[5]) * 1000)
    return times


def main():
    times = read(sys.argv[1])
    binaries = sys.argv[2].split(",")
    keys = sorted({k[:4] for k in times}, key=lambda k: ([int(x) for x in k[0].split(",")][1:], k[0], k[1], k[2], k[3]))
    print(f"{'shape':>11} {'config':>10} {'flush':>13} {'kernel':<16}|" + "|".join(f"{b:>22}" for b in binaries)
          + "| change against " + binaries[0])
    for key in keys:
        runs = [times.get(key + (b,)) for b in binaries]
        row = f"{key[0]:>11} {key[1]:>10} {key[2]:>13} {key[3]:<16}|" + "|".join(
            (" ".join(f"{x:7.1f}" for x in r) if r else "").rjust(22) for r in runs)
        if runs[0]:
            base = sum(runs[0]) / len(runs[0])
            row += "| " + " ".join(f"{sum(r) / len(r) / base - 1:+.1%}" if r else "-" for r in runs[1:])
        print(row)


if __name__ == "__main__":
    main()
