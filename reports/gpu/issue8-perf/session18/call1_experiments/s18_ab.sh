#!/bin/bash
# Session 18, call 1 on the H200 (run from .gpu-bin).
#   checks: pacheck_exp1 / pacheck_exp2 (experiment builds) over the catalogue, both kernels, general draw and
#   engine shapes, 150 cases per property -> $OUT/checks.log
#   A/B: base_bench (e96363a) against exp1_bench (one 4D tensor copy per warp tile of K and of V: both 64-lane parts
#   of the rows in one box) and exp2_bench (K by tensor copies, V by 16-byte asynchronous copies), each shape twice,
#   interleaved, dirty and clean flush -> $OUT/ab.log
# Builds: copy_experiments.patch with -DPACHECK_EXPERIMENT=1 or 2 in CMAKE_CUDA_FLAGS and CMAKE_CXX_FLAGS.
cd "$(dirname "$0")"
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu.txt
export RC_PARAMS="max_success=150"
for n in 1 2; do for v in cuda_fused cuda_splitk; do for draw in "" --engine-shapes; do
  ( timeout 150 ./pacheck_exp$n check --variant $v --cases 150 $draw > /tmp/check_$n$v$draw.log 2>&1; echo "exit $?" >> /tmp/check_$n$v$draw.log ) &
done; done; done; wait
for f in /tmp/check_*.log; do echo "== $f"; tail -n 6 $f; done > $OUT/checks.log 2>&1
SHAPES=${SHAPES:-4,1,32768 8,1,32768 4,64,8192 8,64,8192 4,256,8192}
for flush in "" --clean-flush; do for shape in $SHAPES; do for rep in 1 2; do
  for b in base_bench exp1_bench exp2_bench; do
    echo "== $b $shape rep $rep ${flush:-dirty}"; timeout 60 ./$b $flush --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|WARN|rror"
  done
done; done; done > $OUT/ab.log 2>&1
date -u >> $OUT/gpu.txt
