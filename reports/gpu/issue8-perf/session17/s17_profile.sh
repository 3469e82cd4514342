#!/bin/bash
# Session 17, call 5 on the H200 (run from .gpu-bin): what cuDNN's call is made of at batch 1, 32k, next to ours.
# Nsight Compute (clocks unlocked; it serialises the kernels and flushes the caches before each, so a programmatic
# dependent launch does not overlap there) times every kernel of torch_sdpa_bench.py and of paged_attention_bench
# (46b43d0) on GQA 4 and 8, batch 1, 32k, clean flush, three repeats: name, duration, grid, block, registers, DRAM
# bytes read -> $OUT/ncu_torch.csv, $OUT/ncu_ours.csv
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader | tee $OUT/gpu.txt; date -u | tee -a $OUT/gpu.txt
METRICS=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,dram__bytes_read.sum
timeout 280 ncu --clock-control none --metrics $METRICS --csv --print-units base \
  python3 ../cuda/bench/torch_sdpa_bench.py --only 4,1,32768 --only 8,1,32768 --repeats 3 --clean-flush \
  --json /tmp/t.json > $OUT/ncu_torch.csv 2>/tmp/ncu_torch.err; echo "torch exit $?"; tail -3 /tmp/ncu_torch.err
timeout 200 ncu --clock-control none --metrics $METRICS --csv --print-units base \
  ./paged_attention_bench --only 4,1,32768 --repeats 3 --clean-flush --json /tmp/b.json > $OUT/ncu_ours.csv \
  2>/tmp/ncu_ours.err; echo "ours exit $?"; tail -3 /tmp/ncu_ours.err
for f in $OUT/ncu_torch.csv $OUT/ncu_ours.csv; do
  echo "== $f"; grep "gpu__time_duration" $f | awk -F'","' '{print $5}' | sort | uniq -c | sort -rn | head -12
done
date -u
