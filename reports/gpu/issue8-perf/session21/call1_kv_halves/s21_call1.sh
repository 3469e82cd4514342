#!/bin/bash
# Session 21, call 1 on the H200 (run from .gpu-bin): exp = paged_attention_bench (K and V of a tile as two commit
# groups: K refilled after the scores, V after the values; V waited for only before the values) against
# head_bench (d43bd7f). Interleaved, dirty and clean flush twice each -> ab1.log; then a short correctness run.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench paged_attention_bench gpu_catalogue_test pacheck
mkdir -p /tmp/x1
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x1/gpu1.txt
SHAPES="4,1,1024 4,1,8192 4,1,32768 8,1,1024 8,1,8192 8,1,32768 4,8,8192 8,8,8192 4,64,8192 8,64,8192 4,256,8192 8,256,8192"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench paged_attention_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
  for shape in 4,1,32768 8,1,32768 4,1,8192; do for b in head_bench paged_attention_bench; do
    echo "== $b $shape deep rep $2 $1"
    PACHECK_TENSOR_CORE_LAYOUT=deep timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_splitk|splitk_no|WARN"
    for split in 993 768; do
      [ $shape = 4,1,8192 ] && continue
      echo "== $b $shape split$split rep $2 $1"
      timeout 60 ./$b $flush --stages --split $split --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_splitk|splitk_no|WARN"
    done
  done; done
done > /tmp/x1/ab1.log 2>&1
date -u >> /tmp/x1/gpu1.txt
CASES=150 LIMIT=200 SAN_CASES=8 BENCH_LIMIT=1 SKIP_TORCH=1 CLEAN_FLUSH=0 bash ./run_on_h200.sh > /tmp/x1/run_on_h200.out 2>&1
date -u >> /tmp/x1/gpu1.txt
cp $OUT/correctness_logs.tar.gz /tmp/x1/ 2>/dev/null
(cd /tmp/x1 && tar czf $OUT/s21_call1.tar.gz .)
cat /tmp/x1/gpu1.txt
grep -A40 "== summary" /tmp/x1/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -30
