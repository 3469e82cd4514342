"""Tests of the GPU-machine scripts, run without a GPU: run_gpu_suite.sh, the SASS check, the timing scripts and
the A/B comparison."""
import contextlib
import io
import json
import tarfile
import tempfile
import unittest
from pathlib import Path

from bench_testing import (BENCH, CLEAN_KERNEL, FAKE_NVIDIA_SMI, FAULTING_KERNEL, NO_COPY_KERNEL, assert_exits,
                           fake_bench, fake_module, run, sass_listing, write_executable)

import ab_table
import gpu_timing


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
# `mutants --gpu` writes a kill matrix in which seed 2's gpu_mutant_b survives.
FAKE_PACHECK = """#!/bin/bash
echo "pacheck $*"
if [ "$1" = mutants ]; then
  while [ $# -gt 0 ]; do case $1 in --seed) seed=$2 ;; --json) json=$2 ;; esac; shift; done
  b=$([ "$seed" = 2 ] && echo null || echo 3)
  echo '{"cases_per_property": 100, "per_mutant": [
          {"mutant": "gpu_mutant_a", "killed_by": ["Determinism"], "cases_to_first_kill": '$seed'},
          {"mutant": "gpu_mutant_b", "killed_by": [], "cases_to_first_kill": '$b'}],
        "descriptions": {"gpu_mutant_a": "bug a", "gpu_mutant_b": "bug b"}}' > "$json"
fi
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


class RunGpuSuite(unittest.TestCase):
    """Tests of bench/run_gpu_suite.sh end to end, with fake binaries and fake GPU tools in place of the real ones."""

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
        self.assertEqual(catalogue[0]["worst"], {"cuda_fused": {"bf16": 0.5}})

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
        clean = dict(zip(flushes[1]["kernels"], flushes[1]["rows"][0]["times"]))
        self.assertEqual(clean["cuda_fused"][0], 45.0)  # the fake's clean flush
        self.assertEqual(flushes[0]["sources"]["torch"]["status"], "skipped")
        self.assertEqual(flushes[0]["sources"]["flashinfer"]["status"], "skipped")
        self.assertIn("--clean-flush", logs["logs/bench/clean/ours.log"].splitlines()[0])
        self.assertIn("--dtype fp16", logs["logs/bench/clean/ours_fp16.log"].splitlines()[0])
        self.assertEqual(flushes[0]["sources"]["ours_fp16"]["status"], "ok")
        self.assertIn("cuda_fused_fp16", flushes[0]["kernels"])
        options = {(r["option"], r["gqa"]): r for r in gpu["logit_options"]["rows"]}
        self.assertEqual(sorted(options), [(o, g) for o in ("alibi", "sinks", "soft_cap", "window") for g in (4, 8)])
        self.assertEqual(options[("soft_cap", 8)]["kernels"]["cuda_fused"]["cost"], 0.02)  # the fake's soft cap
        self.assertRegex(logs["logs/options/window_reference__8.log"].splitlines()[0], r"--only 8\\?,64\\?,4096 ")

        self.assertIn("## Sample GPU", (self.out / "RESULTS.md").read_text())
        self.assertIn("## Sample GPU", result.stdout)
        self.assertFalse((self.out / "logs").exists())

    def test_skip_checks_and_no_clean_flush_leave_those_steps_out(self):
        _, gpu = self.suite(SKIP_CHECKS="1", CLEAN_FLUSH="0")
        self.assertEqual(gpu["correctness"]["catalogue"], {"skipped": "SKIP_CHECKS=1"})
        self.assertEqual(gpu["correctness"]["sanitizers"], {"skipped": "SKIP_CHECKS=1"})
        self.assertEqual(len(gpu["sass_check"]["runs"]), 3)
        self.assertEqual([f["flush"] for f in gpu["benchmark"]["flushes"]], ["dirty"])

    def test_the_gpu_kill_matrix_runs_on_three_seeds_and_reaches_the_page(self):
        _, gpu = self.suite(CLEAN_FLUSH="0", SKIP_BENCH="1")
        runs = gpu["correctness"]["gpu_mutants"]["runs"]
        self.assertEqual([(r["seed"], r["status"]) for r in runs], [("1", "pass"), ("2", "fail"), ("3", "pass")])
        self.assertEqual(gpu["correctness"]["gpu_mutants"]["mutants"]["gpu_mutant_a"], {
            "description": "bug a", "cases_to_first_kill": {"1": 1, "2": 2, "3": 3},
            "killed_by": {"Determinism": ["1", "2", "3"]}})
        logs = self.logs()
        self.assertIn("--sanitizers --sanitizer-cases 5", logs["logs/mutants/1.log"].splitlines()[0])
        self.assertNotIn("--sanitizers", logs["logs/mutants/2.log"].splitlines()[0])
        page = (self.out / "RESULTS.md").read_text()
        self.assertIn("| `gpu_mutant_a` | bug a | Determinism | 2 / 3 | - |", page)
        self.assertIn("| `gpu_mutant_b` | bug b | SURVIVED | 3 / 3 (survived 1 seeds) | - |", page)
        _, gpu = self.suite(CLEAN_FLUSH="0", SKIP_BENCH="1", SKIP_MUTANTS="1")
        self.assertEqual(gpu["correctness"]["gpu_mutants"], {"skipped": "SKIP_MUTANTS=1"})

    def test_a_catalogue_that_lists_no_suites_is_an_error(self):
        write_executable(self.build / "tests" / "cuda" / "gpu_catalogue_test", "#!/bin/sh\necho 'GpuSplitK.'\n")
        _, gpu = self.suite(CLEAN_FLUSH="0")
        self.assertEqual(gpu["correctness"]["catalogue"],
                         {"error": "gpu_catalogue_test --gtest_list_tests listed no suite of SUITE/...__KERNEL tests"})
        self.assertEqual(gpu["correctness"]["sanitizers"], {"runs": []})

    def test_a_missing_binary_is_named(self):
        (self.build / "cli" / "pacheck").unlink()
        assert_exits(self, [BENCH / "run_gpu_suite.sh", self.build, self.out], 2,
                     f"{self.build}/cli/pacheck (or {self.build}/cli/pacheck.xz) is missing", env=self.environment)
        assert_exits(self, [BENCH / "run_gpu_suite.sh"], 2, "usage:", env={**self.environment, "OUT": str(self.out)})


SASS_SCRIPT = BENCH / "sass_descriptor_check.py"
# A fake cuobjdump: `-sass FILE` prints FILE, which the tests fill with a listing.
CAT_CUOBJDUMP = '#!/bin/sh\n[ "$1" = -sass ] || exit 3\nexec cat "$2"\n'


class SassDescriptorCheck(unittest.TestCase):
    """Tests of bench/sass_descriptor_check.py on small synthetic `cuobjdump -sass` listings."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = Path(self.folder.name)
        self.cuobjdump = write_executable(self.dir / "cuobjdump", CAT_CUOBJDUMP)

    def tearDown(self):
        self.folder.cleanup()

    def listing(self, name, kernels):
        (self.dir / name).write_text(sass_listing(kernels))
        return self.dir / name

    def test_each_kernel_is_checked_on_its_own(self):
        wide = ("wide", ["ULDC.64 UR4, c[0x0][0x208]", "LDGSTS.E.128 [R2], desc[UR5][R4.64]"])
        narrow = ("narrow", ["UMOV UR4, 0x1", "LDGSTS.E.128 [R2], desc[UR5][R4.64]"])
        writer = ("writer", ["ULDC.64 UR6, c[0x0][0x208]", "LDGSTS.E.128 [R2], desc[UR6][R4.64]"])
        reader = ("reader", ["LDGSTS.E.128 [R2], desc[UR6][R4.64]"])
        for kernels, status, found, absent in (
                ([CLEAN_KERNEL], 0, ["1 kernels with LDGSTS copies in the input, 0 reading an unwritten descriptor"],
                 []),
                ([CLEAN_KERNEL, FAULTING_KERNEL], 1,
                 ["UNWRITTEN DESCRIPTOR UR[6]: 1 LDGSTS read desc[UR[6]] in faulting_kernel",
                  "2 kernels with LDGSTS copies in the input, 1 reading an unwritten descriptor"], ["in clean_kernel"]),
                ([wide], 0, [], []),  # a 64-bit write covers the next register too
                ([narrow], 1, ["UR[5]"], []),  # a 32-bit one does not
                ([writer, reader], 1, ["in reader"], ["in writer"])):  # a write in another kernel does not count
            with self.subTest(kernels=[name for name, _ in kernels]):
                result = run([SASS_SCRIPT], stdin=sass_listing(kernels))
                self.assertEqual(result.returncode, status, result.stdout)
                for text in found:
                    self.assertIn(text, result.stdout)
                for text in absent:
                    self.assertNotIn(text, result.stdout)

    def test_input_without_kernels_fails(self):
        for text in ("", "this is not SASS\n", sass_listing([NO_COPY_KERNEL])):
            with self.subTest(text=text):
                assert_exits(self, [SASS_SCRIPT], 1, "FAILED, no kernel with LDGSTS copies in the input", "stdout",
                             stdin=text)

    def test_files_are_read_through_cuobjdump_given_or_on_path(self):
        clean, faulting = self.listing("clean.a", [CLEAN_KERNEL]), self.listing("faulting.a", [FAULTING_KERNEL])
        assert_exits(self, [SASS_SCRIPT, "--cuobjdump", self.cuobjdump, clean], 0,
                     f"1 kernels with LDGSTS copies in {clean}, 0 reading", "stdout")
        assert_exits(self, [SASS_SCRIPT, "--cuobjdump", self.cuobjdump, clean, faulting], 1, "in faulting_kernel",
                     "stdout")
        assert_exits(self, [SASS_SCRIPT, clean], 0, "0 reading", "stdout", env={"PATH": f"{self.dir}:/bin:/usr/bin"})
        missing = self.dir / "missing.a"
        assert_exits(self, [SASS_SCRIPT, "--cuobjdump", self.cuobjdump, missing], 2,
                     f"cuobjdump -sass {missing} failed (exit 1)", "stdout")

    def test_a_missing_cuobjdump_skips_with_the_reason(self):
        assert_exits(self, [SASS_SCRIPT, "--cuobjdump", self.dir / "none", "library.a"], 77,
                     f"cuobjdump not found: {self.dir / 'none'}", "stdout")
        assert_exits(self, [SASS_SCRIPT, "library.a"], 77, "cuobjdump not found: none on PATH", "stdout",
                     env={"PATH": str(self.dir / "empty")})


