#!/bin/bash
# Session 18, call 2 on the H200 (run from .gpu-bin). One build (runtime_copy_modes.patch) with
# PACHECK_COPY_EXPERIMENT choosing at run time how a warp's tile travels (0: K and V by 3D tensor copies, two 64-lane
# boxes each, as e96363a; 1: one 4D box each for K and V; 2: K by tensor copies, V by 16-byte asynchronous copies;
# 3: as 2 with K in one 4D box; 4: K by asynchronous copies, V by tensor copies).
#   checks (engine shapes: every mode; general draw: 2 and 3), 150 cases per property -> $OUT/checks.log;
#   memcheck and racecheck on mode 3, 20 cases -> checks.log
#   A/B: every mode on each shape, twice, interleaved, both flushes -> $OUT/ab.log; torch -> $OUT/torch.log
cd "$(dirname "$0")"
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu.txt
export RC_PARAMS="max_success=150"
run_check() {  # mode variant [--engine-shapes]
  local log=/tmp/check_$1_$2$3.log
  ( PACHECK_COPY_EXPERIMENT=$1 timeout 200 ./pacheck check --variant $2 --cases 150 $3 > $log 2>&1; echo "exit $?" >> $log ) &
}
for m in 1 2 3 4; do for v in cuda_fused cuda_splitk; do run_check $m $v --engine-shapes; done; done
for m in 2 3; do for v in cuda_fused cuda_splitk; do run_check $m $v; done; done
wait
for t in memcheck racecheck; do
  PACHECK_COPY_EXPERIMENT=3 timeout 200 compute-sanitizer --tool $t --error-exitcode 9 ./pacheck check --variant cuda_splitk \
    --property UlpBoundedAgreement --property MaskedLanesZeroWeight --cases 20 --engine-shapes > /tmp/san_$t.log 2>&1
  echo "exit $?" >> /tmp/san_$t.log
done
for f in /tmp/check_*.log /tmp/san_*.log; do echo "== $f"; grep -E "bf16|fail|FAIL|ERROR SUMMARY|exit" $f | tail -n 6; done > $OUT/checks.log 2>&1
SHAPES=${SHAPES:-4,1,32768 8,1,32768 4,1,8192 4,8,8192 4,64,8192 8,64,8192 4,256,8192 8,256,8192}
for flush in --clean-flush ""; do for shape in $SHAPES; do for rep in 1 2; do
  for m in 0 1 2 3 4; do
    echo "== mode$m $shape rep $rep ${flush:-dirty}"
    PACHECK_COPY_EXPERIMENT=$m timeout 60 ./paged_attention_bench $flush --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|WARN|rror"
  done
done; done; done > $OUT/ab.log 2>&1
for flush in --clean-flush ""; do
  echo "== torch ${flush:-dirty}"
  timeout 200 python3 ../cuda/bench/torch_sdpa_bench.py $(for s in $SHAPES; do echo -n " --only $s"; done) $flush \
    --json /tmp/torch.json 2>&1 | grep -vE "^\s*$" | tail -20
done > $OUT/torch.log 2>&1
date -u >> $OUT/gpu.txt
