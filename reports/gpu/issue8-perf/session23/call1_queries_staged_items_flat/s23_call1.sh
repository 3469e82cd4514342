#!/bin/bash
# Session 23, call 1 on the H200 (run from .gpu-bin), interleaved, dirty and clean flush twice each -> ab1.log:
#   head_bench   e15ca66
#   q_bench      the tensor-core kernel's queries staged in shared memory by 16-byte asynchronous copies
#   qf_bench     that, and the work items carrying their sequence's record (one load at a block's start, not two)
# with torch's SDPA on the batch-1, 32k shapes in each pass; then a short correctness run of the qf tree.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench gpu_catalogue_test pacheck
mkdir -p /tmp/x1
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x1/gpu1.txt
SHAPES="4,1,1024 4,1,8192 4,1,32768 8,1,8192 8,1,32768 4,8,8192 8,8,8192 4,64,8192 8,64,8192"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench q_bench qf_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
  echo "== torch rep $2 $1"
  timeout 120 python3 ../cuda/bench/torch_sdpa_bench.py $flush --json /tmp/t.json --only 4,1,32768 --only 8,1,32768 \
    2>&1 | tail -n 8
done > /tmp/x1/ab1.log 2>&1
date -u >> /tmp/x1/gpu1.txt
CASES=150 LIMIT=200 SAN_CASES=8 BENCH_LIMIT=1 SKIP_TORCH=1 CLEAN_FLUSH=0 bash ./run_on_h200.sh > /tmp/x1/run_on_h200.out 2>&1
date -u >> /tmp/x1/gpu1.txt
cp $OUT/correctness_logs.tar.gz /tmp/x1/ 2>/dev/null
(cd /tmp/x1 && tar czf $OUT/s23_call1.tar.gz .)
cat /tmp/x1/gpu1.txt
grep -A40 "== summary" /tmp/x1/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -30
