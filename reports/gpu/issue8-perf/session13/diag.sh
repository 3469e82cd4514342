#!/bin/bash
# Diagnostics: (1) small grids with tile 63 (no tensor copies: 16-byte copies into the swizzled layout) against
# tile 64; (2) Nsight Compute on the timed split-K launch at batch 1, 32k (wide layout) and the fused launch at
# batch 64, 8k (deep layout).
cd "$(dirname "$0")"
for t in 64 63; do for shape in 4,8,8192 4,1,32768; do
  echo "== tile $t $shape"; ./paged_attention_bench --layouts --only $shape --tile-size $t --json /tmp/x.json 2>&1 | grep -E "cuda_fused|tc_s3_t2048 |tc_s2_t2048_tma "
done; done
SECTIONS="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section LaunchStats"
echo "=== ncu split-K batch 1 32k GQA 4 (wide)"
timeout 120 ncu --clock-control none --kernel-name-base mangled -k regex:ILi128ELi4ELi2ELi2048ELb1 --launch-skip 7 --launch-count 1 $SECTIONS \
  ./paged_attention_bench --only 4,1,32768 --repeats 1 --json /tmp/n.json 2>&1 | grep -v "^==PROF==" | tail -n 120
echo "=== ncu fused batch 64 8k GQA 8 (deep)"
timeout 120 ncu --clock-control none --kernel-name-base mangled -k regex:ILi128ELi8ELi3ELi2048ELb1 --launch-skip 3 --launch-count 1 $SECTIONS \
  ./paged_attention_bench --only 8,64,8192 --repeats 1 --json /tmp/n.json 2>&1 | grep -v "^==PROF==" | tail -n 120
