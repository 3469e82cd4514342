#!/bin/bash
# Session 27, call 3 on the H200 (run from .gpu-bin): the candidate F (2f28377 + the wide-evict-first layout:
# TileCopies::async_evict_first, production's choice for grids of one wave; Wide suites pinning the plain wide one).
#   1. an A/B, M_paged_attention_bench (2f28377's kernels) against paged_attention_bench (F), with torch;
#   2. CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh on F.
cd "$(dirname "$0")"
OUT0=$OUT; mkdir -p /tmp/ab; OUT=/tmp/ab BINS="M_paged_attention_bench paged_attention_bench" \
  PASSES="dirty clean dirty clean" SHAPES="4,1,8192 8,1,8192 4,1,32768 8,1,32768 8,8,8192 4,64,8192 8,64,8192 4,256,8192" \
  bash ./ab_on_h200.sh > /tmp/ab/out.txt 2>&1
OUT=$OUT0
(cd /tmp/ab && tar czf $OUT/ab3.tar.gz ab.log ab_table.txt gpu.txt out.txt)
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu3.txt
CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh > $OUT/run_on_h200.out 2>&1
date -u >> $OUT/gpu3.txt
cat $OUT/gpu3.txt /tmp/ab/ab_table.txt
awk '/^== torch/ {print; shown = 1; next} /^== / {shown = 0} shown && /^cudnn/' /tmp/ab/ab.log
grep -A70 "== summary" $OUT/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -70
