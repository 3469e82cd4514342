#!/bin/bash
# Session 21, call 8 on the H200 (run from .gpu-bin): a short correctness run after the review's mend of
# online_softmax.h (rescale_factor, raise_running_max and key_weight each one unbranched form; the tensor-core
# kernels' PTX is unchanged, the CUDA-core kernels' changed): the catalogue at 100 cases per property, the four
# sanitizers at 4 cases, no benchmark.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x paged_attention_bench gpu_catalogue_test pacheck
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu8.txt
CASES=100 LIMIT=120 SAN_CASES=4 BENCH_LIMIT=1 SKIP_TORCH=1 CLEAN_FLUSH=0 bash ./run_on_h200.sh > $OUT/run_on_h200.out 2>&1
date -u >> $OUT/gpu8.txt
cat $OUT/gpu8.txt
grep -A40 "== summary" $OUT/run_on_h200.out | grep -v "^=* *ERROR SUMMARY: 0\|^exit 0\|0 hazards" | head -30
