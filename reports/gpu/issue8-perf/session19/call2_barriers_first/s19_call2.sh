#!/bin/bash
# Session 19, call 2 on the H200 (run from .gpu-bin): the start change reworked (each warp's barriers initialised
# before any load; the first copies issued before the table is staged, their slot rows read from global memory;
# the loop's code as before).
#  1. traces as call 1 (stamp 5 added: the block's barrier before the loop) -> $OUT/traces.tar.gz
#  2. A/B against base_bench, interleaved, twice per flush -> $OUT/ab.log
#  3. racecheck and synccheck of both builds on engine shapes, full reports kept -> $OUT/sanitizer_*.log; the
#     twelve catalogue processes at 300 cases -> $OUT/checks.log
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x base_bench paged_attention_bench base_diag_bench fix_diag_bench gpu_catalogue_test pacheck base_pacheck
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu.txt
mkdir -p /tmp/tr
for b in base_diag_bench fix_diag_bench; do
  for mode in "clean --clean-flush" "dirty" "warm --clean-flush --warm-metadata"; do
    set -- $mode; name=$1; shift
    BLOCK_TRACE=/tmp/tr/${b%_bench}_$name timeout 60 ./$b "$@" --only 4,1,32768 --json /tmp/x.json 2>&1 | grep -E "cuda_|WARN" | sed "s/^/$b $name: /"
  done
done > $OUT/traces.log 2>&1
tar czf $OUT/traces.tar.gz -C /tmp/tr .
date -u >> $OUT/gpu.txt
SHAPES="4,1,32768 8,1,32768 4,1,8192 4,1,1024 4,8,8192 4,64,8192 8,64,8192 4,256,8192"
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
for p in pacheck base_pacheck; do for t in racecheck synccheck; do for v in cuda_fused cuda_splitk; do
  (timeout 200 compute-sanitizer --tool $t --error-exitcode 9 --print-limit 20 ./$p check --variant $v --property UlpBoundedAgreement \
     --cases 10 --engine-shapes --failures /tmp/san/f-$p-$v-$t > /tmp/san/$p-$v-$t.log 2>&1; echo "exit $?" >> /tmp/san/$p-$v-$t.log) &
done; done; done; wait
{ for f in /tmp/c_*.log; do echo "== $f: $(grep -c '\[       OK \]' $f) ok, $(grep -c 'FAILED  \]' $f) failed, $(tail -n1 $f)"; grep -B2 -A30 "FAILED  \]\|Falsifiable" $f | head -60; done; } > $OUT/checks.log
for f in /tmp/san/*.log; do echo "=== $f: $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $f | tr '\n' ' ') $(tail -n1 $f)"; done >> $OUT/checks.log
for f in /tmp/san/*.log; do echo "=== $f"; head -c 6000 $f; done > $OUT/sanitizer_reports.log
date -u >> $OUT/gpu.txt
