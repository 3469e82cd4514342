#!/bin/bash
# Session 16's A/B calls on the H200 (run from .gpu-bin, beside the benchmarks). Each shape is timed by base_bench
# (bde5e47: the kernels of f5d3104, the benchmark with --clean-flush) and by each of $CANDIDATES, twice,
# interleaved, once with the usual flush (256 MB written: the L2 left full of dirty lines) and once with
# --clean-flush (then 256 MB read: clean lines) -> $OUT/ab.log. TORCH=1 then times torch's cuDNN and flash on the
# same shapes with either flush -> $OUT/torch.log, torch_{dirty,clean}.json. CASES=N first runs the GPU catalogue
# (4 suites x 2 kernels, N cases per property) on this build's gpu_catalogue_test.
#   call 1: CANDIDATES=evict_bench TORCH=1 (the K/V copies with the L2 evict-first hint: l2_evict_first.patch)
#   call 2: CANDIDATES=bound_bench CASES=300 (work items bound to their sequence's metadata)
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u
if [ -n "${CASES:-}" ]; then
  export RC_PARAMS="max_success=$CASES"
  for suite in GpuCatalogue GpuCatalogueDeep GpuEngineShapes GpuEngineShapesDeep; do for v in cuda_fused cuda_splitk; do
    filter="$suite/*__$v"; [ $suite$v = GpuCataloguecuda_fused ] && filter="$filter:GpuKernelErrors*"
    (timeout ${LIMIT:-200} ./gpu_catalogue_test --gtest_filter="$filter" > $OUT/cat_$suite-$v.log 2>&1; echo "exit $?" >> $OUT/cat_$suite-$v.log) &
  done; done
  wait
  for f in $OUT/cat_*.log; do echo "== $f"; grep -E "^\[  PASSED|^\[  FAILED|^exit|Failure|SKIPPED \]" $f | sort | uniq -c | head -8; done
  (cd $OUT && tar czf catalogue_logs.tar.gz cat_*.log && rm -f cat_*.log)
fi
SHAPES=${SHAPES:-4,1,32768 8,1,32768 4,1,8192 4,1,1024 4,64,8192 8,64,8192 4,256,8192 8,256,8192}
for flush in "" --clean-flush; do for shape in $SHAPES; do for rep in 1 2; do
  for b in base_bench $CANDIDATES; do
    echo "== $b $shape rep $rep ${flush:-dirty}"; timeout 60 ./$b ${BENCH_ARGS:-} $flush --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_|WARN"
  done
done; done; done 2>&1 | tee $OUT/ab.log
[ "${TORCH:-0}" = 1 ] && for flush in "" --clean-flush; do
  name=dirty; [ -n "$flush" ] && name=clean
  echo "== torch $name"
  timeout 200 python3 ../cuda/bench/torch_sdpa_bench.py $(for s in $SHAPES; do echo -n " --only $s"; done) $flush \
    --json $OUT/torch_$name.json 2>&1 | grep -vE "^\s*$" | tail -20
done 2>&1 | tee $OUT/torch.log
