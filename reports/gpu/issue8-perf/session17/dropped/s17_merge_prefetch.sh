#!/bin/bash
# Session 17, call 4 on the H200 (run from .gpu-bin): the split-K merge loading the next batch of 16 partial states
# before merging the current one (merge_prefetch.patch, on 5822b95; lane-per-thread shape only; dropped).
#   correctness: gpu_catalogue_test (built with the patch) on cuda_splitk, the four suites at 300 cases per
#   property, then compute-sanitizer memcheck and initcheck on the general draw and engine shapes -> $OUT/check.log
#   speed: head_bench (5822b95) against prefetch_bench, each shape three times, interleaved, either flush
#   -> $OUT/ab.log
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u
export RC_PARAMS="max_success=300"
for suite in GpuCatalogue GpuCatalogueDeep GpuEngineShapes GpuEngineShapesDeep; do
  (timeout 200 ./gpu_catalogue_test --gtest_filter="$suite/*__cuda_splitk" > /tmp/cat_$suite.log 2>&1; echo "exit $?" >> /tmp/cat_$suite.log) &
done
wait
for t in memcheck initcheck; do for draw in general engine; do
  (timeout 200 compute-sanitizer --tool $t --error-exitcode 9 ./pacheck check --variant cuda_splitk \
     --property UlpBoundedAgreement --property MaskedLanesZeroWeight --cases 40 \
     $([ $draw = engine ] && echo --engine-shapes) > /tmp/san_$t-$draw.log 2>&1; echo "exit $?" >> /tmp/san_$t-$draw.log) &
done; done
wait
for f in /tmp/cat_*.log /tmp/san_*.log; do echo "== $f"; grep -E "^\[  PASSED|^\[  FAILED|^exit|Failure|ERROR SUMMARY|bf16|fp16|fp32" $f | head -8; done > $OUT/check.log
cat $OUT/check.log
for flush in "" --clean-flush; do for shape in 4,1,32768 8,1,32768 4,1,8192 4,1,1024 4,8,32768 4,64,8192; do for rep in 1 2 3; do
  for b in head_bench prefetch_bench; do
    echo "== $b $shape rep $rep ${flush:-dirty}"; timeout 60 ./$b $flush --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|WARN"
  done
done; done; done > $OUT/ab.log 2>&1
date -u
