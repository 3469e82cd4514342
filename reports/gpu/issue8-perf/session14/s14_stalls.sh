#!/bin/bash
# Session 14: where the warps of the committed tensor-core kernel (637567e) stall, by Nsight Compute's stall
# reasons per issued instruction, on split-K batch 1, 32k, GQA 4 (wide layout) and fused batch 64, 8k, GQA 8
# (deep layout), plus the tensor pipe's and DRAM's utilisation.
cd "$(dirname "$0")"
M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum'
echo "=== split-K batch 1 32k GQA 4 (wide)"
timeout 150 ncu --clock-control none --kernel-name-base mangled -k regex:ILi128ELi4ELi2ELi2048ELb1 --launch-skip 7 --launch-count 1 --metrics "$M" \
  ./paged_attention_bench --only 4,1,32768 --repeats 1 --json /tmp/n.json 2>&1 | grep -v "^==PROF==" | grep -E "stalled|warps_active|issue_active|hmma|dram|duration" | sed 's/smsp__average_warps_issue_stalled_//'
echo "=== fused batch 64 8k GQA 8 (deep)"
timeout 150 ncu --clock-control none --kernel-name-base mangled -k regex:ILi128ELi8ELi3ELi2048ELb1 --launch-skip 3 --launch-count 1 --metrics "$M" \
  ./paged_attention_bench --only 8,64,8192 --repeats 1 --json /tmp/n.json 2>&1 | grep -v "^==PROF==" | grep -E "stalled|warps_active|issue_active|hmma|dram|duration" | sed 's/smsp__average_warps_issue_stalled_//'
