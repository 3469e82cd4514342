#!/bin/bash
# Session 25, call 3 on the H200 (run from .gpu-bin): the new reports/gpu/ab_on_h200.sh on
#   head_bench   a77d2ed's benchmark (the session-24 build of the committed kernels)
#   head_copy    the same file, copied: an A/A measurement of the method's own noise
#   rows8_bench  a diagnostic build whose plans always give a block 8 rows (GQA 4 on the 8-row instantiation;
#                rows8_always.patch)
# three passes of each flush.
cd "$(dirname "$0")"
BINS="head_bench head_copy rows8_bench" PASSES="dirty clean dirty clean dirty clean" bash ./ab_on_h200.sh
