#!/bin/bash
# Session 17, call 9 on the H200 (run from .gpu-bin): call 8's phase trace with the refill split in two (lane 0's
# barrier arrival and slot-row lookup, then the tensor copies' issue: phase_trace_refill.patch) -> $OUT/phases2.log
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u
for shape in 4,1,32768 4,64,8192 8,256,8192; do
  echo "== $shape clean"
  PHASES=1 timeout 60 ./phase_bench --clean-flush --only $shape --json /tmp/x.json 2>&1 | grep -E "PHASES"
done 2>&1 | tee $OUT/phases2.log
