#!/bin/bash
# Session 23, call 3 on the H200 (run from .gpu-bin): the committed tree (fd3ad67) against e15ca66, interleaved,
# dirty and clean flush twice each -> ab3.log; then the final run:
#   CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench gpu_catalogue_test pacheck
mkdir -p /tmp/x3
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x3/gpu3.txt
SHAPES="4,1,8192 8,1,8192 4,1,32768 8,1,32768 4,64,8192 8,64,8192"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench paged_attention_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
done > /tmp/x3/ab3.log 2>&1
date -u >> /tmp/x3/gpu3.txt
CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh > /tmp/x3/run_on_h200.out 2>&1
date -u >> /tmp/x3/gpu3.txt
(cd /tmp/x3 && tar czf $OUT/s23_call3.tar.gz .)
cat /tmp/x3/gpu3.txt
grep -A60 "== summary" /tmp/x3/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -60
