#!/bin/bash
# Session 25, call 2 on the H200 (run from .gpu-bin), interleaved, dirty and clean flush twice each -> ab2.log:
#   head_bench   a77d2ed (the committed kernels: af9b47a's build)
#   pf_bench     the lane-per-thread split-K merge issuing the next batch's loads before merging the current one
#                (same merges, same order; 134 registers under a 3-block launch bound, against 138)
# with torch's SDPA on the batch-1, 32k shapes in each pass; then pf's full run (catalogue at 500 cases per
# property, 40 sanitizer runs, the benchmark and torch under both flushes), as a final run would be.
cd "$(dirname "$0")"
for f in *.xz */*.xz; do xz -d -f "$f"; done; chmod +x *_bench pf/paged_attention_bench pf/gpu_catalogue_test pf/pacheck
ln -sfn ../cuda cuda
mkdir -p /tmp/x2
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x2/gpu2.txt
SHAPES="4,1,1024 4,1,8192 8,1,8192 4,1,32768 8,1,32768 4,8,8192 4,64,8192"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench pf_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
  echo "== torch rep $2 $1"
  timeout 120 python3 ../cuda/bench/torch_sdpa_bench.py $flush --json /tmp/t.json --only 4,1,32768 --only 8,1,32768 \
    2>&1 | tail -n 8
done > /tmp/x2/ab2.log 2>&1
date -u >> /tmp/x2/gpu2.txt
mkdir -p $OUT/pf
OUT=$OUT/pf CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./pf/run_on_h200.sh > /tmp/x2/run_on_h200_pf.out 2>&1
date -u >> /tmp/x2/gpu2.txt
(cd $OUT/pf && mv correctness_logs.tar.gz /tmp/x2/ && mv perf.log bench.json torch.json clean_flush.tar.gz /tmp/x2/ 2>/dev/null)
rm -rf $OUT/pf
(cd /tmp/x2 && tar czf $OUT/s25_call2.tar.gz .)
cp /tmp/x2/ab2.log /tmp/x2/gpu2.txt $OUT/
cat /tmp/x2/gpu2.txt
grep -A60 "== summary" /tmp/x2/run_on_h200_pf.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -40
