#!/usr/bin/env python3
# Summarises the block traces of diag_traces.tar.gz (diag.patch's BLOCK_TRACE files: block, start, first tile
# landed, end (ns, %globaltimer), SM): per launch, the first-tile and end times from the first block's start
# (min / median / max, us), each block's first-tile-to-end median, and how many blocks each SM ran.
#   mkdir t && tar xzf diag_traces.tar.gz -C t && python3 trace_summary.py t/*.csv
import collections
import statistics
import sys

for path in sorted(sys.argv[1:]):
    rows = [list(map(int, line.split(","))) for line in open(path)]
    t0 = min(r[1] for r in rows)
    spread = lambda xs: "%.1f / %.1f / %.1f" % (min(xs), statistics.median(xs), max(xs))
    first = [(r[2] - t0) / 1000 for r in rows]
    end = [(r[3] - t0) / 1000 for r in rows]
    stream = statistics.median((r[3] - r[2]) / 1000 for r in rows)
    per_sm = collections.Counter(collections.Counter(r[4] for r in rows).values())
    print("%s: %d blocks, blocks per SM %s; first tile %s; end %s; first tile to end, median %.1f" %
          (path, len(rows), dict(sorted(per_sm.items())), spread(first), spread(end), stream))
