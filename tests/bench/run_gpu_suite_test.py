"""Tests of bench/run_gpu_suite.sh end to end, with fake binaries and fake GPU tools in place of the real ones."""
import json
import tarfile
import tempfile
import unittest
from pathlib import Path

from bench_testing import (BENCH, CLEAN_KERNEL, FAKE_NVIDIA_SMI, FAULTING_KERNEL, fake_bench, fake_module, run,
                           sass_listing, write_executable)

# gtest-like output: a listing of six suites and one whose pins run_gpu_suite.sh does not know (GpuCatalogueOdd),
# on two kernels; a run of one suite and kernel, of which GpuEngineShapesWide on cuda_fused fails.
FAKE_CATALOGUE = """#!/bin/bash
if [ "$1" = --gtest_list_tests ]; then
  for suite in GpuCatalogue GpuCatalogueDeep GpuCatalogueWide GpuCatalogueOdd \\
               GpuEngineShapes GpuEngineShapesDeep GpuEngineShapesWide; do
    echo "$suite/GpuPropertyTest."
    for kernel in cuda_fused cuda_splitk; do
      echo "  Holds/UlpBoundedAgreement__$kernel  # GetParam() = UlpBoundedAgreement on $kernel"
    done
  done
  echo "GpuSplitK."
  echo "  APlanLaunchedAgainMergesOnlyThatLaunchsPartialStates"
  exit 0
fi
filter=${1#--gtest_filter=}
suite=${filter%%/*}
kernel=${filter#*__}
kernel=${kernel%%:*}
test="$suite/GpuPropertyTest.Holds/UlpBoundedAgreement__$kernel"
echo "Note: Google Test filter = $filter ($RC_PARAMS)"
echo "[==========] Running 1 test from 1 test suite."
echo "[ RUN      ] $test"
if [ "$suite-$kernel" = GpuEngineShapesWide-cuda_fused ]; then
  echo "sample failure"
  echo "[  FAILED  ] $test (1 ms)"
  echo "[==========] 1 test from 1 test suite ran. (1 ms total)"
  echo "[  PASSED  ] 0 tests."
  echo "[  FAILED  ] 1 test, listed below:"
  exit 1
fi
echo "[       OK ] $test (1 ms)"
echo '[{"variant": "'$kernel'", "dtype": "bf16", "cases": 7, "worst_error": 0.001, "bound_at_worst": 0.002,
        "worst_error_over_bound": 0.5, "worst_ulps": 4}]' > "$PACHECK_GPU_SUMMARY"
echo "[==========] 1 test from 1 test suite ran. (1 ms total)"
echo "[  PASSED  ] 1 test."
"""
FAKE_PACHECK = """#!/bin/bash
echo "pacheck $*"
"""
# Runs the program it is given; racecheck on cuda_splitk with the deep layout on engine shapes reports 2 errors.
FAKE_SANITIZER = """#!/bin/bash
if [ "$1" = --version ]; then echo "NVIDIA (R) Compute Sanitizer"; echo "Version 2099.1.0 (sample)"; exit 0; fi
tool=""
while [ $# -gt 0 ] && [ ! -x "$1" ]; do [ "$1" = --tool ] && tool=$2; shift; done
"$@" || exit $?
if [ "$tool" = racecheck ]; then
  case " $* " in
    *" --variant cuda_splitk "*--engine-shapes*"--layout deep "*)
      echo "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)"; exit 9 ;;
  esac
  echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
else
  echo "========= ERROR SUMMARY: 0 errors"
fi
"""
# SASS of a clean kernel for every binary but the benchmark, whose kernel reads an unwritten descriptor.
FAKE_CUOBJDUMP = f"""#!/bin/bash
if [ "$1" = --version ]; then echo "Cuda compilation tools, release 13.2, V13.2.86"; exit 0; fi
case "$2" in
  */paged_attention_bench) cat <<'SASS'
{sass_listing([FAULTING_KERNEL])}SASS
  ;;
  *) cat <<'SASS'
{sass_listing([CLEAN_KERNEL])}SASS
  ;;
esac
"""


