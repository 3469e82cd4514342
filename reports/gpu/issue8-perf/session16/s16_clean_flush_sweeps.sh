#!/bin/bash
# Session 16, call 3 on the H200: the split size and the layouts retuned under the clean flush (base_bench: the
# kernels of f5d3104). Batch 1, 32k split-K at splits of 512-2048 keys (either flush) and with the pool's blocks in
# order (--sequential-pool); batch 64 and 256, 8k, every layout (--layouts), clean flush.
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u
for flush in "" --clean-flush; do for gqa in 4 8; do for split in 512 768 1024 1280 1536 2048; do for rep in 1 2; do
  echo "== split $split gqa $gqa rep $rep ${flush:-dirty}"
  ./base_bench $flush --stages --split $split --only $gqa,1,32768 --json /tmp/x.json | grep -E "splitk"
done; done; done; done 2>&1 | tee $OUT/split_sweep.log
for flush in "" --clean-flush; do for rep in 1 2; do
  echo "== sequential pool rep $rep ${flush:-dirty}"; ./base_bench $flush --stages --sequential-pool --only 4,1,32768 --json /tmp/x.json | grep -E "cuda_|splitk"
  echo "== scattered pool rep $rep ${flush:-dirty}"; ./base_bench $flush --stages --only 4,1,32768 --json /tmp/x.json | grep -E "cuda_|splitk"
done; done 2>&1 | tee $OUT/pool_order.log
for shape in 4,64,8192 8,64,8192 4,256,8192 8,256,8192; do
  echo "== layouts $shape clean"; ./base_bench --clean-flush --layouts --only $shape --json /tmp/x.json | grep -vE "^device|^L2|^$|wrote|gqa"
done 2>&1 | tee $OUT/layouts_clean.log
