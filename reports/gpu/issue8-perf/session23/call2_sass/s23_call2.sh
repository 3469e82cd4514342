#!/bin/bash
# Session 23, call 2 on the H200 (run from .gpu-bin): the SASS of the wide 128-lane async kernels (8 and 4 rows) in
# head_bench (e15ca66), q_bench (queries staged) and qf_bench (that, and work items carrying their sequence's
# record), then the three interleaved again on batch-1 shapes, dirty and clean flush twice each -> ab2.log, with
# torch's SDPA on the batch-1, 32k shapes in each pass.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench gpu_catalogue_test pacheck
mkdir -p /tmp/x2
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x2/gpu2.txt
K8=_ZN7pacheck4cuda7kernels28tensor_core_attention_kernelILi128ELi8ELi2ELi2048ELb1ELNS1_11tensor_core10TileCopiesE1EEEvNS0_11DeviceBatchENS0_10DevicePlanENS0_10FastDivmodENS0_12KvTensorMapsE
K4=${K8/Li128ELi8E/Li128ELi4E}
for b in head_bench q_bench qf_bench; do
  cuobjdump -sass -fun $K8 ./$b > /tmp/x2/sass8_$b.txt 2>&1
  cuobjdump -sass -fun $K4 ./$b > /tmp/x2/sass4_$b.txt 2>&1
done
wc -l /tmp/x2/sass*.txt
SHAPES="4,1,8192 8,1,8192 4,1,32768 8,1,32768"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in head_bench q_bench qf_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
  echo "== torch rep $2 $1"
  timeout 120 python3 ../cuda/bench/torch_sdpa_bench.py $flush --json /tmp/t.json --only 4,1,32768 --only 8,1,32768 \
    2>&1 | tail -n 8
done > /tmp/x2/ab2.log 2>&1
date -u >> /tmp/x2/gpu2.txt
(cd /tmp/x2 && tar czf $OUT/s23_call2.tar.gz .)
cat /tmp/x2/gpu2.txt
