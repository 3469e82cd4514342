#!/bin/bash
# Session 26, call 1 on the H200 (run from .gpu-bin): the four-lane epilogue (write_item_result: 16-byte loads of the
# warps' sums and 16-byte stores of a split-K partial state; 8-byte stores of a fused bf16 output).
#   1. GpuFused.AnOutputAlignedOnlyToItsElementGetsTheSameBits on the change, then on a mutant whose lane-a-thread
#      path drops the last warp's sums (lane_path_mutant.patch): it must fail there;
#   2. a short correctness run of the change (CASES=100, catalogue and sanitizers, no torch);
#   3. the interleaved A/B, head_bench (8f442c4) against change_bench.
cd "$(dirname "$0")"
for f in paged_attention_bench gpu_catalogue_test gpu_test_mutant pacheck; do xz -d -f $f.xz; chmod +x $f; done
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu1.txt
{ echo "== change"; timeout 60 ./gpu_catalogue_test --gtest_filter='GpuFused*'; echo "exit $?";
  echo "== mutant"; timeout 60 ./gpu_test_mutant --gtest_filter='GpuFused*'; echo "exit $?"; } > $OUT/aligned_test.log 2>&1
grep -E "^==|OK \]|FAILED \]|differ|Expected|Which is|exit" $OUT/aligned_test.log
OUT0=$OUT; mkdir -p /tmp/check; OUT=/tmp/check CASES=100 LIMIT=200 SAN_CASES=10 SKIP_TORCH=1 CLEAN_FLUSH=0 BENCH_LIMIT=60 \
  bash ./run_on_h200.sh > /tmp/check/run.out 2>&1
OUT=$OUT0
(cd /tmp/check && tar czf $OUT/check1.tar.gz run.out correctness_logs.tar.gz perf.log)
grep -A40 "== summary" /tmp/check/run.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -30
mkdir -p /tmp/ab; OUT=/tmp/ab BINS="head_bench change_bench" PASSES="dirty clean dirty clean" \
  SHAPES="4,1,8192 8,1,8192 4,1,32768 8,1,32768 8,8,8192 4,64,8192 8,64,8192" bash ./ab_on_h200.sh > /tmp/ab/out.txt 2>&1
OUT=$OUT0
(cd /tmp/ab && tar czf $OUT/ab1.tar.gz ab.log ab_table.txt gpu.txt out.txt); cat /tmp/ab/out.txt | tail -n 60
date -u >> $OUT/gpu1.txt
