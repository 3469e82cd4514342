#!/bin/bash
# How the runs of reports/gpu/ were made. Built on the dev machine (cmake -S . -B build/cuda -G Ninja
# -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90), pacheck, gpu_catalogue_test and paged_attention_bench
# were copied into .gpu-bin/ (listed in .git/info/exclude) beside this script and sass_descriptor_check.py, and the
# folder carried to the H200:
#   bash .gpu-bin/run_on_h200.sh                      # issue 5's acceptance and issue 8's benchmark
#   BENCH_ARGS=--layouts bash .gpu-bin/run_on_h200.sh  # plus the alternative kernel layouts
# CASES, SAN_CASES, LIMIT (seconds per correctness run), BENCH_LIMIT, SKIP_CHECKS=1, SKIP_TORCH=1 and
# CLEAN_FLUSH=0 trim a call. To time one build against another, ab_on_h200.sh (beside this script).
# Results land in $OUT (set by the device tool).
#
# One device call: the GPU catalogue at $CASES cases per property on both kernels (general draw and engine shapes)
# and compute-sanitizer on both (in parallel: correctness only), then, alone on the GPU, the benchmark and torch's
# SDPA on the same shapes, both again with --clean-flush, and (with PROFILE=1) Nsight Compute on the fused kernel at
# batch 64, 8k.
set -u
cd "$(dirname "$0")"
# The binaries may travel xz-compressed (the device tool carries at most 64 MiB).
for f in paged_attention_bench gpu_catalogue_test pacheck; do
  [ -f $f.xz ] && xz -d -f $f.xz
  [ -f $f ] && chmod +x $f
done
CASES=${CASES:-1000}
SAN_CASES=${SAN_CASES:-100}
# Seconds for each correctness run. Sixteen catalogue processes share the GPU (twelve until session 27): at 500
# cases per property the slowest took 200 s (session 27, call 3), so 1,000 cases may need more than this default;
# with twelve, at 1,000 the split-K engine-shape ones ran past 280 s (session 18, call 4).
LIMIT=${LIMIT:-420}
{ date -u; nvidia-smi --query-gpu=name,serial,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv;
  uname -r; compute-sanitizer --version | tail -1; python3 -c 'import torch;print("torch",torch.__version__)'; } > $OUT/perf.log 2>&1
# Copies that read a cache descriptor no instruction writes (a ptxas 13.0 fault: sass_descriptor_check.py), in each
# binary's kernels; on the CPU, beside the catalogue, and done before anything is timed.
for f in paged_attention_bench gpu_catalogue_test pacheck; do
  echo "== $f"; cuobjdump -sass $f | python3 ./sass_descriptor_check.py; echo "exit $?"
done > $OUT/sass_check.log 2>&1 &
sass_check=$!
export RC_PARAMS="max_success=$CASES"
if [ "${SKIP_CHECKS:-0}" != 1 ]; then
# One process per (suite, kernel): the eight suites of gpu_catalogue_test.cpp, sixteen processes side by side.
for suite in GpuCatalogue GpuCatalogueDeep GpuCatalogueWide GpuCatalogueWideKvTma \
             GpuEngineShapes GpuEngineShapesDeep GpuEngineShapesWide GpuEngineShapesWideKvTma; do
for v in cuda_fused cuda_splitk; do
  filter="$suite/*__$v"; [ $suite$v = GpuCataloguecuda_fused ] && filter="$filter:GpuKernelErrors*:GpuFused*"
  [ $suite$v = GpuCataloguecuda_splitk ] && filter="$filter:GpuSplitK*"
  (PACHECK_GPU_SUMMARY=/tmp/summary_$suite-$v.json timeout $LIMIT ./gpu_catalogue_test --gtest_filter="$filter" \
     > $OUT/catalogue_$suite-$v.log 2>&1; echo "exit $?" >> $OUT/catalogue_$suite-$v.log) &
