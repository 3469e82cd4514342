#!/bin/bash
# Session 22, call 2 on the H200 (run from .gpu-bin), interleaved, dirty and clean flush twice each -> ab2.log:
#   head_bench  bb62464 (the merge waits for the attention grid: griddepcontrol.wait)
#   v1_bench    call 1: a block publishes with fence.sc + atomic add; the merge polls with acquire loads, 64 ns sleeps
#   v2_bench    publish with fence.acq_rel + relaxed add; the merge polls with relaxed loads and fences once after
#   v3_bench    v2 with 512 ns sleeps between polls
# with torch's SDPA on the batch-1, 32k shapes in each pass.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench gpu_catalogue_test* pacheck
mkdir -p /tmp/x2
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x2/gpu2.txt
SHAPES="4,1,8192 8,1,8192 4,1,32768 8,1,32768 4,8,8192"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench v1_bench v2_bench v3_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_splitk|splitk_no|WARN"
  done; done
  echo "== torch rep $2 $1"
  timeout 120 python3 ../cuda/bench/torch_sdpa_bench.py $flush --json /tmp/t.json --only 4,1,32768 --only 8,1,32768 \
    2>&1 | tail -n 8
done > /tmp/x2/ab2.log 2>&1
date -u >> /tmp/x2/gpu2.txt
(cd /tmp/x2 && tar czf $OUT/s22_call2.tar.gz .)
cat /tmp/x2/gpu2.txt
