#!/bin/bash
# Session 20, call 5 on the H200 (run from .gpu-bin): head_bench (d2542a8: 4 rows async copies, 8 rows tensor
# copies) against exp_bench (async copies at 8 rows too, and each lane's copy loop predicated instead of skipping
# the pieces past the head: ptxas gave the 8-row async kernels 94 registers and a branch per copy, now 120-126).
# Interleaved, dirty and clean flush twice each -> ab5.log
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu5.txt
SHAPES="4,1,1024 4,1,8192 4,1,32768 8,1,1024 8,1,8192 8,1,32768 4,8,8192 8,8,8192 4,64,8192 8,64,8192 4,256,8192 8,256,8192 8,64,32768"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench exp_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
done > $OUT/ab5.log 2>&1
date -u >> $OUT/gpu5.txt
