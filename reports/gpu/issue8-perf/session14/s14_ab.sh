#!/bin/bash
# Session 14, call 1: the transposed tensor-core products (keys and lanes as the mma's M rows) on the catalogue
# (4 suites x 2 kernels, CASES per property) and against the previous kernel (baseline_bench) shape by shape.
cd "$(dirname "$0")"
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
  for b in baseline_bench paged_attention_bench; do
    echo "== $b $shape rep $rep"; timeout 60 ./$b --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|WARN"
  done
done; done 2>&1 | tee $OUT/ab.log
K=_ZN7pacheck4cuda7kernels28tensor_core_attention_kernelILi128ELi4ELi2ELi2048ELb1EEEvNS0_11DeviceBatchENS0_10DevicePlanENS0_10FastDivmodENS0_11KvTensorMapsE
for b in baseline_bench paged_attention_bench; do cuobjdump -sass -fun $K ./$b > $OUT/sass_$b.txt 2>&1; echo "$b sass lines: $(wc -l < $OUT/sass_$b.txt)"; done
for b in baseline_bench paged_attention_bench; do
  echo "== ncu durations $b 4,1,32768"
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --csv ./$b --only 4,1,32768 --repeats 3 --json /tmp/n.json 2>/dev/null \
    | python3 -c '
import csv,sys
rows=[r for r in csv.reader(l for l in sys.stdin if l.startswith("\""))]
h=rows[0]; k=h.index("Kernel Name"); v=h.index("Metric Value"); u=h.index("Metric Unit")
for r in rows[1:]: print(r[v], r[u], r[k][:90])' | tail -n 24
done
