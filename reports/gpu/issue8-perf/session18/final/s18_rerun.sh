#!/bin/bash
# Session 18, call 5 on the H200 (run from .gpu-bin): the three split-K engine-shape catalogue processes that ran
# past run_on_h200.sh's 280 s limit in call 4 (twelve processes side by side; none had failed), alone, at the same
# 1,000 cases per property, with a 420 s limit -> $OUT/rerun_*.log
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader > $OUT/gpu_rerun.txt; date -u >> $OUT/gpu_rerun.txt
export RC_PARAMS="max_success=1000"
for suite in GpuEngineShapes GpuEngineShapesDeep GpuEngineShapesWide; do
  (PACHECK_GPU_SUMMARY=$OUT/summary_$suite.json timeout 420 ./gpu_catalogue_test --gtest_filter="$suite/*__cuda_splitk" \
     > $OUT/rerun_$suite.log 2>&1; echo "exit $?" >> $OUT/rerun_$suite.log) &
done; wait
date -u >> $OUT/gpu_rerun.txt
