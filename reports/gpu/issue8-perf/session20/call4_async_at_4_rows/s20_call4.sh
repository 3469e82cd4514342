#!/bin/bash
# Session 20, call 4 on the H200 (run from .gpu-bin): the production change (K and V by 16-byte asynchronous copies
# at 128 lanes and 4 rows a block) against 29c0c4f:
#  1. A/B base_bench against paged_attention_bench, interleaved, dirty and clean flush twice each -> ab4.log
#  2. the full run: run_on_h200.sh (catalogue, sanitizers, benchmark and torch, both flushes)
#  3. SASS of the 8-row and 4-row wide kernels of fullnotma_bench (call 3's diagnostic build: why 94 registers)
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench gpu_catalogue_test pacheck
mkdir -p /tmp/x4
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x4/gpu4.txt
SHAPES="4,1,1024 4,1,8192 4,1,32768 8,1,32768 4,8,8192 8,8,8192 4,64,8192 8,64,8192 4,256,8192 8,256,8192 4,64,32768"
for pass in "dirty 1" "clean 1" "dirty 2" "clean 2"; do set -- $pass; flush=""; [ $1 = clean ] && flush=--clean-flush
  for shape in $SHAPES; do for b in base_bench paged_attention_bench; do
    echo "== $b $shape rep $2 $1"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done; done
done > /tmp/x4/ab4.log 2>&1
date -u >> /tmp/x4/gpu4.txt
CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh > /tmp/x4/run_on_h200.out 2>&1
date -u >> /tmp/x4/gpu4.txt
for k in '_ZN7pacheck4cuda7kernels28tensor_core_attention_kernelILi128ELi8ELi2ELi2048ELb1ELb1EEEvNS0_11DeviceBatchENS0_10DevicePlanENS0_10FastDivmodENS0_12KvTensorMapsE' \
         '_ZN7pacheck4cuda7kernels28tensor_core_attention_kernelILi128ELi4ELi2ELi2048ELb1ELb1EEEvNS0_11DeviceBatchENS0_10DevicePlanENS0_10FastDivmodENS0_12KvTensorMapsE'; do
  cuobjdump -sass -fun "$k" ./fullnotma_bench > /tmp/x4/sass_$(echo $k | grep -o 'ILi128ELi[48]').txt 2>&1
done
(cd /tmp/x4 && tar czf $OUT/s20_call4.tar.gz .)
cat /tmp/x4/run_on_h200.out | tail -n 60
