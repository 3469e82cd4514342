#!/usr/bin/env bash
# Runs every libFuzzer target of build/fuzz for SECONDS, all at once, each in fork mode over its share of the cores;
# prints each one's executions and rate, and exits non-zero on any finding (fuzz/README.md says where things go).
#   fuzz/run_fuzzers.sh [SECONDS]       (default 60; build first with: cmake --preset fuzz && cmake --build --preset fuzz)
#   fuzz/run_fuzzers.sh --seeds DIR     only write each target's seeds into DIR/<target>/ (.clusterfuzzlite/build.sh)
set -uo pipefail
cd "$(dirname "$0")/.."

# structured_problem's seeds: zeros, ones, and twelve pseudo-random strings of 16 to 96 bytes from a fixed seed.
write_structured_seeds() {
  local dir=$1
  mkdir -p "$dir"
  : >"$dir/empty"
  head -c 64 /dev/zero >"$dir/zeros_64"
  head -c 64 /dev/zero | tr '\0' '\377' >"$dir/ones_64"
  LC_ALL=C awk -v dir="$dir" 'BEGIN {
    srand(1)
    for (i = 0; i < 12; i++) {
      file = sprintf("%s/random_%02d", dir, i)
      n = 16 * (1 + int(rand() * 6))
      bytes = ""
      for (j = 0; j < n; j++) bytes = bytes sprintf("%c", int(rand() * 256))
      printf "%s", bytes > file
      close(file)
    }
  }'
}
# case_file's seeds: malformed files the reader must refuse (three are block_size_one.json with one field made wrong,
# one its first 700 bytes) and one minimal valid case.
write_case_file_seeds() {
  local dir=$1 base=fuzz/regressions/block_size_one.json
  mkdir -p "$dir"
  head -c 700 "$base" >"$dir/truncated.json"
  printf '{"format":"pacheck-case","version":1,"note":%s%s}' "$(printf '[%.0s' {1..64})" "$(printf ']%.0s' {1..64})" \
    >"$dir/deep_nesting.json"
  printf '%s' '{"format": "pacheck-case", "version": 1, "dtype": "fp32", "num_query_heads": 1, "num_kv_heads": 1, ' \
    '"head_dim": 1, "block_size": 1, "num_blocks": 1, "scale_bits": null, "sequences": [{"context_len": 1, ' \
    '"num_queries": 1, "block_table": [0]}], "knobs": {"tile_size": 1, "split_size": 1, "num_splits": 0}, ' \
    '"k_pool": "3f800000", "v_pool": "40000000", "queries": "3f800000"}' >"$dir/minimal.json"
  python3 - "$base" "$dir" <<'EOF'
import json, sys
case = json.load(open(sys.argv[1]))
changes = {"wrong_version": {"version": 2}, "huge_declared_sizes": {"head_dim": 2**31 - 1, "num_blocks": 2**31 - 1},
           "negative_counts": {"sequences": [{"context_len": -1, "num_queries": -5, "block_table": [-1]}]}}
for name, change in changes.items():
    open(f"{sys.argv[2]}/{name}.json", "w").write(json.dumps({**case, **change}))
EOF
}
if [ "${1:-}" = --seeds ]; then
  write_structured_seeds "${2:?--seeds DIR}/structured_problem"
  write_case_file_seeds "$2/case_file"
  exit 0
fi

seconds="${1:-60}"
targets=(structured_problem case_file)
cores=$(nproc 2>/dev/null || echo 1)
forks=$(( cores / ${#targets[@]} ))
[ "$forks" -ge 1 ] || forks=1
rm -rf build/fuzz/seeds
write_structured_seeds build/fuzz/seeds/structured_problem
write_case_file_seeds build/fuzz/seeds/case_file
declare -A seeds=([structured_problem]="build/fuzz/seeds/structured_problem"
                  [case_file]="build/fuzz/seeds/case_file fuzz/regressions")
status=0
pids=()
for t in "${targets[@]}"; do
  binary="build/fuzz/fuzz/${t}_fuzzer"
  if [ ! -x "$binary" ]; then
    echo "run_fuzzers: $binary is missing; build it with: cmake --preset fuzz && cmake --build --preset fuzz" >&2
    exit 2
  fi
  mkdir -p "build/fuzz/corpus/$t" "build/fuzz/artifacts/$t"
  # A single allocation over 512 MiB is a finding (the case-file reader must never make one); an input over 10 s a
  # hang. Fork mode ignores a worker's timeouts and OOMs by default: -ignore_*=0 make every finding stop the run.
  options=(-fork="$forks" -ignore_crashes=0 -ignore_timeouts=0 -ignore_ooms=0 -max_total_time="$seconds" -timeout=10
           -rss_limit_mb=2048 -malloc_limit_mb=512 -artifact_prefix="build/fuzz/artifacts/$t/")
  [ -f "fuzz/$t.dict" ] && options+=(-dict="fuzz/$t.dict")
  # shellcheck disable=SC2086  # the seed folders are words
  PACHECK_FUZZ_FAILURE_DIR="build/fuzz/artifacts/$t" "$binary" "${options[@]}" "build/fuzz/corpus/$t" ${seeds[$t]} \
    >"build/fuzz/$t.log" 2>&1 &
  pids+=($!)
done
for i in "${!targets[@]}"; do
  t="${targets[$i]}"
  if wait "${pids[$i]}"; then result="clean"; else result="FAILED"; status=1; fi
  # Fork mode's progress: "#EXECS: cov: C ft: F corp: N exec/s R oom/timeout/crash: ... time: Ts job: J".
  last=$(grep -E '^#[0-9]+: cov: ' "build/fuzz/$t.log" | tail -1)
  execs=$(sed -nE 's/^#([0-9]+): .*/\1/p' <<<"$last")
  rate=$(sed -nE 's/.* exec\/s ([0-9]+) .*/\1/p' <<<"$last")
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' <<<"$last")
  echo "fuzz ${t}_fuzzer: $result, ${execs:-?} executions in ${seconds} s on $forks fork(s), ${rate:-?} exec/s," \
       "${cov:-coverage ?}"
  if [ "$result" = "FAILED" ]; then
    echo "---- build/fuzz/$t.log (tail) ----"
    tail -60 "build/fuzz/$t.log"
  fi
done
exit $status
