#!/bin/bash
# Session 23, call 4 on the H200 (run from .gpu-bin): fd3ad67 (paged_attention_bench) against late_bench, the same
# tree with the tensor-core attention kernel's allow_dependent_launch moved from its first line to after its first
# copies are issued (so that the split-K merge's blocks start, and load their indices, after the attention blocks'
# own start), interleaved, dirty and clean flush twice each -> ab4.log.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench
mkdir -p /tmp/x4
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x4/gpu4.txt
SHAPES="4,1,1024 4,1,8192 8,1,8192 4,1,32768 8,1,32768 4,8,8192 4,64,8192"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in paged_attention_bench late_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
done > /tmp/x4/ab4.log 2>&1
date -u >> /tmp/x4/gpu4.txt
(cd /tmp/x4 && tar czf $OUT/s23_call4.tar.gz .)
cat /tmp/x4/gpu4.txt
