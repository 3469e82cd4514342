#!/bin/bash
# Session 20, call 9 on the H200 (run from .gpu-bin): dc7c07d's run_on_h200.sh (lines wrapped) on cf7a107's
# binaries (bd8cf08 and dc7c07d changed no code), trimmed to the device time left.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x paged_attention_bench gpu_catalogue_test pacheck
CASES=100 LIMIT=120 SAN_CASES=5 BENCH_LIMIT=90 SKIP_TORCH=1 CLEAN_FLUSH=0 bash ./run_on_h200.sh > $OUT/run_on_h200.out 2>&1
grep -A40 "== summary" $OUT/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -20
grep -c "ERROR SUMMARY: 0 errors\|0 hazards" $OUT/run_on_h200.out
