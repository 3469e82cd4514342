#!/bin/bash
# Session 19, call 7 on the H200 (run from .gpu-bin): the queries' fragments by 4-byte loads (one per bf16 pair,
# half the loads of a block's start; the table's loads are issued after them). Q = paged_attention_bench,
# fix_diag_bench (Q + the start stamps).
#  1. traces (stamps 0-5) of base_diag and fix_diag (Q) at batch 1, 32k (clean, dirty, warm) and 8k (clean)
#  2. A/B base_bench against paged_attention_bench (Q), interleaved, twice per flush -> $OUT/ab.log
#  3. Q: racecheck, synccheck (--num-cuda-barriers 256), memcheck, initcheck on engine shapes, the twelve
#     catalogue processes at 300 cases
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x base_bench paged_attention_bench base_diag_bench fix_diag_bench  gpu_catalogue_test pacheck
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu.txt
mkdir -p /tmp/tr
for rep in 1 2; do for b in base_diag_bench fix_diag_bench; do
  for mode in "clean --clean-flush --only 4,1,32768" "dirty --only 4,1,32768" "warm --clean-flush --warm-metadata --only 4,1,32768" "clean8k --clean-flush --only 4,1,8192"; do
    set -- $mode; name=$1; shift
    BLOCK_TRACE=/tmp/tr/${b%_bench}_${name}_r$rep timeout 60 ./$b "$@" --stages --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN" | sed "s/^/$b $name: /"
  done
done; done > $OUT/traces.log 2>&1
tar czf $OUT/traces.tar.gz -C /tmp/tr .
date -u >> $OUT/gpu.txt
SHAPES="4,1,32768 8,1,32768 4,1,8192 4,1,1024 4,8,8192 4,64,8192 8,256,8192"
for flush in --clean-flush ""; do for shape in $SHAPES; do for rep in 1 2; do
  for b in base_bench paged_attention_bench; do
    echo "== $b $shape rep $rep ${flush:-dirty}"; timeout 60 ./$b $flush --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_no|WARN"
  done
done; done; done > $OUT/ab.log 2>&1
date -u >> $OUT/gpu.txt
export RC_PARAMS="max_success=300"
for suite in GpuCatalogue GpuCatalogueDeep GpuCatalogueWide GpuEngineShapes GpuEngineShapesDeep GpuEngineShapesWide; do
for v in cuda_fused cuda_splitk; do
  (timeout 200 ./gpu_catalogue_test --gtest_filter="$suite/*__$v" > /tmp/c_$suite-$v.log 2>&1; echo "exit $?" >> /tmp/c_$suite-$v.log) &
done; done
mkdir -p /tmp/san
for t in racecheck synccheck memcheck initcheck; do for v in cuda_fused cuda_splitk; do for layout in automatic wide deep; do
  (PACHECK_TENSOR_CORE_LAYOUT=$layout timeout 200 compute-sanitizer --tool $t $([ $t = synccheck ] && echo --num-cuda-barriers 256) --error-exitcode 9 --print-limit 20 ./pacheck check --variant $v --property UlpBoundedAgreement \
     --property MaskedLanesZeroWeight --cases 10 --engine-shapes --failures /tmp/san/f-$v-$t-$layout > /tmp/san/$v-$t-$layout.log 2>&1; echo "exit $?" >> /tmp/san/$v-$t-$layout.log) &
done; done; done; wait
{ for f in /tmp/c_*.log; do echo "== $f: $(grep -c '\[       OK \]' $f) ok, $(grep -c 'FAILED  \]' $f) failed, $(tail -n1 $f)"; grep -B2 -A30 "FAILED  \]\|Falsifiable" $f | head -60; done; } > $OUT/checks.log
for f in /tmp/san/*.log; do echo "=== $f: $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $f | tr '\n' ' ') $(tail -n1 $f)"; done >> $OUT/checks.log
for f in /tmp/san/*.log; do echo "=== $f"; head -c 4000 $f; done > $OUT/sanitizer_reports.log
date -u >> $OUT/gpu.txt
