#!/bin/bash
# Session 20, call 1 on the H200 (run from .gpu-bin):
#  1. A/B, interleaved, twice per flush: base_bench (29c0c4f), dual_bench (the scores as two mma chains),
#     copy_bench (diagnostic: the tile loop waits for and refills tiles, no arithmetic), compute_bench
#     (diagnostic: the arithmetic on the first tiles' stages, no copies after them) -> $OUT/ab.log
#  2. torch SDPA at batch 1 (both flushes) -> $OUT/torch.log
#  3. dual: the twelve catalogue processes at 300 cases -> $OUT/checks.log
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench gpu_catalogue_test pacheck
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu.txt
SHAPES="4,1,32768 8,1,32768 4,1,8192 4,64,8192 8,256,8192"
for flush in --clean-flush ""; do for shape in $SHAPES; do for rep in 1 2; do
  for b in base_bench dual_bench copy_bench compute_bench; do
    echo "== $b $shape rep $rep ${flush:-dirty}"; timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done
done; done; done > $OUT/ab.log 2>&1
date -u >> $OUT/gpu.txt
for flush in --clean-flush ""; do
  echo "== torch ${flush:-dirty}"; timeout 100 python3 ../cuda/bench/torch_sdpa_bench.py $flush --only 4,1,32768 --only 8,1,32768 --only 4,1,8192 --json /tmp/t.json 2>&1 | tail -n 12
done > $OUT/torch.log 2>&1
date -u >> $OUT/gpu.txt
export RC_PARAMS="max_success=300"
for suite in GpuCatalogue GpuCatalogueDeep GpuCatalogueWide GpuEngineShapes GpuEngineShapesDeep GpuEngineShapesWide; do
for v in cuda_fused cuda_splitk; do
  (timeout 200 ./gpu_catalogue_test --gtest_filter="$suite/*__$v" > /tmp/c_$suite-$v.log 2>&1; echo "exit $?" >> /tmp/c_$suite-$v.log) &
done; done; wait
{ for f in /tmp/c_*.log; do echo "== $f: $(grep -c '\[       OK \]' $f) ok, $(grep -c 'FAILED  \]' $f) failed, $(tail -n1 $f)"; grep -B2 -A30 "FAILED  \]\|Falsifiable" $f | head -60; done; } > $OUT/checks.log
date -u >> $OUT/gpu.txt
