#!/bin/bash
# Session 18, call 6 on the H200 (run from .gpu-bin): the binaries of 9872d80 (wide-tma renamed wide-kv-tma, comments),
# whose kernels are those of call 4: the twelve catalogue processes at 200 cases per property, and pacheck check
# with PACHECK_TENSOR_CORE_LAYOUT=wide-kv-tma (and a malformed value) on both kernels -> $OUT/smoke.log
cd "$(dirname "$0")"
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/smoke.log
export RC_PARAMS="max_success=200"
for suite in GpuCatalogue GpuCatalogueDeep GpuCatalogueWide GpuEngineShapes GpuEngineShapesDeep GpuEngineShapesWide; do
for v in cuda_fused cuda_splitk; do
  (timeout 200 ./gpu_catalogue_test --gtest_filter="$suite/*__$v" > /tmp/c_$suite-$v.log 2>&1; echo "exit $?" >> /tmp/c_$suite-$v.log) &
done; done
for v in cuda_fused cuda_splitk; do
  (PACHECK_TENSOR_CORE_LAYOUT=wide-kv-tma timeout 200 ./pacheck check --variant $v --engine-shapes --cases 100 > /tmp/p_$v.log 2>&1; echo "exit $?" >> /tmp/p_$v.log) &
done; wait
for f in /tmp/c_*.log /tmp/p_*.log; do echo "== $f: $(grep -c '\[       OK \]' $f) ok, $(grep -c 'FAILED  \]' $f) failed, $(tail -n1 $f)"; done >> $OUT/smoke.log
PACHECK_TENSOR_CORE_LAYOUT=wide-tma ./pacheck check --variant cuda_fused --cases 1 >> $OUT/smoke.log 2>&1; echo "malformed pin: exit $?" >> $OUT/smoke.log
date -u >> $OUT/smoke.log
