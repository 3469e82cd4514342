#!/bin/bash
# Session 22, call 4 on the H200 (run from .gpu-bin): the relaunch test as committed (the second problem's answer
# checked as the first's negated), on the committed kernels and on the mutant build (the merge without its
# griddepcontrol.wait), three times each.
cd "$(dirname "$0")"
for f in gpu_catalogue_test*.xz; do xz -d -f "$f"; done; chmod +x gpu_catalogue_test*
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u
  for i in 1 2 3; do echo "== relaunch test, run $i"; ./gpu_catalogue_test --gtest_filter='GpuSplitK*' 2>&1 | tail -n 3
    echo "== mutant build (the merge reads without waiting for the attention grid), run $i"
    ./gpu_catalogue_test_no_wait_mutant --gtest_filter='GpuSplitK*' 2>&1 | grep -v "^\[ RUN\|^\[----\|^\[====\|^$\|^Running\|^Note" | tail -n 12
  done; date -u; } > $OUT/relaunch4.log 2>&1
cat $OUT/relaunch4.log
