#!/bin/bash -eu
# Builds the libFuzzer targets for ClusterFuzzLite (and OSS-Fuzz) with the toolchain's $CXX, $CXXFLAGS and
# $LIB_FUZZING_ENGINE into $OUT, each with its seed corpus (<target>_seed_corpus.zip) and dictionary (fuzz/README.md).
cd "$SRC/pacheck"
cmake -S . -B build/clusterfuzzlite -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX" \
      -DCMAKE_CXX_FLAGS="$CXXFLAGS" -DPACHECK_FUZZ=ON -DPACHECK_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
      -DPACHECK_CUDA=OFF -DPACHECK_TESTS=OFF
cmake --build build/clusterfuzzlite --target structured_problem_fuzzer case_file_fuzzer
cp build/clusterfuzzlite/fuzz/structured_problem_fuzzer build/clusterfuzzlite/fuzz/case_file_fuzzer "$OUT/"

seeds=build/clusterfuzzlite/seeds
rm -rf "$seeds" && fuzz/run_fuzzers.sh --seeds "$seeds" && cp fuzz/regressions/*.json "$seeds/case_file/"
for target in structured_problem case_file; do
  rm -f "$OUT/${target}_fuzzer_seed_corpus.zip"
  (cd "$seeds/$target" && zip -q -j "$OUT/${target}_fuzzer_seed_corpus.zip" ./*)
done
cp fuzz/case_file.dict "$OUT/case_file_fuzzer.dict"
