"""Tests of bench/collect_results.py on the sample logs of tests/fixtures/bench_logs.json."""
import json
import shutil
import tempfile
import unittest
from pathlib import Path

from bench_testing import BENCH, run, write_sample_logs

import collect_results

LOGS_FOLDER = tempfile.TemporaryDirectory()
LOGS = write_sample_logs(Path(LOGS_FOLDER.name) / "logs")


def by(runs, **keys):
    found = [r for r in runs if all(r.get(k) == v for k, v in keys.items())]
    assert len(found) == 1, (keys, runs)
    return found[0]


class Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.document = collect_results.collect(LOGS)
        cls.gpu = cls.document["gpus"][0]

    def test_one_gpu_entry_with_the_schema_version(self):
        self.assertEqual(self.document["schema"], 1)
        self.assertEqual(len(self.document["gpus"]), 1)
        self.assertEqual(list(self.gpu), ["environment", "correctness", "sass_check", "benchmark"])

    def test_environment_keeps_versions_and_the_reasons_for_absent_tools(self):
        env = self.gpu["environment"]
        self.assertEqual(env["gpu"], "Sample GPU")
        self.assertEqual(env["driver"], "999.1")
        self.assertEqual(env["torch"], "2.99.0+sample")
        self.assertEqual(env["cuda_runtime"], "13.0")  # from the benchmark's JSON
        self.assertEqual(env["absent"]["flashinfer"], "ModuleNotFoundError: No module named 'flashinfer'")
        self.assertNotIn("flashinfer", env)
        self.assertTrue(env["command"].endswith("bench/run_gpu_suite.sh build out"))
        self.assertNotIn("cases", env)
        self.assertEqual(self.gpu["correctness"]["cases_per_property"], 10)
        self.assertEqual(self.gpu["correctness"]["sanitizer_cases"], 5)

    def test_a_passing_catalogue_process_keeps_its_tests_and_worst_errors(self):
        runs = self.gpu["correctness"]["catalogue"]["runs"]
        self.assertEqual([(r["suite"], r["kernel"]) for r in runs][:3], [
            ("GpuCatalogue", "cuda_fused"), ("GpuCatalogue", "cuda_splitk"), ("GpuCatalogueDeep", "cuda_fused")])
        passed = by(runs, suite="GpuCatalogue", kernel="cuda_fused")
        self.assertEqual((passed["status"], passed["exit"], passed["tests_run"], passed["passed"]), ("pass", 0, 2, 2))
        self.assertEqual([(w["dtype"], w["worst_error_over_bound"]) for w in passed["worst"]],
                         [("fp32", 0.1), ("bf16", 0.5)])
        self.assertNotIn("tail", passed)

    def test_catalogue_failures_timeouts_skips_and_empty_filters(self):
        runs = self.gpu["correctness"]["catalogue"]["runs"]
        failed = by(runs, suite="GpuCatalogue", kernel="cuda_splitk")
        self.assertEqual(failed["status"], "fail")
        self.assertEqual(failed["failed"], ["GpuCatalogue/GpuPropertyTest.Holds/Determinism__cuda_splitk"])
        self.assertIn("sample failure: the second run differs", failed["tail"])
        self.assertIn("--gtest_filter=GpuCatalogue/", failed["command"])
        self.assertEqual(by(runs, suite="GpuEngineShapes", kernel="cuda_fused")["status"], "timeout")
        skipped = by(runs, suite="GpuEngineShapes", kernel="cuda_splitk")
        self.assertEqual((skipped["status"], skipped["reason"]), ("skipped", "no CUDA device: sample reason"))
        empty = by(runs, suite="GpuCatalogueDeep", kernel="cuda_fused")
        self.assertEqual(empty["status"], "fail")
        self.assertIn("no test ran", empty["tail"][-1])

    def test_sanitizer_errors_are_counted(self):
        runs = self.gpu["correctness"]["sanitizers"]["runs"]
        clean = by(runs, kernel="cuda_fused", tool="memcheck", suite="GpuCatalogue")
        self.assertEqual((clean["status"], clean["errors"]), ("pass", 0))
        race = by(runs, kernel="cuda_fused", tool="racecheck", suite="GpuEngineShapesDeep")
        self.assertEqual((race["status"], race["errors"], race["exit"]), ("fail", 2, 9))
        usage = by(runs, kernel="cuda_splitk", tool="synccheck", suite="GpuEngineShapes")
        self.assertEqual((usage["status"], usage["errors"]), ("fail", None))
        self.assertIn("--layout: sample usage error", usage["tail"])
        skipped = by(runs, kernel="cuda_splitk", tool="memcheck", suite="GpuCatalogueOdd")
        self.assertEqual(skipped["status"], "skipped")
        self.assertIn("no --layout and --merge known for suite GpuCatalogueOdd", skipped["reason"])

    def test_sass_check_outcomes(self):
        runs = self.gpu["sass_check"]["runs"]
        self.assertEqual(by(runs, binary="pacheck")["status"], "pass")
        self.assertEqual(by(runs, binary="pacheck")["kernels_checked"], 38)
        bad = by(runs, binary="paged_attention_bench")
        self.assertEqual((bad["status"], bad["kernels_unwritten"]), ("fail", 1))
        self.assertIn("UNWRITTEN DESCRIPTOR UR[6]: 4 LDGSTS read desc[UR[6]] in sample_kernel", bad["tail"])
        skipped = by(runs, binary="gpu_catalogue_test")
        self.assertEqual(skipped["status"], "skipped")
        self.assertTrue(skipped["reason"].startswith("cuobjdump not found"))

    def test_benchmark_rows_join_the_sources_by_shape(self):
        dirty, clean = self.gpu["benchmark"]["flushes"]
        self.assertEqual((dirty["flush"], clean["flush"]), ("dirty", "clean"))
        self.assertEqual(dirty["copy_tbps"], 4.0)
        self.assertEqual([(r["gqa"], r["batch"], r["context"]) for r in dirty["rows"]], [(4, 1, 1024), (8, 64, 8192)])
        small = dirty["rows"][0]
        self.assertEqual(small["bytes"], 4210688)
        self.assertEqual(small["kernels"]["cuda_fused"], {"us": 25.0, "tbps": 0.1684, "split_size": 1024})
        self.assertEqual(small["kernels"]["cuda_splitk"]["us"], 10.0)
        self.assertEqual(small["kernels"]["splitk_no_merge"]["us"], 9.0)
        self.assertEqual(small["kernels"]["torch_cudnn"]["us"], 12.5)
        self.assertEqual(small["kernels"]["torch_flash"], {"error": "sample: flash refused this shape"})
        self.assertEqual(dirty["rows"][1]["kernels"]["torch_flash"]["us"], 800.0)

    def test_a_source_that_was_skipped_or_failed_says_why(self):
        dirty, clean = self.gpu["benchmark"]["flushes"]
        self.assertEqual(dirty["sources"]["ours"]["status"], "ok")
        self.assertEqual(dirty["sources"]["torch"]["cudnn"], 99900)
        self.assertEqual(dirty["sources"]["flashinfer"],
                         {"status": "skipped", "reason": "flashinfer is not importable: No module named 'flashinfer'"})
        self.assertEqual(clean["sources"]["torch"],
                         {"status": "failed", "reason": "torch (exit 1): torch_sdpa_bench: no CUDA device"})
        self.assertEqual(clean["sources"]["flashinfer"]["status"], "failed")
        self.assertIn("flashinfer.json is not valid JSON", clean["sources"]["flashinfer"]["reason"])

    def test_a_folder_skipped_or_failed_whole_says_why(self):
        with tempfile.TemporaryDirectory() as folder:
            logs = Path(folder) / "logs"
            shutil.copytree(LOGS, logs)
            shutil.rmtree(logs / "catalogue")
            (logs / "catalogue").mkdir()
            (logs / "catalogue" / "skipped.log").write_text("skipped: SKIP_CHECKS=1\n")
            shutil.rmtree(logs / "bench")
            (logs / "sass" / "error.log").write_text("sample: the check could not start\n")
            gpu = collect_results.collect(logs)["gpus"][0]
            self.assertEqual(gpu["sass_check"], {"error": "sample: the check could not start"})
            self.assertEqual(gpu["correctness"]["catalogue"], {"skipped": "SKIP_CHECKS=1"})
            self.assertEqual(gpu["benchmark"], {"skipped": "no benchmark logs"})

    def test_bad_input_is_named(self):
        with tempfile.TemporaryDirectory() as folder:
            logs = Path(folder)
            with self.assertRaisesRegex(collect_results.LogError, "environment.txt is missing"):
                collect_results.collect(logs)
            (logs / "environment.txt").write_text("gpu=Sample GPU\nno equals sign here\n")
            with self.assertRaisesRegex(collect_results.LogError, r"environment.txt:2: expected KEY=value"):
                collect_results.collect(logs)
            (logs / "environment.txt").write_text("gpu=Sample GPU\n")
            (logs / "catalogue").mkdir()
            (logs / "catalogue" / "oddname.log").write_text("exit 0\n")
            with self.assertRaisesRegex(collect_results.LogError, "oddname.log: a log here is named SUITE__KERNEL.log"):
                collect_results.collect(logs)
        with self.assertRaisesRegex(collect_results.LogError, "is not a folder"):
            collect_results.collect(LOGS / "no-such-folder")

    def test_main_writes_the_json_and_prints_a_summary(self):
        with tempfile.TemporaryDirectory() as folder:
            output = Path(folder) / "results.json"
            result = run([BENCH / "collect_results.py", "--logs", LOGS, "--output", output])
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(json.loads(output.read_text()), self.document)
            self.assertIn("catalogue: 1 of 5 passed, 2 fail, 1 timeout, 1 skipped", result.stdout)
            self.assertIn("sanitizers: 1 of 4 passed, 2 fail, 1 skipped", result.stdout)
            self.assertIn("benchmark, clean flush: 1 shapes (ours ok, torch failed, flashinfer failed)", result.stdout)
            result = run([BENCH / "collect_results.py", "--logs", Path(folder) / "none", "--output", output])
            self.assertEqual(result.returncode, 2)
            self.assertIn("collect_results: ", result.stderr)


if __name__ == "__main__":
    unittest.main()
