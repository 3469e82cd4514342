#!/bin/bash
# Session 20, call 2 on the H200 (run from .gpu-bin): where batch-1 split-K's copies stop. Binaries: base_bench
# (29c0c4f), copy_bench (diagnostic: tile loop waits and refills only), compute_bench (diagnostic: arithmetic on the
# first tiles' stages, no refills), copynotma_bench (copy_bench with every copy a 16-byte asynchronous copy),
# fullnotma_bench (the kernel with every copy a 16-byte asynchronous copy). Interleaved, twice per flush:
#  batch 1, 32k, GQA 4 under: the automatic layout (wide-kv-tma), deep and wide pinned, split 768 (three blocks
#  on a multiprocessor); batch 64, 8k, GQA 4 automatic -> $OUT/ab2.log; torch at batch 1 -> $OUT/torch2.log
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f "$f"; done; chmod +x *_bench
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu2.txt
BINS="base_bench copy_bench compute_bench copynotma_bench fullnotma_bench"
for flush in --clean-flush ""; do for rep in 1 2; do
  for cfg in automatic deep wide split768; do for b in $BINS; do
    layout=$cfg; extra=""; [ $cfg = split768 ] && { layout=automatic; extra="--split 768"; }
    echo "== $b 4,1,32768 $cfg rep $rep ${flush:-dirty}"
    PACHECK_TENSOR_CORE_LAYOUT=$layout timeout 60 ./$b $flush --stages --only 4,1,32768 $extra --json /tmp/x.json 2>&1 | grep -E "cuda_splitk|splitk_no|WARN"
  done; done
  for b in $BINS; do
    echo "== $b 4,64,8192 automatic rep $rep ${flush:-dirty}"
    timeout 60 ./$b $flush --only 4,64,8192 --json /tmp/x.json 2>&1 | grep -E "cuda_fused|WARN"
  done
done; done > $OUT/ab2.log 2>&1
date -u >> $OUT/gpu2.txt
for flush in --clean-flush ""; do
  echo "== torch ${flush:-dirty}"; timeout 100 python3 ../cuda/bench/torch_sdpa_bench.py $flush --only 4,1,32768 --only 4,64,8192 --json /tmp/t.json 2>&1 | tail -n 6
done > $OUT/torch2.log 2>&1
date -u >> $OUT/gpu2.txt