class Test(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        root = Path(self.folder.name)
        self.build, self.out = root / "build", root / "out"
        write_executable(self.build / "cli" / "pacheck", FAKE_PACHECK)
        write_executable(self.build / "tests" / "cuda" / "gpu_catalogue_test", FAKE_CATALOGUE)
        fake_bench(self.build / "bench" / "paged_attention_bench")
        run(["xz", self.build / "bench" / "paged_attention_bench"])  # a binary may come compressed
        tools = root / "tools"
        write_executable(tools / "nvidia-smi", FAKE_NVIDIA_SMI)
        write_executable(tools / "compute-sanitizer", FAKE_SANITIZER)
        write_executable(tools / "cuobjdump", FAKE_CUOBJDUMP)
        python = fake_module(root / "python", "torch", 'raise ImportError("sample: no torch in this test")\n')
        self.environment = {"PATH": f"{tools}:/usr/bin:/bin", "PYTHONPATH": str(python), "CASES": "7",
                            "SAN_CASES": "3", "LIMIT": "60", "BENCH_LIMIT": "60"}

    def tearDown(self):
        self.folder.cleanup()

    def suite(self, **settings):
        result = run([BENCH / "run_gpu_suite.sh", self.build, self.out], env={**self.environment, **settings})
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return result, json.loads((self.out / "results.json").read_text())["gpus"][0]

    def logs(self):
        with tarfile.open(self.out / "logs.tar.gz") as archive:
            return {member.name: archive.extractfile(member).read().decode()
                    for member in archive.getmembers() if member.isfile()}

    def test_a_whole_run_records_every_step(self):
        result, gpu = self.suite()
        env = gpu["environment"]
        self.assertEqual((env["gpu"], env["driver"], env["cuda_driver"]), ("Sample GPU", "999.1", "13.0"))
        self.assertEqual(env["compute_sanitizer"], "Version 2099.1.0 (sample)")
        self.assertEqual(env["cuobjdump"], "Cuda compilation tools, release 13.2, V13.2.86")
        self.assertIn("sample: no torch in this test", env["absent"]["torch"])
        self.assertIn("flashinfer", env["absent"])
        self.assertIn("CASES=7 SAN_CASES=3", env["command"])
        self.assertIn("commit", env)
        self.assertRegex(env["date"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

        catalogue = gpu["correctness"]["catalogue"]["runs"]
        self.assertEqual(len(catalogue), 7 * 2)
        failed = [r for r in catalogue if r["status"] != "pass"]
        self.assertEqual([(r["suite"], r["kernel"], r["status"]) for r in failed],
                         [("GpuEngineShapesWide", "cuda_fused", "fail")])
        self.assertIn("RC_PARAMS=max_success=7", failed[0]["command"])
        self.assertIn("--gtest_filter=GpuCatalogue/\\*__cuda_fused:GpuKernelErrors\\*:GpuFused\\*",
                      self.logs()["logs/catalogue/GpuCatalogue__cuda_fused.log"])
        self.assertEqual(catalogue[0]["worst"][0]["worst_error_over_bound"], 0.5)

        sanitizers = gpu["correctness"]["sanitizers"]["runs"]
        self.assertEqual(len(sanitizers), 2 * 4 * 7)
        failed = [r for r in sanitizers if r["status"] == "fail"]
        self.assertEqual([(r["kernel"], r["tool"], r["suite"], r["errors"]) for r in failed],
                         [("cuda_splitk", "racecheck", "GpuEngineShapesDeep", 2)])
        self.assertIn("--cases 3 --engine-shapes --layout deep --merge warps", failed[0]["command"])
        skipped = [(r["kernel"], r["tool"]) for r in sanitizers if r["status"] == "skipped"]
        self.assertEqual(len(skipped), 2 * 4)
        self.assertTrue(all(r["suite"] == "GpuCatalogueOdd" for r in sanitizers if r["status"] == "skipped"))
        logs = self.logs()
        wide = logs["logs/sanitizer/cuda_fused__synccheck__GpuCatalogueWide.log"].splitlines()[0]
        self.assertIn("--num-cuda-barriers 256", wide)
        self.assertIn("--cases 3 --layout wide --merge automatic", wide)
        self.assertIn("--engine-shapes --layout wide --merge automatic",
                      logs["logs/sanitizer/cuda_splitk__memcheck__GpuEngineShapesWide.log"])
        self.assertIn("--layout automatic --merge automatic",
                      logs["logs/sanitizer/cuda_splitk__initcheck__GpuCatalogue.log"])
        self.assertNotIn("--num-cuda-barriers", logs["logs/sanitizer/cuda_splitk__initcheck__GpuCatalogue.log"])

        sass = {r["binary"]: r for r in gpu["sass_check"]["runs"]}
        self.assertEqual({b: r["status"] for b, r in sass.items()},
                         {"pacheck": "pass", "gpu_catalogue_test": "pass", "paged_attention_bench": "fail"})
        self.assertEqual(sass["paged_attention_bench"]["kernels_unwritten"], 1)

        flushes = gpu["benchmark"]["flushes"]
        self.assertEqual([f["flush"] for f in flushes], ["dirty", "clean"])
        self.assertEqual(flushes[1]["rows"][0]["kernels"]["cuda_fused"]["us"], 45.0)  # the fake's clean flush
        self.assertEqual(flushes[0]["sources"]["torch"]["status"], "skipped")
        self.assertEqual(flushes[0]["sources"]["flashinfer"]["status"], "skipped")
        self.assertIn("--clean-flush", logs["logs/bench/clean/ours.log"].splitlines()[0])

        self.assertIn("## Sample GPU", (self.out / "RESULTS.md").read_text())
        self.assertIn("## Sample GPU", result.stdout)
        self.assertFalse((self.out / "logs").exists())

    def test_skip_checks_and_no_clean_flush_leave_those_steps_out(self):
        _, gpu = self.suite(SKIP_CHECKS="1", CLEAN_FLUSH="0")
        self.assertEqual(gpu["correctness"]["catalogue"], {"skipped": "SKIP_CHECKS=1"})
        self.assertEqual(gpu["correctness"]["sanitizers"], {"skipped": "SKIP_CHECKS=1"})
        self.assertEqual(len(gpu["sass_check"]["runs"]), 3)
        self.assertEqual([f["flush"] for f in gpu["benchmark"]["flushes"]], ["dirty"])

    def test_a_catalogue_that_lists_no_suites_is_an_error(self):
        write_executable(self.build / "tests" / "cuda" / "gpu_catalogue_test", "#!/bin/sh\necho 'GpuSplitK.'\n")
        _, gpu = self.suite(CLEAN_FLUSH="0")
        self.assertEqual(gpu["correctness"]["catalogue"],
                         {"error": "gpu_catalogue_test --gtest_list_tests listed no suite of SUITE/...__KERNEL tests"})
        self.assertEqual(gpu["correctness"]["sanitizers"], {"runs": []})

    def test_a_missing_binary_is_named(self):
        (self.build / "cli" / "pacheck").unlink()
        result = run([BENCH / "run_gpu_suite.sh", self.build, self.out], env=self.environment)
        self.assertEqual(result.returncode, 2)
        self.assertIn(f"{self.build}/cli/pacheck (or {self.build}/cli/pacheck.xz) is missing", result.stderr)
        result = run([BENCH / "run_gpu_suite.sh"], env={**self.environment, "OUT": str(self.out)})
        self.assertEqual(result.returncode, 2)
        self.assertIn("usage:", result.stderr)


if __name__ == "__main__":
    unittest.main()
