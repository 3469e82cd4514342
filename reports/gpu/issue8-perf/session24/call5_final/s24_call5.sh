#!/bin/bash
# Session 24, call 5 on the H200 (run from .gpu-bin): the final run of the committed tree (af9b47a; its kernels are
# fd3ad67's, MergeShape's comment aside):
#   CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x paged_attention_bench gpu_catalogue_test pacheck
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu5.txt
CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh > $OUT/run_on_h200.out 2>&1
date -u >> $OUT/gpu5.txt
cat $OUT/gpu5.txt
grep -A60 "== summary" $OUT/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -40
