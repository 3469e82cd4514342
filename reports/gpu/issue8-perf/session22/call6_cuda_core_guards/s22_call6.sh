#!/bin/bash
# Session 22, call 6 on the H200 (run from .gpu-bin): the CUDA-core kernel (fp32 and fp16 in production; timed here
# in its bf16 instantiations of the production shapes, --layouts: cc_r4x1_t32_s2_l8 for 4 rows, cc_r8x1_t32_s3_l8
# for 8), interleaved, dirty and clean flush twice each -> ab6.log:
#   head_bench  bb62464: a fully masked tile skips the raise (factor 1), a masked key's weight is a select around
#               the exp, and the accumulator is rescaled only when some row's factor is not 1
#   g1_bench    both guards gone: raise_running_max and key_weight take masked values as they are
#   g2_bench    g1 with every row rescaled every tile (no test of the factors)
cd "$(dirname "$0")"
for f in *_bench.xz; do xz -d -f "$f"; done; chmod +x *_bench
mkdir -p /tmp/x6
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x6/gpu6.txt
SHAPES="4,1,8192 8,1,8192 4,8,8192 8,8,8192 4,64,8192 8,64,8192"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench g1_bench g2_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --layouts --only $shape --json /tmp/x.json 2>&1 | grep -E " cc_|WARN"
  done; done
done > /tmp/x6/ab6.log 2>&1
date -u >> /tmp/x6/gpu6.txt
(cd /tmp/x6 && tar czf $OUT/s22_call6.tar.gz .)
cat /tmp/x6/gpu6.txt; head -5 /tmp/x6/ab6.log
