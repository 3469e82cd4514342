#!/bin/bash
# Session 19, call 6 on the H200 (run from .gpu-bin): run_on_h200.sh with synccheck added to its sanitizers, on the
# binaries of f0046ea's kernels (the session's kernel experiments were all dropped).
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x paged_attention_bench pacheck gpu_catalogue_test
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
CASES=300 LIMIT=300 SAN_CASES=40 BENCH_LIMIT=120 bash ./run_on_h200.sh
date -u >> $OUT/gpu.txt
