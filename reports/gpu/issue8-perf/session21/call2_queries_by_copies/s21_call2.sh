#!/bin/bash
# Session 21, call 2 on the H200 (run from .gpu-bin), interleaved, dirty and clean flush twice each -> ab2.log:
#   head_bench             d43bd7f
#   paged_attention_bench  the block's query rows by 16-byte asynchronous copies into shared memory, after the
#                          table's loads, fragments by ldmatrix; pieces past the head zero-filled at 4 rows too
#   varc_bench             the same, pieces past the head skipped at 4 rows (d43bd7f's rule)
#   vard_bench             d43bd7f with the pieces past the head zero-filled at 4 rows too
# with torch's SDPA on four shapes in each pass; then a short correctness run of paged_attention_bench's kernels.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench gpu_catalogue_test pacheck
mkdir -p /tmp/x2
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x2/gpu2.txt
SHAPES="4,1,1024 4,1,8192 4,1,32768 8,1,1024 8,1,8192 8,1,32768 4,8,8192 8,8,8192 4,64,8192 8,64,8192 4,256,8192 8,256,8192"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench paged_attention_bench varc_bench vard_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
  echo "== torch rep $2 $1"
  timeout 120 python3 ../cuda/bench/torch_sdpa_bench.py $flush --json /tmp/t.json --only 4,1,32768 --only 8,1,32768 \
    --only 4,64,8192 --only 8,64,8192 2>&1 | tail -n 12
done > /tmp/x2/ab2.log 2>&1
date -u >> /tmp/x2/gpu2.txt
CASES=150 LIMIT=200 SAN_CASES=8 BENCH_LIMIT=1 SKIP_TORCH=1 CLEAN_FLUSH=0 bash ./run_on_h200.sh > /tmp/x2/run_on_h200.out 2>&1
date -u >> /tmp/x2/gpu2.txt
cp $OUT/correctness_logs.tar.gz /tmp/x2/ 2>/dev/null
(cd /tmp/x2 && tar czf $OUT/s21_call2.tar.gz .)
cat /tmp/x2/gpu2.txt
grep -A40 "== summary" /tmp/x2/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -30
