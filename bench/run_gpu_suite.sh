#!/bin/bash
# Runs the GPU suite on a GPU machine (catalogue, compute-sanitizer, SASS check, benchmarks) and writes results.json.
#
#   bench/run_gpu_suite.sh [BUILD [OUT]]        (or BUILD=... OUT=... bench/run_gpu_suite.sh)
#
# BUILD: a build folder holding cli/pacheck, tests/cuda/gpu_catalogue_test and bench/paged_attention_bench (each may
# be NAME.xz, decompressed in place). OUT receives results.json (collect_results.py), RESULTS.md (results_page.py)
# and logs.tar.gz (every log results.json was read from, and the failures' case files). To record the run:
#   python3 bench/results_page.py --add OUT/results.json     (then commit bench/results.json and bench/RESULTS.md)
#
# In order:
#  1. the SASS check (sass_descriptor_check.py) on each binary, on the CPU, beside step 2;
#  2. the GPU catalogue: gpu_catalogue_test, one process per suite it lists and kernel, side by side, CASES cases
#     per property, each within LIMIT seconds;
#  3. compute-sanitizer memcheck, racecheck, initcheck and synccheck on `pacheck check` (UlpBoundedAgreement and
#     MaskedLanesZeroWeight, SAN_CASES cases) for each kernel on each catalogue suite's draw (its shapes, --layout and
#     --merge), side by side, after the catalogue (beside it they slowed it past its limit);
#  3b. the GPU kill matrix: `pacheck mutants --gpu` on each of MUTANT_SEEDS, side by side, the first seed with
#     compute-sanitizer's four tools as killers (MUTANT_SAN_CASES cases each), each within MUTANTS_LIMIT seconds;
#  4. alone on the GPU: paged_attention_bench (bf16, --dtype fp16, an fp8 cache in e4m3 and in e5m2), torch's SDPA
#     (torch_sdpa_bench.py) and FlashInfer (flashinfer_bench.py: bf16, then fp8 caches) on the same shapes, with the
#     default flush and again with --clean-flush;
#  4b. the logit options' cost: paged_attention_bench at batch 64 and 8k context, GQA 4 and 8, with each option and
#     without (a window of 4096 keys against a 4096-key context: the bytes it must read), side by side.
#
# Settings (environment): CASES (1000), SAN_CASES (100), LIMIT (420), BENCH_LIMIT (300 seconds for each benchmark
# run), BENCH_ARGS (more options for paged_attention_bench, e.g. --layout wide), SKIP_CHECKS=1 (leaves out steps 2
# and 3), SKIP_MUTANTS=1 (step 3b), MUTANT_SEEDS ("1 2 3"), MUTANT_SAN_CASES (5), MUTANTS_LIMIT (1800), SKIP_BENCH=1
# (steps 4 and 4b), CLEAN_FLUSH=0 (the --clean-flush pass), OPTIONS_COST=0 (step 4b), FLASHINFER_BUNDLE (a folder
# with FlashInfer's install.sh, installed into /tmp/fi; without it flashinfer must already import), COMMIT (the
# commit measured; by default the checkout's). A missing tool (compute-sanitizer, cuobjdump, torch, FlashInfer) is
# recorded as skipped with the reason.
set -u
# compute-sanitizer and cuobjdump are often outside PATH.
[ -d /usr/local/cuda/bin ] && PATH=$PATH:/usr/local/cuda/bin
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-${BUILD:-}}
out=${2:-${OUT:-}}
if [ -z "$build" ] || [ -z "$out" ]; then
  echo "usage: $0 BUILD OUT   (or set BUILD and OUT)" >&2
  exit 2
