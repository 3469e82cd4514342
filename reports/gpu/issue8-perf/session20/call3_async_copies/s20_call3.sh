#!/bin/bash
# Session 20, call 3 on the H200 (run from .gpu-bin): every copy a 16-byte asynchronous copy (fullnotma_bench,
# diagnostic build: tensor copies off) against 29c0c4f (base_bench), over the benchmark's shapes that matter:
# base automatic, notma with the automatic layout, deep and wide pinned. Interleaved; dirty flush twice, clean once.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu3.txt
SHAPES="4,1,1024 4,1,8192 4,1,32768 8,1,32768 4,8,8192 8,8,8192 4,64,8192 8,64,8192 4,256,8192 8,256,8192 4,64,32768"
for pass in "dirty 1" "clean 1" "dirty 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do
    for cfg in base:automatic notma:automatic notma:deep notma:wide; do
      b=${cfg%%:*}; layout=${cfg##*:}; bin=$([ $b = base ] && echo base_bench || echo fullnotma_bench)
      echo "== $b-$layout $shape rep $2 $1"
      PACHECK_TENSOR_CORE_LAYOUT=$layout timeout 60 ./$bin $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
    done
  done
done > $OUT/ab3.log 2>&1
date -u >> $OUT/gpu3.txt
