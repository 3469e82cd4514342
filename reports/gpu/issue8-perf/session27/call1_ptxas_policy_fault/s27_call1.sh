#!/bin/bash
# Session 27, call 1 on the H200 (run from .gpu-bin). Builds (all from 651eedc):
#   catalogue_testonly: the merge-alignment test alone (merge_output_alignment.patch without its kernel half);
#   M_*: the whole merge-alignment patch;
#   E1_bench: M + session 26's call-5 evict-first patch (createpolicy, the form that faulted);
#   E2_*: M + evict-first on whole tiles in one-wave grids, the policy a constant operand, plain copies otherwise;
#   E3_*: as E2 with createpolicy inside the copy's own asm block.
# 1. createpolicy's values (policy_probe); 2. the SASS descriptor check on E1, E2, E3, M; 3. the alignment tests;
# 4. the catalogue at 300 cases: E2 all six suites per kernel, E3 the three general-draw ones; 5. an A/B M/E2/E3.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f $f; done; chmod +x E* M_* catalogue_testonly policy_probe
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu1.txt
{ echo "== policy_probe"; ./policy_probe; } > $OUT/call1.txt 2>&1
(for b in E1_bench E2_paged_attention_bench E3_paged_attention_bench M_paged_attention_bench; do
  echo "== sass $b"; cuobjdump -sass $b > /tmp/$b.sass 2>&1; python3 sass_desc_check.py < /tmp/$b.sass | grep -i "tensor_core\|never written: \[" | head -40
done > /tmp/sass_check.txt 2>&1; cd /tmp && tar czf $OUT/sass.tar.gz *.sass) &
sass_job=$!
for b in catalogue_testonly M_gpu_catalogue_test; do
  echo "== alignment tests $b"
  timeout 60 ./$b --gtest_filter='GpuSplitK.AnOutputAligned*:GpuFused.AnOutputAligned*' 2>&1 | tail -n 25
  echo "exit ${PIPESTATUS[0]}"
done >> $OUT/call1.txt 2>&1
export RC_PARAMS="max_success=300"
mkdir -p /tmp/logs
for build in E2 E3; do
for suite in GpuCatalogue GpuCatalogueDeep GpuCatalogueWideKvTma GpuEngineShapes GpuEngineShapesDeep GpuEngineShapesWideKvTma; do
  [ $build = E3 ] && case $suite in GpuEngine*) continue;; esac
  for v in cuda_fused cuda_splitk; do
    (timeout 300 ./${build}_gpu_catalogue_test --gtest_filter="$suite/*__$v" > /tmp/logs/$build-$suite-$v.log 2>&1
     echo "exit $?" >> /tmp/logs/$build-$suite-$v.log) &
  done
done; done
wait $(jobs -p | grep -v "^$sass_job$")
{ echo "== catalogue"; for f in /tmp/logs/*.log; do echo "$(basename $f): $(grep -c '^\[       OK' $f) ok, $(grep -c '^\[  FAILED  \]' $f) failed lines, $(tail -n1 $f)"; done
  grep -h "cudaError\|llegal" /tmp/logs/*.log | sort | uniq -c | head; } >> $OUT/call1.txt 2>&1
(cd /tmp && tar czf $OUT/catalogue_logs.tar.gz logs)
date -u >> $OUT/gpu1.txt
OUT0=$OUT; mkdir -p /tmp/ab; OUT=/tmp/ab BINS="M_paged_attention_bench E2_paged_attention_bench E3_paged_attention_bench" \
  PASSES="dirty clean dirty clean" SHAPES="4,1,8192 4,1,32768 8,1,32768 8,8,8192 4,64,8192 8,64,8192 4,256,8192" \
  bash ./ab_on_h200.sh > /tmp/ab/out.txt 2>&1
OUT=$OUT0
(cd /tmp/ab && tar czf $OUT/ab1.tar.gz ab.log ab_table.txt gpu.txt out.txt)
wait $sass_job; cat /tmp/sass_check.txt >> $OUT/call1.txt
cat $OUT/gpu1.txt $OUT/call1.txt /tmp/ab/ab_table.txt
awk '/^== torch/ {print; shown = 1; next} /^== / {shown = 0} shown && /^cudnn/' /tmp/ab/ab.log
