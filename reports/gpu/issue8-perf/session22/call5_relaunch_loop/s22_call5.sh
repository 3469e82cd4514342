#!/bin/bash
# Session 22, call 5 on the H200 (run from .gpu-bin): does the relaunch loop itself catch the no-wait merge? The
# mutant build of call 4 (the merge without griddepcontrol.wait) with the test's fresh-plan check of the second
# problem left out, so that only the loop (one plan launched 8 times a round, 20 rounds) can fail it; three runs.
cd "$(dirname "$0")"
xz -d -f gpu_catalogue_test_no_wait_no_precheck.xz; chmod +x gpu_catalogue_test_no_wait_no_precheck
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u
  for i in 1 2 3; do echo "== mutant build, no fresh-plan check, run $i"
    ./gpu_catalogue_test_no_wait_no_precheck --gtest_filter='GpuSplitK*' 2>&1 | grep -v "^\[ RUN\|^\[----\|^\[====\|^$\|^Running\|^Note" | tail -n 12
  done; date -u; } > $OUT/relaunch5.log 2>&1
cat $OUT/relaunch5.log
