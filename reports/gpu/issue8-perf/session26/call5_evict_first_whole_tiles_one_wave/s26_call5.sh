#!/bin/bash
# Session 26, call 5 on the H200 (run from .gpu-bin): the evict-first policy again, now only on whole tiles' copies
# (src-size 16, converged code: the form that ran in call 4's benchmark) and only where the grid is one wave of the
# wide layout (DevicePlan::kv_evict_first; evict-normal otherwise):
#   CASES=300 LIMIT=240 SAN_CASES=20 BENCH_LIMIT=120 bash ./run_on_h200.sh on it (paged_attention_bench is
#   policy_bench), then a short A/B, final_bench (b92a9b7) against policy_bench, one pass per flush, no torch.
cd "$(dirname "$0")"
for f in paged_attention_bench gpu_catalogue_test pacheck; do xz -d -f $f.xz; chmod +x $f; done
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu5.txt
CASES=300 LIMIT=240 SAN_CASES=20 BENCH_LIMIT=120 bash ./run_on_h200.sh > $OUT/run_on_h200.out 2>&1
date -u >> $OUT/gpu5.txt
cat $OUT/gpu5.txt
grep -A60 "== summary" $OUT/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -30
OUT0=$OUT; mkdir -p /tmp/ab; OUT=/tmp/ab BINS="final_bench policy_bench" PASSES="dirty clean" TORCH_SHAPES="" \
  SHAPES="4,1,32768 8,1,32768 8,8,8192 4,64,8192 8,64,8192 4,256,8192" bash ./ab_on_h200.sh > /tmp/ab/out.txt 2>&1
OUT=$OUT0
(cd /tmp/ab && tar czf $OUT/ab5.tar.gz ab.log ab_table.txt gpu.txt out.txt); cat /tmp/ab/ab_table.txt