SCRIPTS = (BENCH / "torch_sdpa_bench.py", BENCH / "flashinfer_bench.py")
# A torch that imports, sees no device and has the versions the scripts record.
FAKE_TORCH_WITHOUT_A_DEVICE = """__version__ = "0.0.sample"
class cuda:
    @staticmethod
    def is_available():
        return False
class backends:
    class cudnn:
        @staticmethod
        def version():
            return 0
"""


class TimingScripts(unittest.TestCase):
    """Tests of the parts of gpu_timing.py, torch_sdpa_bench.py and flashinfer_bench.py that run without a GPU."""

    def test_shapes_bytes_and_only_are_the_benchmarks(self):
        self.assertEqual(len(gpu_timing.SHAPES), 24)
        self.assertEqual((gpu_timing.SHAPES[0], gpu_timing.SHAPES[-1]), ((4, 1, 1024), (8, 256, 32768)))
        # paged_attention_bench printed 2.149 and 2.150 GB moved at batch 64, 8k for GQA 4 and 8.
        self.assertEqual(round(gpu_timing.bytes_moved(4, 64, 8192) / 1e9, 3), 2.149)
        self.assertEqual(round(gpu_timing.bytes_moved(8, 64, 8192) / 1e9, 3), 2.150)
        self.assertEqual(gpu_timing.bytes_moved(4, 1, 1024), 2 * 1024 * 8 * 128 * 2 + 2 * 32 * 128 * 2)
        # --only picks shapes in the benchmark's order.
        args = gpu_timing.parse_args("", "x.json", ["--only", "8,1,1024", "--only", "4,256,32768", "--clean-flush"])
        self.assertEqual(args.shapes, [(4, 256, 32768), (8, 1, 1024)])
        self.assertTrue(args.clean_flush)
        self.assertEqual(gpu_timing.parse_args("", "x.json", []).shapes, list(gpu_timing.SHAPES))

    def test_bad_options_are_named(self):
        for script in SCRIPTS:
            for options, message in ((["--only", "4,1"], "--only takes GQA,BATCH,CONTEXT, not '4,1'"),
                                     (["--only", "3,1,1024"], "--only 3,1,1024 is not one of the benchmark's shapes"),
                                     (["--repeats", "0"], "--repeats must be at least 1")):
                assert_exits(self, [script] + options, 2, message)

    def test_a_missing_module_is_a_recorded_skip_and_a_missing_device_an_error(self):
        no_torch, no_flashinfer = (f'raise ImportError("sample: no {name} in this test")\n'
                                   for name in ("torch", "flashinfer"))
        for torch, flashinfer, script, skipped in (
                (no_torch, "", SCRIPTS[0], "torch is not importable: sample: no torch in this test"),
                (no_torch, "", SCRIPTS[1], "flashinfer is not importable: sample: no torch in this test"),
                ("", no_flashinfer, SCRIPTS[1], "flashinfer is not importable: sample: no flashinfer in this test"),
                (FAKE_TORCH_WITHOUT_A_DEVICE, '__version__ = "0.0.sample"\n', SCRIPTS[0], None),
                (FAKE_TORCH_WITHOUT_A_DEVICE, '__version__ = "0.0.sample"\n', SCRIPTS[1], None)):
            with self.subTest(script=script.name, skipped=skipped), tempfile.TemporaryDirectory() as folder:
                fake_module(folder, "torch", torch)
                fake_module(folder, "flashinfer", flashinfer)
                output = Path(folder) / "out.json"
                result = run([script, "--json", output, "--clean-flush"], env={"PYTHONPATH": folder})
                if skipped is None:
                    self.assertEqual((result.returncode, result.stderr), (1, f"{script.stem}: no CUDA device\n"))
                    self.assertFalse(output.exists())
                    continue
                self.assertEqual((result.returncode, result.stdout), (0, f"skipped: {skipped}\n"), result.stderr)
                self.assertEqual(json.loads(output.read_text()), {"skipped": skipped, "clean_flush": True,
                                                                  "results": []})

    def test_a_timed_row_has_ms_and_tbps_or_the_error_that_stopped_its_backend(self):
        def time_ms(row):
            row["resolved_backend"] = "sample"
            return 0.5

        def refuse(row):
            raise RuntimeError("sample refusal\nsecond line")
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            row = gpu_timing.timed_row("sample", 8, 64, 8192, time_ms)
            refused = gpu_timing.timed_row("sample", 4, 1, 1024, refuse)
        self.assertEqual((row["ms"], row["resolved_backend"]), (0.5, "sample"))
        self.assertAlmostEqual(row["tbps"], gpu_timing.bytes_moved(8, 64, 8192) / 0.5e-3 / 1e12)
        self.assertIn("error: sample refusal", printed.getvalue())
        self.assertEqual(refused, {"backend": "sample", "gqa": 4, "batch": 1, "context": 1024,
                                   "bytes": gpu_timing.bytes_moved(4, 1, 1024), "error": "sample refusal"})


