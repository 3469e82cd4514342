#!/bin/bash
# Session 25, call 4 on the H200 (run from .gpu-bin):
#   head_bench  a77d2ed's benchmark
#   nozf_bench  the 8-row wide kernels skip the copies of pieces past the head instead of zero-filling them
#               (kZeroFillPastHead false everywhere: no_zero_fill.patch; the 4-row kernels are unchanged, so GQA 4
#               is an A/A control)
# three passes of each flush; then the SASS of head_bench's wide asynchronous-copy kernels (4 and 8 rows).
cd "$(dirname "$0")"
BINS="head_bench nozf_bench" PASSES="dirty clean dirty clean dirty clean" \
  SHAPES="8,1,1024 8,1,8192 8,1,32768 8,8,8192 8,64,8192 4,1,32768" TORCH_SHAPES="" bash ./ab_on_h200.sh
for rows in 4 8; do
  cuobjdump -sass -fun _ZN7pacheck4cuda7kernels28tensor_core_attention_kernelILi128ELi${rows}ELi2ELi2048ELb1ELNS1_11tensor_core10TileCopiesE1EEEvNS0_11DeviceBatchENS0_10DevicePlanENS0_10FastDivmodENS0_12KvTensorMapsE \
    ./head_bench > /tmp/sass_wide_async_rows$rows.txt 2>&1
  wc -l /tmp/sass_wide_async_rows$rows.txt
done
(cd /tmp && tar czf $OUT/sass_wide_async.tar.gz sass_wide_async_rows4.txt sass_wide_async_rows8.txt)
