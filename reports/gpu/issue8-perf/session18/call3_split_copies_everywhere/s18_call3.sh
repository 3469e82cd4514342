#!/bin/bash
# Session 18, call 3 on the H200 (run from .gpu-bin): the full run of run_on_h200.sh on binaries with V by 16-byte
# asynchronous copies beside K's tensor copies in both 128-lane layouts (deep and wide, all grids; the working
# tree before the wide-tma layout), then paged_attention_bench against base_bench (e96363a) on each shape, twice,
# interleaved, with either flush -> $OUT/ab.log
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader > $OUT/gpu.txt
CASES=1000 LIMIT=280 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh
SHAPES="4,1,32768 8,1,32768 4,1,8192 4,1,1024 4,8,8192 4,64,8192 8,64,8192 4,256,8192 8,256,8192"
for flush in "" --clean-flush; do for shape in $SHAPES; do for rep in 1 2; do
  for b in base_bench paged_attention_bench; do
    echo "== $b $shape rep $rep ${flush:-dirty}"; timeout 60 ./$b $flush --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|WARN"
  done
done; done; done > $OUT/ab.log 2>&1
date -u >> $OUT/gpu.txt
