#!/bin/bash
# Session 19, call 1 on the H200 (run from .gpu-bin): where a block's start goes, and the first copies issued
# before the block-wide barrier.
#  1. traces (BLOCK_TRACE): base_diag_bench (f0046ea + s19 diag stamps) and fix_diag_bench (the start change +
#     the same stamps), batch 1, 32k, GQA 4: clean and dirty flush, and clean with --warm-metadata -> $OUT/traces.tar.gz
#  2. A/B: base_bench (f0046ea) against paged_attention_bench (the start change), interleaved, twice per flush
#     -> $OUT/ab.log
#  3. correctness of the start change: the twelve catalogue processes at 300 cases per property, and
#     compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on engine shapes of both kernels -> $OUT/checks.log
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x base_bench paged_attention_bench base_diag_bench fix_diag_bench gpu_catalogue_test pacheck
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu.txt
mkdir -p /tmp/tr
for b in base_diag_bench fix_diag_bench; do
  for mode in "clean --clean-flush" "dirty" "warm --clean-flush --warm-metadata"; do
    set -- $mode; name=$1; shift
    BLOCK_TRACE=/tmp/tr/${b%_bench}_$name timeout 60 ./$b "$@" --only 4,1,32768 --json /tmp/x.json 2>&1 | grep -E "cuda_|WARN" | sed "s/^/$b $name: /"
  done
done > $OUT/traces.log 2>&1
tar czf $OUT/traces.tar.gz -C /tmp/tr .
SHAPES="4,1,32768 8,1,32768 4,1,8192 4,64,8192 8,256,8192"
for flush in --clean-flush ""; do for shape in $SHAPES; do for rep in 1 2; do
  for b in base_bench paged_attention_bench; do
    echo "== $b $shape rep $rep ${flush:-dirty}"; timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done
done; done; done > $OUT/ab.log 2>&1; date -u >> $OUT/gpu.txt
date -u >> $OUT/gpu.txt
export RC_PARAMS="max_success=300"
for suite in GpuCatalogue GpuCatalogueDeep GpuCatalogueWide GpuEngineShapes GpuEngineShapesDeep GpuEngineShapesWide; do
for v in cuda_fused cuda_splitk; do
  (timeout 200 ./gpu_catalogue_test --gtest_filter="$suite/*__$v" > /tmp/c_$suite-$v.log 2>&1; echo "exit $?" >> /tmp/c_$suite-$v.log) &
done; done; wait
{ for f in /tmp/c_*.log; do echo "== $f: $(grep -c '\[       OK \]' $f) ok, $(grep -c 'FAILED  \]' $f) failed, $(tail -n1 $f)"; grep -B2 -A30 "FAILED  \]\|Falsifiable" $f | head -60; done; } > $OUT/checks.log
mkdir -p /tmp/san
for v in cuda_fused cuda_splitk; do for t in memcheck racecheck synccheck initcheck; do for draw in general engine engine-wide; do
  (export PACHECK_TENSOR_CORE_LAYOUT=$(case $draw in *-wide) echo wide;; *) echo automatic;; esac)
   timeout 150 compute-sanitizer --tool $t --error-exitcode 9 ./pacheck check --variant $v --property UlpBoundedAgreement \
     --property MaskedLanesZeroWeight --cases 20 $(case $draw in engine*) echo --engine-shapes;; esac) \
     --failures /tmp/san/f-$v-$t-$draw > /tmp/san/$v-$t-$draw.log 2>&1; echo "exit $?" >> /tmp/san/$v-$t-$draw.log) &
done; done; done; wait
for f in /tmp/san/*.log; do echo "=== $f: $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $f | tr '\n' ' ') $(tail -n1 $f)"; done >> $OUT/checks.log
date -u >> $OUT/gpu.txt
