#!/bin/bash
# Session 25, call 5 on the H200 (run from .gpu-bin): the final run of the change (the 8-row kernels at 128 lanes
# skip the copies of pieces past the head, as every other kernel does, instead of zero-filling them):
#   a short A/B, head_bench (a77d2ed) against skip_bench (the change: the same build as paged_attention_bench),
#   then CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh
cd "$(dirname "$0")"
OUT0=$OUT; mkdir -p /tmp/ab; OUT=/tmp/ab BINS="head_bench skip_bench" PASSES="dirty clean dirty clean" \
  SHAPES="8,1,8192 8,1,32768 8,8,8192 8,64,8192 4,1,32768 4,64,8192" TORCH_SHAPES="" bash ./ab_on_h200.sh > /dev/null
OUT=$OUT0
(cd /tmp/ab && tar czf $OUT/ab5.tar.gz ab.log ab_table.txt gpu.txt); cat /tmp/ab/ab_table.txt
for f in paged_attention_bench gpu_catalogue_test pacheck; do xz -d -f $f.xz; chmod +x $f; done
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu5.txt
CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh > $OUT/run_on_h200.out 2>&1
date -u >> $OUT/gpu5.txt
cat $OUT/gpu5.txt
grep -A60 "== summary" $OUT/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -40
