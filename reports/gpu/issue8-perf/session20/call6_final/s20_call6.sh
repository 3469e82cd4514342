#!/bin/bash
# Session 20, call 6 on the H200 (run from .gpu-bin): the final kernels (K and V by 16-byte asynchronous copies in
# every 128-lane production layout; wide for one-wave grids) against d2542a8 (head_bench: async at 4 rows only):
#  1. A/B, interleaved, dirty and clean flush twice each -> ab6.log
#  2. the full run: run_on_h200.sh (catalogue at 500 cases, sanitizers, benchmark and torch, both flushes)
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench paged_attention_bench gpu_catalogue_test pacheck
mkdir -p /tmp/x6
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x6/gpu6.txt
SHAPES="4,1,1024 4,1,8192 4,1,32768 8,1,1024 8,1,8192 8,1,32768 4,8,8192 8,8,8192 4,64,8192 8,64,8192 4,256,8192 8,256,8192"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench paged_attention_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
done > /tmp/x6/ab6.log 2>&1
date -u >> /tmp/x6/gpu6.txt
CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh > /tmp/x6/run_on_h200.out 2>&1
date -u >> /tmp/x6/gpu6.txt
(cd /tmp/x6 && tar czf $OUT/s20_call6.tar.gz .)
grep -A40 "== summary" /tmp/x6/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -30