LOG = """== base 4,1,1024 rep 1 dirty
   4      1     1024  cuda_fused             1024     0.0250      0.004    0.168
   4      1     1024  cuda_splitk              64     0.0100      0.004    0.421
WARNING: cuda_fused and cuda_splitk differ by 0.1
== change 4,1,1024 rep 1 dirty
   4      1     1024  cuda_fused             1024     0.0275      0.004    0.153
   4      1     1024  cuda_splitk              64     0.0090      0.004    0.468
== torch rep 1 dirty
cudnn                       4      1     1024     0.0115    0.366
== base 4,1,1024 rep 2 dirty
   4      1     1024  cuda_fused             1024     0.0250      0.004    0.168
   4      1     1024  cuda_splitk              64     0.0100      0.004    0.421
== change 4,1,1024 rep 2 dirty
   4      1     1024  cuda_fused             1024     0.0275      0.004    0.153
   4      1     1024  cuda_splitk              64     0.0090      0.004    0.468
"""


class AbCompare(unittest.TestCase):
    """Tests of bench/ab_table.py on a small A/B log and of bench/ab_compare.sh with fake benchmark builds."""

    def table(self, text, benches):
        with tempfile.TemporaryDirectory() as folder:
            log = Path(folder) / "ab.log"
            log.write_text(text)
            return run([BENCH / "ab_table.py", log, benches])

    def test_table_lists_every_run_and_the_change_against_the_base(self):
        result = self.table(LOG, "base,change")
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(len(lines), 3)
        self.assertTrue(lines[0].endswith("| change against base"))
        self.assertRegex(lines[1], r"4,1,1024 +- +dirty cuda_fused +\| +25\.0 +25\.0\| +27\.5 +27\.5\| \+10\.0%$")
        self.assertRegex(lines[2], r"cuda_splitk +\| +10\.0 +10\.0\| +9\.0 +9\.0\| -10\.0%$")

    def test_torch_sections_and_warnings_are_not_runs(self):
        with tempfile.TemporaryDirectory() as folder:
            log = Path(folder) / "ab.log"
            log.write_text(LOG)
            times = ab_table.read(log)
        self.assertEqual(sorted(times), [("4,1,1024", "-", "dirty", kernel, bench)
                                         for kernel in ("cuda_fused", "cuda_splitk") for bench in ("base", "change")])
        self.assertEqual(times[("4,1,1024", "-", "dirty", "cuda_fused", "base")], [25.0, 25.0])

    def test_bad_input_is_named(self):
        result = self.table("== base 4,1,1024 dirty\n", "base")
        self.assertEqual(result.returncode, 2)
        self.assertIn("ab.log:1: expected '== BENCH SHAPE [CONFIG] rep N FLUSH'", result.stderr)
        result = self.table(LOG, "base,other")
        self.assertEqual(result.returncode, 2)
        self.assertIn("no runs of other in", result.stderr)
        assert_exits(self, [BENCH / "ab_table.py", "/no/such/ab.log", "base"], 2, "cannot read /no/such/ab.log")

    def test_ab_compare_interleaves_the_builds_and_tables_them(self):
        with tempfile.TemporaryDirectory() as folder:
            folder = Path(folder)
            write_executable(folder / "bin" / "nvidia-smi", FAKE_NVIDIA_SMI)
            base, slower = fake_bench(folder / "base_bench"), fake_bench(folder / "slower_bench", factor=1.1)
            run(["xz", slower])  # a build may come compressed
            environment = {"PATH": f"{folder / 'bin'}:/usr/bin:/bin", "SHAPES": "4,1,1024 8,64,8192",
                           "PASSES": "dirty clean dirty", "TORCH_SHAPES": ""}
            result = run([BENCH / "ab_compare.sh", folder / "out", base, slower], env=environment)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            log = (folder / "out" / "ab.log").read_text()
            headers = [line for line in log.splitlines() if line.startswith("==")]
            self.assertEqual(headers[:3], ["== base_bench 4,1,1024 rep 1 dirty", "== slower_bench 4,1,1024 rep 1 dirty",
                                           "== base_bench 8,64,8192 rep 1 dirty"])
            self.assertEqual(len(headers), 12)
            table = (folder / "out" / "ab_table.txt").read_text().splitlines()
            self.assertEqual(len(table), 1 + 2 * 2 * 2)  # header, then shape x flush x kernel
            self.assertTrue(all(line.endswith("+10.0%") for line in table[1:]), table)
            self.assertTrue((folder / "out" / "gpu.txt").read_text().startswith("Sample GPU"))

    def test_ab_compare_refuses_builds_of_one_name_and_missing_ones(self):
        with tempfile.TemporaryDirectory() as folder:
            folder = Path(folder)
            (folder / "a").mkdir()
            one, other = fake_bench(folder / "bench"), fake_bench(folder / "a" / "bench")
            assert_exits(self, [BENCH / "ab_compare.sh", folder / "out", one, other], 2, "two builds named bench")
            assert_exits(self, [BENCH / "ab_compare.sh", folder / "out", one, folder / "missing"], 2,
                         f"no benchmark build {folder / 'missing'}")
            assert_exits(self, [BENCH / "ab_compare.sh", folder / "out", one, fake_bench(folder / "other")], 2,
                         "a pass is dirty or clean, not warm", env={"PASSES": "dirty warm"})
            assert_exits(self, [BENCH / "ab_compare.sh", folder / "out", one], 2, "usage:")


if __name__ == "__main__":
    unittest.main()
