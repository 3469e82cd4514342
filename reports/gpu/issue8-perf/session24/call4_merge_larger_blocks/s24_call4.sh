#!/bin/bash
# Session 24, call 4 on the H200 (run from .gpu-bin), interleaved, dirty and clean flush twice each -> ab4.log:
#   head_bench   36e18f2
#   ml256_bench  the split-K merge's lane-per-thread shape in blocks of 256 threads (two 128-lane rows a block)
#                instead of a row per 128-thread block
#   ml512_bench  the same in blocks of 512 threads (four rows a block)
# with torch's SDPA on the batch-1, 32k shapes in each pass; then a short correctness run of ml256 and of ml512.
cd "$(dirname "$0")"
for f in *.xz */*.xz; do xz -d -f "$f"; done; chmod +x *_bench */gpu_catalogue_test */pacheck
mkdir -p /tmp/x4
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x4/gpu4.txt
SHAPES="4,1,1024 4,1,8192 8,1,8192 4,1,32768 8,1,32768"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench ml256_bench ml512_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
  echo "== torch rep $2 $1"
  timeout 120 python3 ../cuda/bench/torch_sdpa_bench.py $flush --json /tmp/t.json --only 4,1,32768 --only 8,1,32768 \
    2>&1 | tail -n 8
done > /tmp/x4/ab4.log 2>&1
date -u >> /tmp/x4/gpu4.txt
for tree in ml256 ml512; do
  rm -rf /tmp/san /tmp/summary_*.json; mkdir -p $OUT/$tree
  OUT=$OUT/$tree CASES=150 LIMIT=200 SAN_CASES=8 BENCH_LIMIT=1 SKIP_TORCH=1 CLEAN_FLUSH=0 bash ./$tree/run_on_h200.sh \
    > /tmp/x4/run_on_h200_$tree.out 2>&1
  date -u >> /tmp/x4/gpu4.txt
  (cd $OUT/$tree && tar czf /tmp/x4/correctness_logs_$tree.tar.gz . ; grep -h -c "PASSED\|FAILED" catalogue_*.log | paste -sd' ';
   grep -h "^exit" catalogue_*.log | sort | uniq -c; grep -h "FAILED\|ERROR SUMMARY: [1-9]" catalogue_*.log sanitizer.log | head;
   grep -c "^exit 0" sanitizer.log) | sed "s/^/$tree: /"
  rm -rf $OUT/$tree
done
(cd /tmp/x4 && tar czf $OUT/s24_call4.tar.gz .)
cat /tmp/x4/gpu4.txt
