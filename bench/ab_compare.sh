#!/bin/bash
# Times paged_attention_bench builds against each other, interleaved on one GPU, and tables each one's change.
#
#   bench/ab_compare.sh OUT BASE_BENCH OTHER_BENCH [MORE_BENCH...]
#
# Each BENCH is a paged_attention_bench binary (or BENCH.xz, decompressed in place), named in the table by its file
# name, so the names must differ: build each version in a build folder of its own and copy its
# bench/paged_attention_bench to a name of its own. Two copies of one build measure the method's noise (an A/A run).
# Each pass of PASSES (a flush each: dirty, the flush's lines left dirty in the L2, or clean, --clean-flush) runs
# every shape of SHAPES on each binary in turn, one benchmark run each (the median of its repeats; --stages adds
# split-K's attention kernel alone), so that the GPU's drift touches every binary alike; after each pass, torch's
# SDPA on TORCH_SHAPES (empty: none), so that the comparison with cuDNN comes from the same minutes.
# Writes, in OUT: ab.log (every run's rows), ab_table.txt (every run of each binary and its mean change against the
# base: ab_table.py), gpu.txt (the GPU, driver and serial, the start and end times); prints the last two and torch's
# rows. Settings (environment): SHAPES (GQA,BATCH,CONTEXT list), PASSES, TORCH_SHAPES, BENCH_ARGS (more options for
# every benchmark run).
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 3 ]; then
  echo "usage: $0 OUT BASE_BENCH OTHER_BENCH [MORE_BENCH...]" >&2
  exit 2
fi
out=$1
shift
SHAPES=${SHAPES:-"4,1,1024 4,1,8192 8,1,8192 4,1,32768 8,1,32768 4,8,8192 4,64,8192"}
PASSES=${PASSES:-"dirty clean dirty clean"}
TORCH_SHAPES=${TORCH_SHAPES-"4,1,32768 8,1,32768"}
BENCH_ARGS=${BENCH_ARGS:-}
labels=()
for bench in "$@"; do
  if [ -f "$bench.xz" ] && ! xz -d -f "$bench.xz"; then
    echo "ab_compare.sh: cannot decompress $bench.xz" >&2
    exit 2
  fi
  [ -f "$bench" ] || { echo "ab_compare.sh: no benchmark build $bench (nor $bench.xz)" >&2; exit 2; }
  chmod +x "$bench"
  label=$(basename "$bench")
  for seen in "${labels[@]}"; do
    [ "$seen" = "$label" ] && { echo "ab_compare.sh: two builds named $label: give each its own name" >&2; exit 2; }
  done
  labels+=("$label")
done
for flush_kind in $PASSES; do
  case $flush_kind in
    dirty | clean) ;;
    *) echo "ab_compare.sh: a pass is dirty or clean, not $flush_kind" >&2; exit 2 ;;
  esac
done
mkdir -p "$out" || exit 2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

{ nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader; date -u; } > "$out/gpu.txt" 2>&1
declare -A passes_of
for flush_kind in $PASSES; do
  flush=()
  [ "$flush_kind" = clean ] && flush=(--clean-flush)
  rep=$(( ${passes_of[$flush_kind]:-0} + 1 ))
  passes_of[$flush_kind]=$rep
  for shape in $SHAPES; do
    for bench in "$@"; do
      echo "== $(basename "$bench") $shape rep $rep $flush_kind"
      # shellcheck disable=SC2086  # BENCH_ARGS is a list of options
      timeout 60 "$bench" "${flush[@]}" --stages --only "$shape" $BENCH_ARGS --json "$scratch/bench.json" 2>&1 |
        grep -E "cuda_|splitk_no|WARN|rror"
    done
  done
  if [ -n "$TORCH_SHAPES" ]; then
    echo "== torch rep $rep $flush_kind"
    only=()
    for shape in $TORCH_SHAPES; do only+=(--only "$shape"); done
    timeout 120 python3 "$here/torch_sdpa_bench.py" "${flush[@]}" --json "$scratch/torch.json" "${only[@]}" 2>&1 |
      tail -n 8
  fi
done > "$out/ab.log" 2>&1
date -u >> "$out/gpu.txt"
python3 "$here/ab_table.py" "$out/ab.log" "$(IFS=,; echo "${labels[*]}")" > "$out/ab_table.txt"
status=$?
cat "$out/gpu.txt" "$out/ab_table.txt"
awk '/^== torch/ {print; shown = 1; next} /^== / {shown = 0} shown && /^(cudnn|flash)/' "$out/ab.log"
exit $status
