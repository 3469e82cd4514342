#!/bin/bash
# Session 27, call 2 on the H200 (run from .gpu-bin): the candidate (E4: 651eedc + the merge's output-alignment
# fix + K and V under an L2 evict-first policy on whole tiles, swizzled kernels only, split-K grids of one wave).
#   1. the SASS descriptor check on E1_bench (call 1's createpolicy build: a positive control, it should fail);
#   2. an A/B, M_paged_attention_bench (651eedc + the alignment fix) against paged_attention_bench (E4), with torch;
#   3. CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh on E4.
cd "$(dirname "$0")"
xz -d -f E1_bench.xz; { echo "== E1_bench (positive control)"; cuobjdump -sass E1_bench | python3 ./sass_descriptor_check.py | tail -n 4; echo "exit ${PIPESTATUS[1]}"; } > $OUT/control.txt 2>&1 &
OUT0=$OUT; mkdir -p /tmp/ab; OUT=/tmp/ab BINS="M_paged_attention_bench paged_attention_bench" \
  PASSES="dirty clean dirty clean" SHAPES="4,1,8192 8,1,8192 4,1,32768 8,1,32768 8,8,8192 4,64,8192 8,64,8192 4,256,8192" \
  bash ./ab_on_h200.sh > /tmp/ab/out.txt 2>&1
OUT=$OUT0
(cd /tmp/ab && tar czf $OUT/ab2.tar.gz ab.log ab_table.txt gpu.txt out.txt)
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu2.txt
CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh > $OUT/run_on_h200.out 2>&1
date -u >> $OUT/gpu2.txt
wait
cat $OUT/gpu2.txt $OUT/control.txt /tmp/ab/ab_table.txt
awk '/^== torch/ {print; shown = 1; next} /^== / {shown = 0} shown && /^cudnn/' /tmp/ab/ab.log
grep -A60 "== summary" $OUT/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -60
