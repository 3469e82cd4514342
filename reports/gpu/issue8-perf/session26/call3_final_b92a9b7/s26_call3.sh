#!/bin/bash
# Session 26, call 3 on the H200 (run from .gpu-bin): the final run of b92a9b7 (the four-lane epilogue and the
# conflict-free rows of the warps' sums):
#   a short A/B, head_bench (8f442c4) against final_bench (b92a9b7: the same build as paged_attention_bench),
#   then CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh
cd "$(dirname "$0")"
OUT0=$OUT; mkdir -p /tmp/ab; OUT=/tmp/ab BINS="head_bench final_bench" PASSES="dirty clean dirty clean" \
  SHAPES="4,1,8192 8,1,8192 4,1,32768 8,1,32768 8,8,8192 4,64,8192 8,64,8192" bash ./ab_on_h200.sh > /tmp/ab/out.txt 2>&1
OUT=$OUT0
(cd /tmp/ab && tar czf $OUT/ab3.tar.gz ab.log ab_table.txt gpu.txt out.txt); cat /tmp/ab/ab_table.txt
awk '/^== torch/ {print; shown = 1; next} /^== / {shown = 0} shown && /^cudnn/' /tmp/ab/ab.log
for f in paged_attention_bench gpu_catalogue_test pacheck; do xz -d -f $f.xz; chmod +x $f; done
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu3.txt
CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh > $OUT/run_on_h200.out 2>&1
date -u >> $OUT/gpu3.txt
cat $OUT/gpu3.txt
grep -A60 "== summary" $OUT/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -40
