#!/bin/bash
# Session 21, call 6 on the H200 (run from .gpu-bin): c9cd388's kernels (whole tiles copied without the zero-fill
# predicate; rescale and weights unbranched) against d43bd7f (head_bench):
#  1. A/B, interleaved, dirty and clean flush twice each -> ab6.log; split-K at batch 1, 32k also with the deep
#     layout pinned and with splits of 768 and 993 keys (c9cd388 only)
#  2. the full run: run_on_h200.sh (catalogue at 500 cases, sanitizers, benchmark and torch, both flushes)
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench gpu_catalogue_test pacheck
mkdir -p /tmp/x6
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x6/gpu6.txt
SHAPES="4,1,1024 4,1,8192 4,1,32768 8,1,1024 8,1,8192 8,1,32768 4,8,8192 8,8,8192 4,64,8192 8,64,8192 4,256,8192 8,256,8192"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench paged_attention_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
  for shape in 4,1,32768 8,1,32768; do
    echo "== paged_attention_bench $shape deep rep $2 $1"
    PACHECK_TENSOR_CORE_LAYOUT=deep timeout 60 ./paged_attention_bench $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_splitk|splitk_no"
    for split in 768 993; do
      echo "== paged_attention_bench $shape split$split rep $2 $1"
      timeout 60 ./paged_attention_bench $flush --stages --split $split --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_splitk|splitk_no"
    done
  done
done > /tmp/x6/ab6.log 2>&1
date -u >> /tmp/x6/gpu6.txt
CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh > /tmp/x6/run_on_h200.out 2>&1
date -u >> /tmp/x6/gpu6.txt
(cd /tmp/x6 && tar czf $OUT/s21_call6.tar.gz .)
cat /tmp/x6/gpu6.txt
grep -A40 "== summary" /tmp/x6/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -40
