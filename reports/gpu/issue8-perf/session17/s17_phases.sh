#!/bin/bash
# Session 17, call 8 on the H200 (run from .gpu-bin): cycles per tile in each phase of the tensor-core kernel's tile
# loop (phase_trace.patch, a diagnostic build, not in the tree: lane 0 of every warp reads clock64 after each phase,
# each read waiting for that phase's results), summed over every warp and tile of one launch after a flush; and the
# diagnostic build's timings beside head_bench's (a5e5bab) -> $OUT/phases.log
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u
for flush in --clean-flush ""; do for shape in 4,1,32768 8,1,32768 4,64,8192 8,64,8192 8,256,8192; do
  echo "== $shape ${flush:-dirty}"
  PHASES=1 timeout 60 ./phase_bench $flush --only $shape --json /tmp/x.json 2>&1 | grep -E "PHASES|cuda_"
  timeout 60 ./head_bench $flush --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_" | sed 's/^/head /'
done; done 2>&1 | tee $OUT/phases.log
