#!/bin/bash
# Session 20, call 8 on the H200 (run from .gpu-bin): after the review of 75c698b (TileCopies down to tensor and
# async, the zero-filled pieces only in the 128-lane asynchronous 8-row kernels), against 75c698b (head_bench):
#  1. A/B, interleaved, dirty flush twice, clean once -> ab8.log
#  2. run_on_h200.sh at 300 cases per property, the sanitizers at 20, the benchmark (dirty flush only, no torch)
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench paged_attention_bench gpu_catalogue_test pacheck
mkdir -p /tmp/x8
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x8/gpu8.txt
SHAPES="4,1,32768 8,1,32768 8,8,8192 4,64,8192 8,64,8192 8,256,8192"
for pass in "dirty 1" "clean 1" "dirty 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench paged_attention_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
done > /tmp/x8/ab8.log 2>&1
date -u >> /tmp/x8/gpu8.txt
CASES=300 LIMIT=250 SAN_CASES=20 BENCH_LIMIT=100 SKIP_TORCH=1 CLEAN_FLUSH=0 bash ./run_on_h200.sh > /tmp/x8/run_on_h200.out 2>&1
date -u >> /tmp/x8/gpu8.txt
(cd /tmp/x8 && tar czf $OUT/s20_call8.tar.gz .)
grep -A40 "== summary" /tmp/x8/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -30
