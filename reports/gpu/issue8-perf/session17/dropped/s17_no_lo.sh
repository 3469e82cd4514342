#!/bin/bash
# Session 17, call 7 on the H200 (run from .gpu-bin): what the weights' bf16 hi + lo split costs. nolo_bench is
# built with dropped/no_lo_diag.patch (a measurement only: the lo half of the weights never enters the values
# product, so its arithmetic is not the error model's and it is not in the tree); head_bench is a5e5bab's.
# Each shape twice, interleaved, either flush -> $OUT/ab.log; Nsight Compute's duration and instruction count of
# both attention kernels at GQA 4, batch 1, 32k -> $OUT/ncu.csv
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader | tee $OUT/gpu.txt; date -u | tee -a $OUT/gpu.txt
for flush in "" --clean-flush; do for shape in 4,1,32768 8,1,32768 4,1,8192 4,64,8192 8,64,8192 8,256,8192; do
  for rep in 1 2; do for b in head_bench nolo_bench; do
    echo "== $b $shape rep $rep ${flush:-dirty}"
    timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_|WARN"
  done; done
done; done > $OUT/ab.log 2>&1
for b in head_bench nolo_bench; do
  timeout 120 ncu --clock-control none -k regex:attention_kernel --metrics gpu__time_duration.sum,smsp__inst_executed.sum \
    --csv --print-units base ./$b --only 4,1,32768 --repeats 1 --clean-flush --json /tmp/b.json 2>/dev/null | sed "s/^/$b,/"
done > $OUT/ncu.csv
date -u
