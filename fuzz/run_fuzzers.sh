#!/usr/bin/env bash
# Runs every libFuzzer target of build/fuzz for SECONDS each, all at once (one core each), starting from its
# committed seed corpus in fuzz/corpus/<target>/. New corpus entries go to build/fuzz/corpus/<target>/, never into
# the committed folder. Prints each target's executions per second; exits non-zero if any target found a crash,
# a sanitizer report, a leak, a timeout or an out-of-memory (the reproducer is saved as
# build/fuzz/artifacts/<target>/crash-*; re-run it with `build/fuzz/fuzz/<target> FILE`).
#   fuzz/run_fuzzers.sh [SECONDS]     (default 60; build first with: cmake --preset fuzz && cmake --build --preset fuzz)
set -uo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
targets=(structured_problem case_file)
status=0
pids=()
for t in "${targets[@]}"; do
  binary="build/fuzz/fuzz/${t}_fuzzer"
  if [ ! -x "$binary" ]; then
    echo "run_fuzzers: $binary is missing; build it with: cmake --preset fuzz && cmake --build --preset fuzz" >&2
    exit 2
  fi
  mkdir -p "build/fuzz/corpus/$t" "build/fuzz/artifacts/$t"
  # -malloc_limit_mb: any single allocation over 512 MiB is a finding (the case-file reader must never make one).
  # -timeout: one input running over 10 s is a hang. -rss_limit_mb bounds the whole process.
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1
           -artifact_prefix="build/fuzz/artifacts/$t/")
  [ -f "fuzz/$t.dict" ] && options+=(-dict="fuzz/$t.dict")
  PACHECK_FUZZ_FAILURE_DIR="build/fuzz/artifacts/$t" "$binary" "${options[@]}" "build/fuzz/corpus/$t" "fuzz/corpus/$t" \
    >"build/fuzz/$t.log" 2>&1 &
  pids+=($!)
done
for i in "${!targets[@]}"; do
  t="${targets[$i]}"
  if wait "${pids[$i]}"; then result="clean"; else result="FAILED"; status=1; fi
  execs=$(grep -m1 '^stat::number_of_executed_units:' "build/fuzz/$t.log" | awk '{print $2}')
  rate=$(grep -m1 '^stat::average_exec_per_sec:' "build/fuzz/$t.log" | awk '{print $2}')
  cov=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "build/fuzz/$t.log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+')
  echo "fuzz ${t}_fuzzer: $result, ${execs:-?} executions in ${seconds} s, ${rate:-?} exec/s, ${cov:-coverage ?}"
  if [ "$result" = "FAILED" ]; then
    echo "---- build/fuzz/$t.log (tail) ----"
    tail -60 "build/fuzz/$t.log"
  fi
done
exit $status
