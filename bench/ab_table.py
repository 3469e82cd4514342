#!/usr/bin/env python3
"""Tables an interleaved A/B log of paged_attention_bench builds: ab_table.py LOG BENCH[,BENCH...]

A log (ab_compare.sh writes them) is '== <bench> <shape> [<config>] rep <n> <flush>' headers, each followed by the
benchmark's rows for that run (gqa batch context kernel split ms GB TB/s); '== torch ...' sections (torch's SDPA,
run between passes) are skipped. Prints, per (shape, config, flush, kernel), every run's time in microseconds for
each bench, and each bench's mean change against the first one.
"""
import collections
import sys


class LogError(Exception):
    """A log that is not an A/B log; the message names the file, the line and what is wrong."""


def benchmark_row(fields):
    """(kernel, ms) of a benchmark row, or None for any other line (a warning, an error)."""
    if len(fields) < 8:
        return None
    try:
        [int(x) for x in fields[:3]]
        return fields[3], float(fields[5])
    except ValueError:
        return None


def read(path):
    """{(shape, config, flush, kernel, bench): [microseconds of each run]}."""
    times = collections.defaultdict(list)
    current = None
    try:
        with open(path) as log:
            lines = log.read().splitlines()
    except OSError as error:
        raise LogError(f"cannot read {path}: {error.strerror}") from error
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if line.startswith("=="):
            if len(fields) > 1 and fields[1] == "torch":
                current = None
                continue
            if len(fields) not in (6, 7) or fields[-3] != "rep":
                raise LogError(f"{path}:{number}: expected '== BENCH SHAPE [CONFIG] rep N FLUSH', not '{line}'")
            config = fields[3] if len(fields) == 7 else "-"
            current = (fields[1], fields[2], config, fields[-1])
            continue
        row = benchmark_row(fields) if current else None
        if row:
            bench, shape, config, flush = current
            times[(shape, config, flush, row[0], bench)].append(row[1] * 1000)
    return times


def shape_order(key):
    """Batch, then context, then GQA: the order of the shapes' costs."""
    gqa, batch, context = (int(x) for x in key[0].split(","))
    return (batch, context, gqa) + key[1:]


def table(times, benches):
    keys = sorted({k[:4] for k in times}, key=shape_order)
    lines = [f"{'shape':>11} {'config':>10} {'flush':>13} {'kernel':<16}|" + "|".join(f"{b:>22}" for b in benches)
             + "| change against " + benches[0]]
    for key in keys:
        runs = [times.get(key + (b,)) for b in benches]
        line = f"{key[0]:>11} {key[1]:>10} {key[2]:>13} {key[3]:<16}|" + "|".join(
            (" ".join(f"{x:7.1f}" for x in r) if r else "").rjust(22) for r in runs)
        if runs[0]:
            base = sum(runs[0]) / len(runs[0])
            line += "| " + " ".join(f"{sum(r) / len(r) / base - 1:+.1%}" if r else "-" for r in runs[1:])
        lines.append(line)
    return lines


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    try:
        times = read(argv[0])
    except LogError as error:
        print(f"ab_table: {error}", file=sys.stderr)
        return 2
    benches = argv[1].split(",")
    missing = [b for b in benches if not any(k[4] == b for k in times)]
    if missing:
        print(f"ab_table: no runs of {', '.join(missing)} in {argv[0]}", file=sys.stderr)
        return 2
    print("\n".join(table(times, benches)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