fi
CASES=${CASES:-1000}
SAN_CASES=${SAN_CASES:-100}
# At 500 cases per property the slowest of 16 catalogue processes side by side took 200 s on an H200.
LIMIT=${LIMIT:-420}
BENCH_LIMIT=${BENCH_LIMIT:-300}
BENCH_ARGS=${BENCH_ARGS:-}
SKIP_CHECKS=${SKIP_CHECKS:-0}
SKIP_BENCH=${SKIP_BENCH:-0}
SKIP_MUTANTS=${SKIP_MUTANTS:-0}
MUTANT_SEEDS=${MUTANT_SEEDS:-1 2 3}
MUTANT_SAN_CASES=${MUTANT_SAN_CASES:-5}
MUTANTS_LIMIT=${MUTANTS_LIMIT:-1800}
CLEAN_FLUSH=${CLEAN_FLUSH:-1}
OPTIONS_COST=${OPTIONS_COST:-1}
command_line="CASES=$CASES SAN_CASES=$SAN_CASES LIMIT=$LIMIT BENCH_LIMIT=$BENCH_LIMIT SKIP_CHECKS=$SKIP_CHECKS"
command_line+=" SKIP_BENCH=$SKIP_BENCH SKIP_MUTANTS=$SKIP_MUTANTS MUTANT_SEEDS=\"$MUTANT_SEEDS\""
command_line+=" MUTANT_SAN_CASES=$MUTANT_SAN_CASES MUTANTS_LIMIT=$MUTANTS_LIMIT"
command_line+=" CLEAN_FLUSH=$CLEAN_FLUSH OPTIONS_COST=$OPTIONS_COST${BENCH_ARGS:+ BENCH_ARGS=\"$BENCH_ARGS\"} $0 $*"

build=$(cd "$build" 2>/dev/null && pwd) || { echo "run_gpu_suite.sh: no build folder ${1:-$BUILD}" >&2; exit 2; }
pacheck=$build/cli/pacheck
catalogue=$build/tests/cuda/gpu_catalogue_test
bench=$build/bench/paged_attention_bench
for binary in "$pacheck" "$catalogue" "$bench"; do
  if [ -f "$binary.xz" ] && ! xz -d -f "$binary.xz"; then
    echo "run_gpu_suite.sh: cannot decompress $binary.xz" >&2
    exit 2
  fi
  [ -f "$binary" ] || { echo "run_gpu_suite.sh: $binary (or $binary.xz) is missing: build it first" >&2; exit 2; }
  chmod +x "$binary"
done
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
logs=$out/logs
rm -rf "$logs"
mkdir -p "$logs"/{catalogue,sanitizer,sass,bench,mutants}

# run_logged LOG SECONDS COMMAND...: LOG gets the command line, its output and its exit status ("exit N").
run_logged() {
  local log=$1 seconds=$2
  shift 2
  { printf 'command:'; printf ' %q' "$@"; echo; timeout "$seconds" "$@" 2>&1; echo "exit $?"; } > "$log"
}
# fact KEY SHELL-COMMAND: KEY=the command's last output line, or KEY=absent: why.
fact() {
  local value
  if value=$(bash -c "set -o pipefail; $2" 2>&1) && [ -n "$value" ]; then
    echo "$1=$(tail -n1 <<< "$value")"
  else
    value=$(tail -n1 <<< "${value:-no output}")
    echo "$1=absent: ${value#bash: line 1: }"
  fi
}

if [ -n "${FLASHINFER_BUNDLE:-}" ]; then
  if bash "$FLASHINFER_BUNDLE/install.sh" /tmp/fi > "$logs/flashinfer_install.log" 2>&1; then
    export PYTHONPATH=/tmp/fi/site${PYTHONPATH:+:$PYTHONPATH}
    MAX_JOBS=$(nproc)
    FLASHINFER_CUDA_ARCH_LIST=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null)
    export FLASHINFER_WORKSPACE_BASE=/tmp/fi_work MAX_JOBS FLASHINFER_CUDA_ARCH_LIST
  fi
fi
if [ -n "${COMMIT:-}" ]; then
  commit=$COMMIT
elif commit=$(git -C "$here" rev-parse HEAD 2>/dev/null); then
  git -C "$here" diff --quiet HEAD -- 2>/dev/null || commit+=" with uncommitted changes"
else
  commit=unknown
fi
{
  fact gpu "nvidia-smi --query-gpu=name --format=csv,noheader -i 0"
  fact driver "nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0"
  fact cuda_driver "nvidia-smi | grep -o 'CUDA Version: [0-9.]*' | cut -d' ' -f3"
  fact compute_sanitizer "compute-sanitizer --version | grep -i version"
  fact cuobjdump "cuobjdump --version | grep -i release"
  fact python "python3 --version"
  fact torch "python3 -c 'import torch; print(torch.__version__)'"
  fact flashinfer "python3 -c 'import flashinfer; print(flashinfer.__version__)'"
  echo "commit=$commit"
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "command=$command_line"
  echo "cases=$CASES"
  echo "sanitizer_cases=$SAN_CASES"
} > "$logs/environment.txt"

