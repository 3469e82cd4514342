#!/bin/bash
# Session 18, call 7 on the H200 (run from .gpu-bin): the layout thresholds with V by asynchronous copies. The
# benchmark of 08c5a27 with PACHECK_TENSOR_CORE_LAYOUT pinned to deep, wide and wide-kv-tma (the launch reads it),
# each shape twice, interleaved, with either flush -> $OUT/thresholds.log
cd "$(dirname "$0")"
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/thresholds.log
SHAPES="4,1,32768 8,1,32768 4,8,8192 4,64,8192 8,64,8192 4,256,8192 8,256,8192"
for flush in "" --clean-flush; do for shape in $SHAPES; do for rep in 1 2; do
  for layout in deep wide wide-kv-tma; do
    echo "== $layout $shape rep $rep ${flush:-dirty}"
    PACHECK_TENSOR_CORE_LAYOUT=$layout timeout 60 ./paged_attention_bench $flush --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|WARN|rror"
  done
done; done; done >> $OUT/thresholds.log 2>&1
date -u >> $OUT/thresholds.log
