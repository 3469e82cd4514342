#!/bin/bash
# Session 14's A/B calls on the H200: the catalogue (4 suites x 2 kernels, CASES per property) on this build, then
# each shape timed by $BASELINE (the previous build's benchmark) and by this build's (or each of $CANDIDATES),
# twice, interleaved.
#   call 1 (transposed products):  CASES=200 LIMIT=200 bash s14_ab.sh                      (BASELINE: 9979b37)
#   call 3 (merge in last split):  BASELINE=head_bench BENCH_ARGS=--stages MEMCHECK=1 ... (head_bench: 637567e)
#   call 4 (heads side by side):   BASELINE=head_bench SHAPES="..." ...
#   call 8 (merge factors one per lane; two QK chains): BASELINE=head_bench CANDIDATES="merge_lanes_bench
#     qk_chains_bench" BENCH_ARGS=--stages MEMCHECK=1 (the catalogue and memcheck on the build with both)
# MEMCHECK=1 adds compute-sanitizer memcheck on both kernels (general draw and engine shapes, 40 cases). Call 1
# also dumped the wide kernel's SASS and Nsight Compute's kernel durations at batch 1, 32k (see the log's header).
cd "$(dirname "$0")"
BASELINE=${BASELINE:-baseline_bench}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
export RC_PARAMS="max_success=${CASES:-200}"
for suite in GpuCatalogue GpuCatalogueDeep GpuEngineShapes GpuEngineShapesDeep; do for v in cuda_fused cuda_splitk; do
  filter="$suite/*__$v"; [ $suite$v = GpuCataloguecuda_fused ] && filter="$filter:GpuKernelErrors*"
  (timeout ${LIMIT:-200} ./gpu_catalogue_test --gtest_filter="$filter" > $OUT/cat_$suite-$v.log 2>&1; echo "exit $?" >> $OUT/cat_$suite-$v.log) &
done; done
wait
for f in $OUT/cat_*.log; do echo "== $f"; grep -E "^\[  PASSED|^\[  FAILED|^exit|Failure|SKIPPED \]" $f | sort | uniq -c | head -8; done
(cd $OUT && tar czf catalogue_logs.tar.gz cat_*.log && rm -f cat_*.log)
for shape in ${SHAPES:-4,1,32768 8,1,32768 4,1,8192 4,1,1024 4,64,8192 8,64,8192 4,256,8192 8,256,8192}; do for rep in 1 2; do
  for b in $BASELINE ${CANDIDATES:-paged_attention_bench}; do
    echo "== $b $shape rep $rep"; timeout 60 ./$b ${BENCH_ARGS:-} --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|WARN"
  done
done; done 2>&1 | tee $OUT/ab.log
[ "${MEMCHECK:-0}" = 1 ] && for v in cuda_splitk cuda_fused; do for draw in general engine; do
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 ./pacheck check --variant $v --property UlpBoundedAgreement \
    --property Determinism --cases 40 $([ $draw != general ] && echo --engine-shapes) > /tmp/mc-$v-$draw.log 2>&1
  echo "memcheck $v $draw exit $?"; grep -E "ERROR SUMMARY" /tmp/mc-$v-$draw.log | head -4
done; done
