#!/bin/bash
# Session 22, call 3 on the H200 (run from .gpu-bin): the committed kernels (bb62464's device code; the launcher
# no longer encodes tensor maps for layouts that copy without them) and the new relaunch test:
#   the relaunch test; its mutant build (the merge without its griddepcontrol.wait); the test under memcheck;
#   then the final run: CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench gpu_catalogue_test* pacheck
mkdir -p /tmp/x3
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x3/gpu3.txt
{ echo "== relaunch test"; ./gpu_catalogue_test --gtest_filter='GpuSplitK*' 2>&1 | tail -n 8
  echo "== relaunch test, mutant build (the merge reads without waiting for the attention grid)"
  ./gpu_catalogue_test_no_wait_mutant --gtest_filter='GpuSplitK*' 2>&1 | grep -v "^\[ RUN\|^\[----\|^\[====\|^$" | tail -n 12
  echo "== relaunch test under memcheck"
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ./gpu_catalogue_test --gtest_filter='GpuSplitK*' 2>&1 | tail -n 4
} > /tmp/x3/relaunch.log 2>&1
date -u >> /tmp/x3/gpu3.txt
CASES=500 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh > /tmp/x3/run_on_h200.out 2>&1
date -u >> /tmp/x3/gpu3.txt
(cd /tmp/x3 && tar czf $OUT/s22_call3.tar.gz .)
cat /tmp/x3/gpu3.txt /tmp/x3/relaunch.log
grep -A60 "== summary" /tmp/x3/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -60
