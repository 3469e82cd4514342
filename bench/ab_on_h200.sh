#!/bin/bash
# Interleaved A/B timing of paged_attention_bench builds on the H200: how sessions 20-25 of
# reports/gpu/issue8-perf.md measured each kernel change. On the dev machine, build each version's benchmark
# (cmake -S . -B build/cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90; ninja -C build/cuda
# paged_attention_bench), copy it into .gpu-bin/ (listed in .git/info/exclude) under a name of its own, xz it if
# you like, put this script and ab_table.py beside it, and in one device call (carry [".gpu-bin"]):
#   BINS="head_bench change_bench" bash .gpu-bin/ab_on_h200.sh
# Each pass of PASSES (a flush each: dirty, the flush's lines left dirty in the L2, or clean) runs every shape of
# SHAPES on each binary in turn, one benchmark run each (the median of its repeats; --stages adds split-K's
# attention kernel alone), so that the GPU's drift touches every binary alike; after each pass, torch's SDPA on
# TORCH_SHAPES (empty: none), so that the comparison with cuDNN comes from the same minutes.
# Writes, in $OUT (set by the device tool): ab.log; ab_table.txt, every run of each binary and its mean change
# against the first (ab_table.py); gpu.txt, the GPU, driver and serial, and the start and end times.
# BINS lists two builds of one binary to measure the noise of the method itself (an A/A run: session 25).
# Options: BINS (required), SHAPES, PASSES, TORCH_SHAPES, BENCH_ARGS (more arguments to every benchmark run).
set -u
cd "$(dirname "$0")"
: "${BINS:?BINS names the benchmark builds to compare, the first being the base}"
SHAPES=${SHAPES:-"4,1,1024 4,1,8192 8,1,8192 4,1,32768 8,1,32768 4,8,8192 4,64,8192"}
PASSES=${PASSES:-"dirty clean dirty clean"}
TORCH_SHAPES=${TORCH_SHAPES-"4,1,32768 8,1,32768"}
torch_bench=""
for root in .. ../..; do
  [ -f $root/cuda/bench/torch_sdpa_bench.py ] && torch_bench=$root/cuda/bench/torch_sdpa_bench.py && break
done
for b in $BINS; do
  [ -f $b.xz ] && xz -d -f $b.xz
  [ -f $b ] || { echo "ab_on_h200.sh: no benchmark build named $b beside the script" >&2; exit 2; }
  chmod +x $b
done
if [ -n "$TORCH_SHAPES" ] && [ -z "$torch_bench" ]; then
  echo "ab_on_h200.sh: cuda/bench/torch_sdpa_bench.py not found above the script (TORCH_SHAPES= skips torch)" >&2
  exit 2
fi
for flush_kind in $PASSES; do
  case $flush_kind in dirty | clean) ;; *) echo "ab_on_h200.sh: a pass is dirty or clean, not $flush_kind" >&2; exit 2;; esac
done
{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > $OUT/gpu.txt
declare -A passes_of
for flush_kind in $PASSES; do
  flush=""; [ $flush_kind = clean ] && flush=--clean-flush
  rep=$(( ${passes_of[$flush_kind]:-0} + 1 )); passes_of[$flush_kind]=$rep
  for shape in $SHAPES; do for b in $BINS; do
    echo "== $b $shape rep $rep $flush_kind"
    timeout 60 ./$b $flush --stages --only $shape ${BENCH_ARGS:-} --json /tmp/ab_bench.json 2>&1 |
      grep -E "cuda_|splitk_no|WARN|rror"
  done; done
  if [ -n "$TORCH_SHAPES" ]; then
    echo "== torch rep $rep $flush_kind"
    timeout 120 python3 $torch_bench $flush --json /tmp/ab_torch.json $(for s in $TORCH_SHAPES; do echo --only $s; done) \
      2>&1 | tail -n 8
  fi
done > $OUT/ab.log 2>&1
date -u >> $OUT/gpu.txt
python3 ./ab_table.py $OUT/ab.log "$(echo $BINS | tr ' ' ,)" > $OUT/ab_table.txt
cat $OUT/gpu.txt $OUT/ab_table.txt
awk '/^== torch/ {print; shown = 1; next} /^== / {shown = 0} shown && /^(cudnn|flash)/' $OUT/ab.log
