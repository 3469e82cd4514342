#!/bin/bash
# Session 17, call 1 on the H200 (run from .gpu-bin, beside the benchmarks): what limits split-K at batch 1.
# base_bench is HEAD's benchmark (0547ca7); diag_bench is built with diag.patch (not for the tree), whose
# environment switches are: DIAG_PREFETCH (prefetch.tensormap of both maps at the kernel's start), DIAG_HND (the
# pools read as [block][KV head][slot][dim], FlashInfer's HND layout, instead of [block][slot][KV head][dim]:
# each (block, head)'s 16 rows then lie in 4 contiguous KB; the data are random either way) and BLOCK_TRACE=PREFIX
# (each attention block's start, first tile landed, end and SM, three launches after a flush -> PREFIX_*.csv).
# "deep" is base_bench with PACHECK_TENSOR_CORE_LAYOUT=deep. -> $OUT/diag.log, $OUT/traces.tar.gz
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u
run() {  # NAME ENV... -- ARGS
  local name=$1; shift; local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  echo "== $name $*"; env "${envs[@]}" timeout 60 "$@" --json /tmp/x.json 2>&1 | grep -E "cuda_|splitk_|WARN"
}
for flush in "" --clean-flush; do for rep in 1 2; do
  for shape in 4,1,32768 8,1,32768; do
    run base -- ./base_bench --stages $flush --only $shape
    run diag -- ./diag_bench --stages $flush --only $shape
    run prefetch DIAG_PREFETCH=1 -- ./diag_bench --stages $flush --only $shape
    run hnd DIAG_HND=1 -- ./diag_bench --stages $flush --only $shape
    run deep PACHECK_TENSOR_CORE_LAYOUT=deep -- ./base_bench --stages $flush --only $shape
  done
  for shape in 4,64,8192 8,256,8192; do
    run base -- ./base_bench $flush --only $shape
    run diag -- ./diag_bench $flush --only $shape
    run prefetch DIAG_PREFETCH=1 -- ./diag_bench $flush --only $shape
    run hnd DIAG_HND=1 -- ./diag_bench $flush --only $shape
  done
done; done 2>&1 | tee $OUT/diag.log
mkdir -p /tmp/traces
for flush in "" --clean-flush; do
  name=dirty; [ -n "$flush" ] && name=clean
  BLOCK_TRACE=/tmp/traces/nhd_$name ./diag_bench $flush --only 4,1,32768 --json /tmp/x.json > /dev/null
  DIAG_HND=1 BLOCK_TRACE=/tmp/traces/hnd_$name ./diag_bench $flush --only 4,1,32768 --json /tmp/x.json > /dev/null
  BLOCK_TRACE=/tmp/traces/nhd_$name ./diag_bench $flush --only 4,64,8192 --json /tmp/x.json > /dev/null
done
(cd /tmp/traces && tar czf $OUT/traces.tar.gz *.csv)
date -u
