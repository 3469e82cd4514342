#!/usr/bin/env python3
# Summarises session 19's block-start traces (apply_diag.py's BLOCK_TRACE files, one per launch): per build, flush
# and shape, the medians over blocks of each stamp after the block's own start (us), averaged over the launches,
# and the median and last block end after the first block's start. Columns of a trace line: block, start, work
# item and sequence loaded, warp 0's first table entry in hand, warp 0's first tile landed, end, SM, and where the
# build has them, the block-wide barrier before the loop, the queries in hand (0: not stamped).
#   mkdir t && tar xzf traces.tar.gz -C t && python3 start_trace_summary.py t/*.csv
import collections
import os
import statistics
import sys

def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]

runs = collections.defaultdict(list)
for path in sys.argv[1:]:
    rows = [list(map(int, line.split(","))) for line in open(path)]
    name = os.path.basename(path)[: -len(".csv")]
    key = name.rsplit("_", 1)[0].replace("_r1", "").replace("_r2", "")  # one key for every launch of a setting
    t0 = min(r[1] for r in rows)
    since_start = lambda col: median([(r[col] - r[1]) / 1e3 for r in rows]) if len(rows[0]) > col and all(
        r[col] for r in rows) else float("nan")
    runs[key].append({"work": since_start(2), "entry": since_start(3), "queries": since_start(8),
                      "barrier": since_start(7), "landed": since_start(4),
                      "end_median": median([(r[5] - t0) / 1e3 for r in rows]),
                      "end_last": max((r[5] - t0) / 1e3 for r in rows), "blocks": len(rows)})
columns = ["work", "entry", "queries", "barrier", "landed", "end_median", "end_last"]
print("| build, flush, shape, kernel | launches | blocks | " + " | ".join(columns) + " |")
print("| --- | ---: | ---: | " + " | ".join("---:" for _ in columns) + " |")
for key in sorted(runs):
    launches = runs[key]
    cells = ["%.2f" % statistics.mean(run[c] for run in launches) for c in columns]
    cells = ["-" if cell == "nan" else cell for cell in cells]
    print("| %s | %d | %d | %s |" % (key, len(launches), launches[0]["blocks"], " | ".join(cells)))
