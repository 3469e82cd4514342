#!/bin/bash
# Session 22, call 7 on the H200 (run from .gpu-bin): correctness of the committed tree with the CUDA-core kernel's
# guards gone (call 6's g1): the catalogue, the relaunch test (its fp32 half runs the CUDA-core kernel) and the
# sanitizers; no benchmark (the production bf16 kernels are unchanged).
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench gpu_catalogue_test pacheck
mkdir -p /tmp/x7
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > /tmp/x7/gpu7.txt
CASES=300 LIMIT=250 SAN_CASES=20 BENCH_LIMIT=1 SKIP_TORCH=1 CLEAN_FLUSH=0 bash ./run_on_h200.sh > /tmp/x7/run_on_h200.out 2>&1
date -u >> /tmp/x7/gpu7.txt
cp $OUT/correctness_logs.tar.gz /tmp/x7/ 2>/dev/null
(cd /tmp/x7 && tar czf $OUT/s22_call7.tar.gz .)
cat /tmp/x7/gpu7.txt
grep -A60 "== summary" /tmp/x7/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -40
