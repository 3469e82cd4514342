#!/bin/bash
# Session 19, call 5 on the H200 (run from .gpu-bin): compute-sanitizer synccheck on f0046ea's kernels (pacheck as
# committed). Call 2 found it stopping at "overflow of tracked cuda::barrier structures" and then a launch failure;
# the tool suggests --num-cuda-barriers. Each variant and layout on engine shapes, default and with larger tables.
cd "$(dirname "$0")"
xz -d -f pacheck.xz; chmod +x pacheck
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; compute-sanitizer --version | tail -1; compute-sanitizer --help | grep -A3 -i "num-cuda-barriers"; } > $OUT/gpu.txt
mkdir -p /tmp/san
for nb in default 16 64 256; do for v in cuda_fused cuda_splitk; do for layout in automatic wide deep; do
  opt=$([ $nb = default ] || echo "--num-cuda-barriers $nb")
  (PACHECK_TENSOR_CORE_LAYOUT=$layout timeout 240 compute-sanitizer --tool synccheck $opt --error-exitcode 9 --print-limit 10 ./pacheck check --variant $v \
     --property UlpBoundedAgreement --property MaskedLanesZeroWeight --cases 20 --engine-shapes --failures /tmp/san/f-$nb-$v-$layout \
     > /tmp/san/$nb-$v-$layout.log 2>&1; echo "exit $?" >> /tmp/san/$nb-$v-$layout.log) &
done; done; done; wait
for f in /tmp/san/*.log; do echo "=== $f: $(grep -h 'ERROR SUMMARY' $f | tr '\n' ' ') $(grep -c 'overflow of tracked' $f) overflow warnings, $(tail -n1 $f)"; done > $OUT/synccheck.log
for f in /tmp/san/*.log; do echo "=== $f"; head -c 3000 $f; done > $OUT/synccheck_reports.log
date -u >> $OUT/gpu.txt
