#!/bin/bash
# Session 22, call 8 on the H200 (run from .gpu-bin): the CUDA-core kernel with an empty state's factor kept at 1
# (g1b: value-identical to g1, but rows that never get a key no longer defeat the rescale's skip), interleaved
# with g1 (7df73f7) and bb62464 in the bf16 instantiations (--layouts), dirty and clean flush once each -> ab8.log;
# then correctness of the tree with g1b: catalogue at 200 cases per property, sanitizers at 12 cases.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench gpu_catalogue_test pacheck
mkdir -p /tmp/x8
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x8/gpu8.txt
SHAPES="4,1,8192 8,1,8192 4,64,8192 8,64,8192"
for pass in "dirty 1" "clean 1"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench g1_bench g1b_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --layouts --only $shape --json /tmp/x.json 2>&1 | grep -E " cc_|WARN"
  done; done
done > /tmp/x8/ab8.log 2>&1
date -u >> /tmp/x8/gpu8.txt
CASES=200 LIMIT=200 SAN_CASES=12 BENCH_LIMIT=1 SKIP_TORCH=1 CLEAN_FLUSH=0 bash ./run_on_h200.sh > /tmp/x8/run_on_h200.out 2>&1
date -u >> /tmp/x8/gpu8.txt
cp $OUT/correctness_logs.tar.gz /tmp/x8/ 2>/dev/null
(cd /tmp/x8 && tar czf $OUT/s22_call8.tar.gz .)
cat /tmp/x8/gpu8.txt
grep -A60 "== summary" /tmp/x8/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -30
