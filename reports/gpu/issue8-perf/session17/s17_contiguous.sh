#!/bin/bash
# Session 17, call 11 on the H200 (run from .gpu-bin): our kernels on K/V read as cuDNN reads them. contig_bench is
# built with contiguous_diag.patch (not for the tree): with DIAG_CONTIGUOUS set, the tensor copies read the pools
# as [KV head][key][dim], each sequence's keys of a head one contiguous run (the block table unused; the data are
# random either way); without it, as the committed kernels do. head_bench is a5e5bab's. Each shape twice,
# interleaved, either flush -> $OUT/ab.log; Nsight Compute's duration and DRAM throughput of the attention kernel
# at GQA 4, batch 1, 32k, both ways -> $OUT/ncu.csv
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader | tee $OUT/gpu.txt; date -u | tee -a $OUT/gpu.txt
run() { local name=$1; shift; echo "== $name $*"; env "$@" --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_|WARN"; }
for flush in "" --clean-flush; do for shape in 4,1,32768 8,1,32768 4,64,8192 8,256,8192; do for rep in 1 2; do
  run head ./head_bench --stages $flush --only $shape
  run paged ./contig_bench --stages $flush --only $shape
  run contiguous DIAG_CONTIGUOUS=1 ./contig_bench --stages $flush --only $shape
done; done; done > $OUT/ab.log 2>&1
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum
for c in "" DIAG_CONTIGUOUS=1; do
  env $c timeout 120 ncu --clock-control none -k regex:attention_kernel --metrics $M --csv --print-units base \
    ./contig_bench --only 4,1,32768 --repeats 1 --clean-flush --json /tmp/b.json 2>/dev/null | sed "s/^/${c:-paged},/"
done > $OUT/ncu.csv
date -u
