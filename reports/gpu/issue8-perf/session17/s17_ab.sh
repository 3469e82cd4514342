#!/bin/bash
# Session 17, call 2 on the H200 (run from .gpu-bin, beside the benchmarks).
#   A/B: base_bench (0547ca7's kernels) against issue1_bench and issue2_bench (issue_order_experiment.patch with
#   PACHECK_ISSUE_EXPERIMENT 1: lane 0 announces the next tile's bytes and looks up its slot row before waiting for
#   the current tile, so that only the copy instructions follow the wait; 2: the next tile's copies issued at the
#   end of the previous tile, before waiting for the current one, so two tiles are in flight during the wait), each
#   shape twice, interleaved, with the usual flush and with --clean-flush -> $OUT/ab.log
#   warm: warm_bench (the kernels of 0547ca7, the benchmark with --warm-metadata) with and without the option
#   -> $OUT/warm.log
#   torch: cuDNN and flash on the same shapes, both flushes -> $OUT/torch.log, torch_{dirty,clean}.json
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u
SHAPES=${SHAPES:-4,1,32768 8,1,32768 4,1,8192 4,1,1024 4,64,8192 8,64,8192 4,256,8192 8,256,8192}
for flush in "" --clean-flush; do for shape in $SHAPES; do for rep in 1 2; do
  for b in base_bench issue1_bench issue2_bench; do
    echo "== $b $shape rep $rep ${flush:-dirty}"; timeout 60 ./$b $flush --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|WARN"
  done
done; done; done 2>&1 | tee $OUT/ab.log
for flush in "" --clean-flush; do for shape in 4,1,32768 8,1,32768 4,1,8192 4,1,1024 4,64,8192; do for rep in 1 2; do
  for warm in "" --warm-metadata; do
    echo "== warm_bench$warm $shape rep $rep ${flush:-dirty}"
    timeout 60 ./warm_bench $flush $warm --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_|WARN"
  done
done; done; done 2>&1 | tee $OUT/warm.log
for flush in "" --clean-flush; do
  name=dirty; [ -n "$flush" ] && name=clean
  echo "== torch $name"
  timeout 200 python3 ../cuda/bench/torch_sdpa_bench.py $(for s in $SHAPES; do echo -n " --only $s"; done) $flush \
    --json $OUT/torch_$name.json 2>&1 | grep -vE "^\s*$" | tail -20
done 2>&1 | tee $OUT/torch.log
date -u
