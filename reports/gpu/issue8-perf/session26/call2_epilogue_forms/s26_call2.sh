#!/bin/bash
# Session 26, call 2 on the H200 (run from .gpu-bin): three forms of the four-lane epilogue against 8f442c4.
#   change_bench     write_item_result four lanes a thread, fused and split-K (call 1's change);
#   splitonly_bench  four lanes for split-K partial states only, the fused output a lane a thread;
#   padded_bench     change_bench, and the tensor-core kernel's warps' sums in shared memory with rows of LANES + 4
#                    floats (no bank conflicts when the warps store them); also the build of the correctness run.
# First a short correctness run of padded_bench's kernels (CASES=100, catalogue and sanitizers, no torch), then
# the interleaved A/B, three passes per flush.
cd "$(dirname "$0")"
for f in paged_attention_bench gpu_catalogue_test pacheck; do xz -d -f $f.xz; chmod +x $f; done
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu2.txt
OUT0=$OUT; mkdir -p /tmp/check; OUT=/tmp/check CASES=100 LIMIT=200 SAN_CASES=10 SKIP_TORCH=1 CLEAN_FLUSH=0 BENCH_LIMIT=60 \
  bash ./run_on_h200.sh > /tmp/check/run.out 2>&1
OUT=$OUT0
(cd /tmp/check && tar czf $OUT/check2.tar.gz run.out correctness_logs.tar.gz perf.log)
grep -A40 "== summary" /tmp/check/run.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -30
mkdir -p /tmp/ab; OUT=/tmp/ab BINS="head_bench change_bench splitonly_bench padded_bench" \
  PASSES="dirty clean dirty clean dirty clean" \
  SHAPES="4,1,8192 8,1,8192 4,1,32768 8,1,32768 8,8,8192 4,64,8192 8,64,8192" bash ./ab_on_h200.sh > /tmp/ab/out.txt 2>&1
OUT=$OUT0
(cd /tmp/ab && tar czf $OUT/ab2.tar.gz ab.log ab_table.txt gpu.txt out.txt); cat /tmp/ab/ab_table.txt
awk '/^== torch/ {print; shown = 1; next} /^== / {shown = 0} shown && /^cudnn/' /tmp/ab/ab.log
date -u >> $OUT/gpu2.txt
