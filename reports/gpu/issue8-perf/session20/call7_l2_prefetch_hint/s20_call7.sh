#!/bin/bash
# Session 20, call 7 on the H200 (run from .gpu-bin): the 16-byte asynchronous copies with an L2 prefetch-size
# hint (cp.async.cg...L2::128B / L2::256B: l2x128_bench, l2x256_bench) against 75c698b (head_bench).
# Interleaved, dirty and clean flush twice each -> ab7.log
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu7.txt
SHAPES="4,1,32768 8,1,32768 4,1,8192 4,8,8192 4,64,8192 8,64,8192 8,256,8192"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench l2x128_bench l2x256_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
done > $OUT/ab7.log 2>&1
date -u >> $OUT/gpu7.txt
