#!/bin/bash
# Session 17, call 6 on the H200 (run from .gpu-bin): more of cuDNN's batch-1 kernel next to ours (GQA 4, batch 1,
# 32k, clean flush, one repeat each): shared memory, occupancy limits, active warps, instructions executed, DRAM
# throughput -> $OUT/ncu2_torch.csv, $OUT/ncu2_ours.csv
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader | tee $OUT/gpu2.txt; date -u | tee -a $OUT/gpu2.txt
M=gpu__time_duration.sum,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static
M=$M,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__occupancy_limit_warps
M=$M,sm__warps_active.avg.per_cycle_active,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
M=$M,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio
M=$M,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
timeout 200 ncu --clock-control none -k regex:"sdpa|lean" --metrics $M --csv --print-units base \
  python3 ../cuda/bench/torch_sdpa_bench.py --only 4,1,32768 --repeats 1 --clean-flush \
  --json /tmp/t.json > $OUT/ncu2_torch.csv 2>/tmp/e1; echo "torch exit $?"; tail -2 /tmp/e1
timeout 200 ncu --clock-control none -k regex:"attention_kernel|merge" --metrics $M --csv \
  --print-units base ./paged_attention_bench --only 4,1,32768 --repeats 1 --clean-flush --json /tmp/b.json \
  > $OUT/ncu2_ours.csv 2>/tmp/e2; echo "ours exit $?"; tail -2 /tmp/e2
date -u
