#!/bin/bash
# Session 21, call 7 on the H200 (run from .gpu-bin): Nsight Compute (clocks unlocked; it serialises the kernels and
# flushes the caches before each) on c9cd388's paged_attention_bench and on torch's cuDNN at batch 1, 32k, GQA 4
# and 8, clean flush, three repeats: duration, grid, DRAM bytes read and throughput, warp instructions executed
# -> $OUT/ncu_ours_gqa{4,8}.csv, $OUT/ncu_torch.csv (as session 17's s17_profile.sh, with two more metrics)
cd "$(dirname "$0")"
xz -d -f paged_attention_bench.xz; chmod +x paged_attention_bench
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader | tee $OUT/gpu7.txt; date -u | tee -a $OUT/gpu7.txt
METRICS=gpu__time_duration.sum,launch__grid_size,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum
for g in 4 8; do
  timeout 50 ncu --clock-control none --metrics $METRICS --csv --print-units base \
    ./paged_attention_bench --only $g,1,32768 --repeats 3 --clean-flush --json /tmp/b.json > $OUT/ncu_ours_gqa$g.csv \
    2>/tmp/ncu_ours.err; echo "ours gqa $g exit $?"; tail -3 /tmp/ncu_ours.err
done
timeout 130 ncu --clock-control none --metrics $METRICS --csv --print-units base \
  python3 ../cuda/bench/torch_sdpa_bench.py --only 4,1,32768 --only 8,1,32768 --repeats 3 --clean-flush \
  --json /tmp/t.json > $OUT/ncu_torch.csv 2>/tmp/ncu_torch.err; echo "torch exit $?"; tail -3 /tmp/ncu_torch.err
date -u | tee -a $OUT/gpu7.txt