cd "$logs" || exit 2  # failures' case files (pacheck-failures/) land among the logs

# 1. The SASS check, on the CPU beside the catalogue; done before anything is timed.
(for binary in "$pacheck" "$catalogue" "$bench"; do
   run_logged "$logs/sass/$(basename "$binary").log" 600 python3 "$here/sass_descriptor_check.py" "$binary"
 done) &

# pins SUITE: the --layout and --merge that a catalogue suite pins (gpu_catalogue_test.cpp), from its name's ending;
# fails for an ending it does not know.
pins() {
  local ending
  case $1 in
    GpuCatalogue*) ending=${1#GpuCatalogue} ;;
    GpuEngineShapes*) ending=${1#GpuEngineShapes} ;;
    *) return 1 ;;
  esac
  case $ending in
    "") echo "--layout automatic --merge automatic" ;;
    Deep) echo "--layout deep --merge warps" ;;
    Wide) echo "--layout wide --merge automatic" ;;
    WideEvictFirst) echo "--layout wide-evict-first --merge automatic" ;;
    *) return 1 ;;
  esac
}

if [ "$SKIP_CHECKS" = 1 ]; then
  echo "skipped: SKIP_CHECKS=1" > "$logs/catalogue/skipped.log"
  echo "skipped: SKIP_CHECKS=1" > "$logs/sanitizer/skipped.log"
else
  # 2. The catalogue: every parameterised suite gpu_catalogue_test lists, on each kernel; the kernels' other tests
  # ride with GpuCatalogue.
  run_logged "$logs/catalogue_list.log" 120 "$catalogue" --gtest_list_tests
  suite_kernels=$(awk '/^[^ ]/ { suite = index($0, "/") ? substr($0, 1, index($0, "/") - 1) : ""; next }
                       suite != "" && /__/ { kernel = $1; sub(/.*__/, "", kernel); print suite, kernel }' \
                    "$logs/catalogue_list.log" | sort -u)
  if [ -z "$suite_kernels" ]; then
    echo "gpu_catalogue_test --gtest_list_tests listed no suite of SUITE/...__KERNEL tests" \
      > "$logs/catalogue/error.log"
  fi
  while read -r suite kernel; do
    [ -n "$suite" ] || continue
    filter="$suite/*__$kernel"
    case $suite-$kernel in
      GpuCatalogue-cuda_fused) filter+=":GpuKernelErrors*:GpuFused*" ;;
      GpuCatalogue-cuda_splitk) filter+=":GpuSplitK*" ;;
    esac
    name=${suite}__$kernel
    run_logged "$logs/catalogue/$name.log" "$LIMIT" env RC_PARAMS="max_success=$CASES" \
      PACHECK_GPU_SUMMARY="$logs/catalogue/$name.summary.json" "$catalogue" --gtest_filter="$filter" &
  done <<< "$suite_kernels"
  wait  # the SASS check too

  # 3. The sanitizers on each suite's draw (see pins) and kernel; on engine shapes the tensor copies run. synccheck
  # needs --num-cuda-barriers 256: with its default, 16 or 64 it overflows its tracked barriers on these kernels (at
  # most 12 mbarriers a block) and the launch fails.
  if ! command -v compute-sanitizer > /dev/null; then
    echo "skipped: compute-sanitizer not found on PATH" > "$logs/sanitizer/skipped.log"
  else
    while read -r suite kernel; do
      [ -n "$suite" ] || continue
      shapes=()
      [[ $suite == GpuEngineShapes* ]] && shapes=(--engine-shapes)
      for tool in memcheck racecheck initcheck synccheck; do
        name=${kernel}__${tool}__$suite
        if ! suite_pins=$(pins "$suite"); then
          echo "skipped: no --layout and --merge known for suite $suite (run_gpu_suite.sh's pins)" \
            > "$logs/sanitizer/$name.log"
          continue
        fi
        options=()
        [ "$tool" = synccheck ] && options=(--num-cuda-barriers 256)
        # shellcheck disable=SC2086  # suite_pins is a list of options
        run_logged "$logs/sanitizer/$name.log" "$LIMIT" compute-sanitizer --tool "$tool" "${options[@]}" \
          --error-exitcode 9 "$pacheck" check --variant "$kernel" --property UlpBoundedAgreement \
          --property MaskedLanesZeroWeight --cases "$SAN_CASES" "${shapes[@]}" $suite_pins \
          --failures "$logs/sanitizer/failures-$name" &
      done
    done <<< "$suite_kernels"
    wait
  fi