done; done
wait  # the sanitizers after: alongside, they slowed the catalogue past its limit
mkdir -p /tmp/san
# Each sanitizer on the general draw and on engine shapes (where the tensor-core kernel's tensor copies run), each
# also with the deep tensor-core layout and the warp-per-row split-K merge pinned (-deep: small problems otherwise
# run the wide-evict-first layout and the lane-per-thread merge), each with the wide layout pinned (-wide: its
# plain copies, production's choice from four waves up), and on engine shapes with the wide-kv-tma layout pinned
# (the tensor copies at head dims 65-128, which production no longer chooses).
# synccheck (barriers, mbarriers included) runs with --num-cuda-barriers 256: on these kernels (at most 12
# mbarriers a block) its default, 16 and 64 report an overflow of tracked cuda::barrier structures and the launch
# fails; 256 works. The cause is not known (reports/gpu/issue8-perf.md, session 19).
for v in cuda_fused cuda_splitk; do for t in memcheck racecheck initcheck synccheck; do
for draw in general general-deep general-wide engine engine-deep engine-wide engine-kv-tma; do
  (export PACHECK_TENSOR_CORE_LAYOUT=$(case $draw in
     *-deep) echo deep;; *-wide) echo wide;; *-kv-tma) echo wide-kv-tma;; *) echo automatic;; esac)
   export PACHECK_SPLITK_MERGE=$(case $draw in *-deep) echo warps;; *) echo automatic;; esac)
   timeout $LIMIT compute-sanitizer --tool $t $([ $t = synccheck ] && echo --num-cuda-barriers 256) --error-exitcode 9 \
     ./pacheck check --variant $v --property UlpBoundedAgreement \
     --property MaskedLanesZeroWeight --cases $SAN_CASES $(case $draw in engine*) echo --engine-shapes;; esac) \
     --failures /tmp/san/f-$v-$t-$draw > /tmp/san/$v-$t-$draw.log 2>&1; echo "exit $?" >> /tmp/san/$v-$t-$draw.log) &
done; done; done
wait
fi
for f in /tmp/summary_*.json; do echo "== $f"; cat $f; done > $OUT/catalogue_summaries.log 2>/dev/null
for f in /tmp/san/*.log; do echo "=== $f"; tail -c 4000 $f; done > $OUT/sanitizer.log
# The benchmark, then torch's SDPA on the same shapes compared with it: run_benchmarks BENCH_JSON TORCH_JSON FLUSH
# [BENCH_OPTION...], FLUSH ("" or --clean-flush) given to both, the rest to the benchmark only.
run_benchmarks() {
  local bench_json=$1 torch_json=$2 flush=$3; shift 3
  timeout ${BENCH_LIMIT:-200} ./paged_attention_bench $flush "$@" --json $bench_json; echo "bench exit $?"
  [ "${SKIP_TORCH:-0}" = 1 ] || PYTHONUNBUFFERED=1 timeout 150 python3 ../cuda/bench/torch_sdpa_bench.py $flush \
    --json $torch_json --compare $bench_json; echo "torch exit $?"
}
wait $sass_check
run_benchmarks $OUT/bench.json $OUT/torch.json "" ${BENCH_ARGS:-} >> $OUT/perf.log 2>&1
# The same again with the flush leaving clean lines in the L2 (--clean-flush: no write-back of the flush's own
# dirty lines inside the timed run; session 16 of reports/gpu/issue8-perf.md). CLEAN_FLUSH=0 leaves it out.
if [ "${CLEAN_FLUSH:-1}" = 1 ]; then
  { echo "== clean flush"; run_benchmarks /tmp/bench_clean.json /tmp/torch_clean.json --clean-flush; } \
    >> $OUT/perf.log 2>&1
  (cd /tmp && tar czf $OUT/clean_flush.tar.gz bench_clean.json torch_clean.json 2>/dev/null)
fi
if [ -n "${SASS:-}" ]; then cuobjdump -sass -fun "$SASS" ./paged_attention_bench > $OUT/sass.txt 2>&1; fi
if [ "${PROFILE:-0}" = 1 ]; then
  for shape in ${PROFILE_SHAPES:-8,64,8192 4,64,8192}; do
    timeout 120 ncu --clock-control none -k regex:attention_kernel --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
      --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
      ./paged_attention_bench --only $shape --repeats 1 --json /tmp/ncu.json 2>&1 | grep -v "^==PROF==" | tail -n 150
  done > $OUT/ncu.log 2>&1
fi
tar czf $OUT/failures.tar.gz pacheck-failures /tmp/san/f-* 2>/dev/null
echo "== summary"; grep -h "^== \|sass_descriptor_check\|UNWRITTEN\|^exit" $OUT/sass_check.log
grep -h "exit\|PASSED\|FAILED\|Failure\|SKIPPED \]" $OUT/catalogue_*.log | sort | uniq -c | head -40
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|^exit" $OUT/sanitizer.log
grep -A8 "^worst element" $OUT/catalogue_*.log
grep -B2 -A30 "^| gqa" $OUT/perf.log | tail -n 80
# The device tool returns at most 8 files: the correctness logs travel as one archive.
(cd $OUT && tar czf correctness_logs.tar.gz catalogue_*.log sanitizer.log sass_check.log &&
  rm -f catalogue_*.log sanitizer.log sass_check.log)
