#!/bin/bash
# Session 21, call 3 on the H200 (run from .gpu-bin), interleaved, dirty and clean flush twice each -> ab3.log:
#   head_bench             d43bd7f
#   paged_attention_bench  the rows of tile i + STAGES looked up at the top of tile i (before the scores), not
#                          when its copies are issued after the values
# with torch's SDPA on four shapes in each pass; the SASS of the 4-row wide asynchronous kernel of head_bench,
# paged_attention_bench and varc_bench (call 2's queries-by-copies build, pieces skipped at 4 rows); then a short
# correctness run of paged_attention_bench's kernels.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench gpu_catalogue_test pacheck
mkdir -p /tmp/x3
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x3/gpu3.txt
K=_ZN7pacheck4cuda7kernels28tensor_core_attention_kernelILi128ELi4ELi2ELi2048ELb1ELNS1_11tensor_core10TileCopiesE1EEEvNS0_11DeviceBatchENS0_10DevicePlanENS0_10FastDivmodENS0_12KvTensorMapsE
for b in head_bench paged_attention_bench varc_bench; do cuobjdump -sass -fun $K ./$b > /tmp/x3/sass_$b.txt 2>&1; done
SHAPES="4,1,1024 4,1,8192 4,1,32768 8,1,1024 8,1,8192 8,1,32768 4,8,8192 8,8,8192 4,64,8192 8,64,8192 4,256,8192 8,256,8192"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench paged_attention_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
  echo "== torch rep $2 $1"
  timeout 120 python3 ../cuda/bench/torch_sdpa_bench.py $flush --json /tmp/t.json --only 4,1,32768 --only 8,1,32768 \
    --only 4,64,8192 --only 8,64,8192 2>&1 | tail -n 12
done > /tmp/x3/ab3.log 2>&1
date -u >> /tmp/x3/gpu3.txt
CASES=150 LIMIT=200 SAN_CASES=8 BENCH_LIMIT=1 SKIP_TORCH=1 CLEAN_FLUSH=0 bash ./run_on_h200.sh > /tmp/x3/run_on_h200.out 2>&1
date -u >> /tmp/x3/gpu3.txt
cp $OUT/correctness_logs.tar.gz /tmp/x3/ 2>/dev/null
(cd /tmp/x3 && tar czf $OUT/s21_call3.tar.gz .)
cat /tmp/x3/gpu3.txt
wc -l /tmp/x3/sass_*
grep -A40 "== summary" /tmp/x3/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -30
