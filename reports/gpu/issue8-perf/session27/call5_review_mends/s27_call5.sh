#!/bin/bash
# Session 27, call 5 on the H200 (run from .gpu-bin): after the review's mends (one helper for the output-alignment
# test of write_item_result and the merge; the two alignment tests sharing one body), the GpuFused/GpuSplitK/
# GpuKernelErrors tests, the eight catalogue suites at 100 cases per property, and the SASS check.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f $f; done; chmod +x gpu_catalogue_test paged_attention_bench pacheck
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu5.txt
for f in paged_attention_bench gpu_catalogue_test pacheck; do
  echo "== $f"; cuobjdump -sass $f | python3 ./sass_descriptor_check.py; echo "exit $?"
done > $OUT/sass_check5.txt 2>&1 &
timeout 120 ./gpu_catalogue_test --gtest_filter='GpuFused*:GpuSplitK*:GpuKernelErrors*' > $OUT/unit5.log 2>&1; echo "exit $?" >> $OUT/unit5.log
export RC_PARAMS="max_success=100"
for suite in GpuCatalogue GpuCatalogueDeep GpuCatalogueWide GpuCatalogueWideKvTma \
             GpuEngineShapes GpuEngineShapesDeep GpuEngineShapesWide GpuEngineShapesWideKvTma; do
  for v in cuda_fused cuda_splitk; do
    (timeout 200 ./gpu_catalogue_test --gtest_filter="$suite/*__$v" > /tmp/cat_$suite-$v.log 2>&1
     echo "exit $?" >> /tmp/cat_$suite-$v.log) &
  done
done
wait
for f in /tmp/cat_*.log; do echo "$(basename $f): $(grep -h 'PASSED\|FAILED  \]' $f | head -2 | tr '\n' ' ') $(tail -n1 $f)"; done > $OUT/catalogue5.txt
date -u >> $OUT/gpu5.txt
cat $OUT/gpu5.txt $OUT/sass_check5.txt; grep -h "OK \]\|FAILED\|exit" $OUT/unit5.log; cat $OUT/catalogue5.txt