fi
wait

# 3b. The GPU kill matrix, one process per seed; the first also runs the sanitizers on every mutant.
if [ "$SKIP_MUTANTS" = 1 ]; then
  echo "skipped: SKIP_MUTANTS=1" > "$logs/mutants/skipped.log"
else
  first=1
  for seed in $MUTANT_SEEDS; do
    sanitizers=()
    [ "$first" = 1 ] && command -v compute-sanitizer > /dev/null &&
      sanitizers=(--sanitizers --sanitizer-cases "$MUTANT_SAN_CASES")
    first=0
    run_logged "$logs/mutants/$seed.log" "$MUTANTS_LIMIT" "$pacheck" mutants --gpu --seed "$seed" "${sanitizers[@]}" \
      --json "$logs/mutants/$seed.json" --failures "$logs/mutants/failures-$seed" &
  done
  wait
fi

# 4. The benchmarks, alone on the GPU: ours, then torch's SDPA and FlashInfer on the same shapes, per flush.
for flush in dirty clean; do
  [ "$SKIP_BENCH" = 1 ] && break
  flush_option=()
  if [ "$flush" = clean ]; then
    [ "$CLEAN_FLUSH" = 0 ] && continue
    flush_option=(--clean-flush)
  fi
  dir=$logs/bench/$flush
  mkdir -p "$dir"
  for source in ours ours_fp16 ours_fp8_e4m3 ours_fp8_e5m2; do
    case $source in
      ours) args=() ;;
      ours_fp16) args=(--dtype fp16) ;;
      *) args=(--kv-cache "${source#ours_}") ;;
    esac
    # shellcheck disable=SC2086  # BENCH_ARGS is a list of options
    run_logged "$dir/$source.log" "$BENCH_LIMIT" "$bench" "${flush_option[@]}" $BENCH_ARGS "${args[@]}" \
      --json "$dir/$source.json"
  done
  run_logged "$dir/torch.log" "$BENCH_LIMIT" python3 "$here/torch_sdpa_bench.py" "${flush_option[@]}" \
    --json "$dir/torch.json"
  run_logged "$dir/flashinfer.log" "$BENCH_LIMIT" python3 "$here/flashinfer_bench.py" "${flush_option[@]}" \
    --json "$dir/flashinfer.json"
  for cache in fp8_e4m3 fp8_e5m2; do
    run_logged "$dir/flashinfer_$cache.log" "$BENCH_LIMIT" python3 "$here/flashinfer_bench.py" "${flush_option[@]}" \
      --kv-cache "$cache" --json "$dir/flashinfer_$cache.json"
  done
done

# 4b. The logit options' cost: each run of an option beside its reference, both GQA ratios.
if [ "$SKIP_BENCH" != 1 ] && [ "$OPTIONS_COST" != 0 ]; then
  mkdir -p "$logs/options"
  for gqa in 4 8; do
    for option in none soft_cap alibi sinks window window_reference; do
      args=(--only "$gqa,64,8192")
      case $option in
        soft_cap) args+=(--soft-cap 30) ;;
        alibi) args+=(--alibi) ;;
        sinks) args+=(--sinks) ;;
        window) args+=(--window 4096) ;;
        window_reference) args=(--only "$gqa,64,4096") ;;
      esac
      # shellcheck disable=SC2086
      run_logged "$logs/options/${option}__$gqa.log" "$BENCH_LIMIT" "$bench" "${args[@]}" $BENCH_ARGS \
        --json "$logs/options/${option}__$gqa.json"
    done
  done
fi

cd "$out" || exit 2
python3 "$here/collect_results.py" --logs "$logs" --output "$out/results.json" &&
  python3 "$here/results_page.py" --results "$out/results.json" --page "$out/RESULTS.md" &&
  cat "$out/RESULTS.md"
status=$?
tar czf "$out/logs.tar.gz" logs && rm -rf "$logs"
exit $status
