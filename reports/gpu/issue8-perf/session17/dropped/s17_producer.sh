#!/bin/bash
# Session 17, call 10 on the H200 (run from .gpu-bin): a producer warp issuing every tensor copy of a block
# (producer_warp.patch, on 134f7c2) against head_bench (a5e5bab's kernels), each shape twice, interleaved, either
# flush -> $OUT/ab.log
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader | tee $OUT/gpu.txt; date -u | tee -a $OUT/gpu.txt
for flush in "" --clean-flush; do for shape in 4,1,32768 8,1,32768 4,1,8192 4,64,8192 8,64,8192 8,256,8192; do
  for rep in 1 2; do for b in head_bench producer_bench; do
    echo "== $b $shape rep $rep ${flush:-dirty}"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_|WARN"
  done; done
done; done > $OUT/ab.log 2>&1
grep -c WARN $OUT/ab.log
