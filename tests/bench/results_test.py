"""Tests of the results scripts: collect_results.py, results_page.py and external_results.py."""
import json
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

from bench_testing import BENCH, assert_exits, run, write_sample_logs, write_sample_results

import collect_results
import external_results
import results_page


LOGS_FOLDER = tempfile.TemporaryDirectory()
LOGS = write_sample_logs(Path(LOGS_FOLDER.name) / "logs")


def by(runs, **keys):
    found = [r for r in runs if all(r.get(k) == v for k, v in keys.items())]
    assert len(found) == 1, (keys, runs)
    return found[0]


def kernels(flush, row):
    """{kernel: its entry} of a benchmark row (its "times" follow the flush's "kernels")."""
    return dict(zip(flush["kernels"], row["times"]))


class CollectResults(unittest.TestCase):
    """Tests of bench/collect_results.py on the sample logs of tests/fixtures/samples.json."""

    @classmethod
    def setUpClass(cls):
        cls.document = collect_results.collect(LOGS)
        cls.gpu = cls.document["gpus"][0]

    def test_one_gpu_entry_with_the_schema_version(self):
        self.assertEqual(self.document["schema"], 2)
        self.assertEqual(len(self.document["gpus"]), 1)
        self.assertEqual(list(self.gpu), ["environment", "correctness", "sass_check", "benchmark", "logit_options"])

    def test_environment_keeps_versions_and_the_reasons_for_absent_tools(self):
        env = self.gpu["environment"]
        self.assertEqual((env["gpu"], env["driver"], env["torch"]), ("Sample GPU", "999.1", "2.99.0+sample"))
        self.assertEqual(env["cuda_runtime"], "13.0")  # from the benchmark's JSON
        self.assertEqual(env["absent"]["flashinfer"], "ModuleNotFoundError: No module named 'flashinfer'")
        self.assertNotIn("flashinfer", env)
        self.assertTrue(env["command"].endswith("bench/run_gpu_suite.sh build out"))
        self.assertNotIn("cases", env)
        correctness = self.gpu["correctness"]
        self.assertEqual((correctness["cases_per_property"], correctness["sanitizer_cases"]), (10, 5))

    def test_a_passing_catalogue_process_keeps_its_tests_and_worst_errors(self):
        runs = self.gpu["correctness"]["catalogue"]["runs"]
        self.assertEqual([(r["suite"], r["kernel"]) for r in runs][:3], [
            ("GpuCatalogue", "cuda_fused"), ("GpuCatalogue", "cuda_splitk"), ("GpuCatalogueDeep", "cuda_fused")])
        # A pass implies exit 0 and no failed test: neither is recorded, nor a tail.
        self.assertEqual(by(runs, suite="GpuCatalogue", kernel="cuda_fused"), {
            "suite": "GpuCatalogue", "kernel": "cuda_fused", "tests_run": 2, "passed": 2, "skipped": 0,
            "worst": {"cuda_fused": {"fp32": 0.1, "bf16": 0.5}}, "status": "pass"})

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
        self.assertEqual(by(runs, kernel="cuda_fused", tool="memcheck", suite="GpuCatalogue"),
                         {"kernel": "cuda_fused", "tool": "memcheck", "suite": "GpuCatalogue", "status": "pass"})
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
        self.assertEqual(by(runs, binary="pacheck"),
                         {"binary": "pacheck", "kernels_checked": 38, "kernels_unwritten": 0, "status": "pass"})
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
        self.assertEqual(dirty["rows"][0]["bytes"], 4210688)
        small, large = (kernels(dirty, row) for row in dirty["rows"])
        self.assertEqual(list(small), dirty["kernels"])
        self.assertEqual(small["cuda_fused"], [25.0, 0.1684, 1024])  # us, TB/s, split size
        self.assertEqual(small["cuda_splitk"][0], 10.0)
        self.assertEqual(small["splitk_no_merge"][0], 9.0)
        self.assertEqual(small["cuda_fused_fp16"], [25.5, 0.1651, 1024])
        self.assertEqual(small["cuda_splitk_fp16"][0], 10.4)
        self.assertEqual(clean["sources"]["ours_fp16"], {"status": "skipped", "reason": "not run"})
        # An fp8 cache's kernels join the row under their cache's names; the row keeps bf16's bytes.
        self.assertEqual(small["cuda_fused_fp8_e4m3"], [15.3, 0.1397, 1024])
        self.assertEqual(small["flashinfer_tensor_cores_fp8_e4m3"][0], 12.0)
        self.assertEqual(dirty["sources"]["ours_fp8_e5m2"], {"status": "skipped", "reason": "not run"})
        self.assertIsNone(large["cuda_fused_fp8_e4m3"])  # not timed on this shape
        self.assertEqual(small["torch_cudnn"], [12.5, 0.3369])
        self.assertEqual(small["torch_flash"], {"error": "sample: flash refused this shape"})
        self.assertEqual(large["torch_flash"][0], 800.0)

    def test_each_logit_option_is_timed_against_its_reference(self):
        rows = {r["option"]: r for r in self.gpu["logit_options"]["rows"]}
        self.assertEqual(list(rows), ["soft_cap", "alibi", "window"])
        self.assertEqual(rows["soft_cap"]["kernels"]["cuda_fused"], {"us": 510.0, "reference_us": 500.0, "cost": 0.02})
        self.assertEqual((rows["soft_cap"]["batch"], rows["soft_cap"]["context"]), (64, 8192))
        self.assertEqual(rows["window"]["against"], "window_reference")
        self.assertEqual(rows["window"]["kernels"]["cuda_splitk"]["cost"], 0.0101)
        self.assertIn("alibi__4.json", rows["alibi"]["error"])

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

    def test_json_cut_off_with_its_run_reads_as_empty_and_says_so(self):
        with tempfile.TemporaryDirectory() as folder:
            logs = Path(folder)
            (logs / "environment.txt").write_text("gpu=Sample GPU\n")
            (logs / "mutants").mkdir()
            (logs / "mutants" / "1.log").write_text("command: pacheck mutants --gpu\nkilled: timeout\nexit 124\n")
            (logs / "mutants" / "1.json").write_text('{"per_mutant": [')
            mutants = collect_results.collect(logs)["gpus"][0]["correctness"]["gpu_mutants"]
            run_ = mutants["runs"][0]
            self.assertEqual((run_["status"], mutants["mutants"]), ("timeout", {}))
            self.assertRegex(run_["unreadable"], r"^1\.json: cut off with its run \(Expecting value")
            page = results_page.render(collect_results.collect(logs))
            self.assertIn("- seed 1: timeout, exit 124; `pacheck mutants --gpu`", page)
            self.assertIn("  - unreadable: 1.json: cut off with its run", page)
            (logs / "mutants" / "1.log").write_text("command: pacheck mutants --gpu\nexit 0\n")
            with self.assertRaisesRegex(collect_results.LogError, "1.json is not valid JSON"):
                collect_results.collect(logs)

    def test_main_writes_the_json_and_prints_a_summary(self):
        with tempfile.TemporaryDirectory() as folder:
            output = Path(folder) / "results.json"
            result = run([BENCH / "collect_results.py", "--logs", LOGS, "--output", output])
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(json.loads(output.read_text()), self.document)
            self.assertIn("catalogue: 1 of 5 passed, 2 fail, 1 timeout, 1 skipped", result.stdout)
            self.assertIn("sanitizers: 1 of 4 passed, 2 fail, 1 skipped", result.stdout)
            self.assertIn("benchmark, clean flush: 1 shapes (ours ok, ours_fp16 skipped, ours_fp8_e4m3 skipped, "
                          "ours_fp8_e5m2 skipped, torch failed, flashinfer failed, flashinfer_fp8_e4m3 skipped, "
                          "flashinfer_fp8_e5m2 skipped)", result.stdout)
            assert_exits(self, [BENCH / "collect_results.py", "--logs", Path(folder) / "none", "--output", output], 2,
                         "collect_results: ")


SAMPLE = write_sample_results(Path(LOGS_FOLDER.name) / "results_sample.json")
PAGE_SCRIPT = BENCH / "results_page.py"
EMPTY = {"schema": 2, "gpus": []}


# Lines of the sample's page, by the heading of the section that shows them.
PAGE_LINES = {
    "## Sample GPU": (
        "| GPU | Sample GPU |", "| driver | 999.1 |", "| torch | 2.99.0+sample |",
        "| FlashInfer | absent: No module named 'flashinfer' |",
        "| commit | 0123456789abcdef0123456789abcdef01234567 |", "| date (UTC) | 2099-01-01T00:00:00Z |",
        "| command | `CASES=10 bench/run_gpu_suite.sh build out` |", "| serial | sample-serial |",
        "Sections in results.json this page does not render yet: mutants, multi_gpu."),
    "## Other Sample GPU": ("| driver | 888.1 |",),
    "### Correctness": (
        "GPU catalogue (gpu_catalogue_test, 10 cases per property, one process per suite and kernel): "
        "1 of 2 processes passed.",
        "| GpuCatalogue | cuda_fused | pass | 11 | fp16 0.250, bf16 0.500 |",
        "| GpuCatalogue | cuda_splitk | fail: GpuCatalogue/GpuPropertyTest.Holds/Determinism__cuda_splitk | 11 | - |",
        "  - `sample failure: the second run differs`", "| memcheck | 2 of 2 clean | 1 of 1 clean |",
        "| racecheck | - | 0 of 1 clean (GpuEngineShapesDeep: fail, 2 errors) |"),
    "### SASS check": ("Copies that read a cache descriptor no instruction writes (`sass_descriptor_check.py`): "
                       "skipped: cuobjdump not found: none on PATH.",),
    # Ours, cuDNN and FlashInfer side by side with the ratios; the fp8 caches' table, x bf16 and x FlashInfer per
    # format.
    "#### L2 flush leaving dirty lines (the default)": (
        "| gqa | batch | context | ours fused | ours split-K | ours fused fp16 | ours split-K fp16 | cuDNN (torch) | "
        "flash (torch) | FlashInfer | FlashInfer TC | split | split-K x cuDNN | fused x cuDNN | ours x FlashInfer | "
        "fp16 x bf16 |",
        "| 4 | 1 | 1024 | 25.0 (0.17) | 10.0 (0.42) | 25.5 (0.17) | 10.4 (0.40) | 12.5 (0.34) | error | 20.0 (0.21) | "
        "16.0 (0.26) | 64 | 1.25 | 0.50 | 1.60 | 0.96 |",
        "| 8 | 64 | 8192 | 500.0 (4.30) | 510.0 (4.21) | - | - | 490.0 (4.39) | - | - | - | 8192 | 0.96 | 0.98 | - "
        "| - |",
        "Also timed (in results.json): splitk_no_merge.",
        "| gqa | batch | context | ours fused e4m3 | ours split-K e4m3 | FlashInfer e4m3 | FlashInfer TC e4m3 | "
        "ours fused e5m2 | ours split-K e5m2 | FlashInfer e5m2 | FlashInfer TC e5m2 | e4m3 x bf16 | e5m2 x bf16 | "
        "e4m3 x FlashInfer | e5m2 x FlashInfer |",
        "| 4 | 1 | 1024 | 15.0 (0.14) | 6.0 (0.36) | - | 12.0 (0.18) | - | - | - | - | 1.67 | - | 2.00 | - |",
        "device-to-device copy 4.00 TB/s (read + write); ours: ok; ours_fp16: ok; torch: ok (torch 2.99.0+sample, "
        "cudnn 99900); flashinfer: ok (flashinfer 9.9.9); ours_fp8_e4m3: ok."),
    "#### L2 flush leaving clean lines (--clean-flush)": (
        "ours: ok; ours_fp16: skipped (not run); torch: failed (torch (exit 1): sample); flashinfer: skipped "
        "(flashinfer is not importable: sample).",
        "| 4 | 1 | 1024 | 24.0 (0.18) | 9.5 (0.44) | - | - | - | - | - | - | 64 | - | - | - | - |"),
    "### Logit options' cost": (
        "| soft cap 30 | 4 | 64 | 8192 | no option | +2.0% (510.0 / 500.0 us) | +2.0% (520.2 / 510.0 us) |",
        "| window 4096 | 4 | 64 | 8192 | context 4096, no window | +0.0% (260.0 / 260.0 us) "
        "| +1.0% (270.0 / 267.3 us) |",
        "| ALiBi | 4 | - | - | no option | error: sample: alibi__4.json is cut off | - |"),
}


class ResultsPage(unittest.TestCase):
    """Tests of bench/results_page.py on the sample results of tests/fixtures/samples.json, and on none."""

    @classmethod
    def setUpClass(cls):
        cls.page = results_page.render(results_page.load(SAMPLE)).splitlines()

    def section(self, title):
        """The lines of the page from the heading `title` to the next heading of the same or a higher level."""
        start = self.page.index(title)
        level = title.split()[0]
        end = next((i for i in range(start + 1, len(self.page))
                    if self.page[i].startswith("#") and len(self.page[i].split()[0]) <= len(level)), len(self.page))
        return self.page[start:end]

    def test_empty_results_say_no_run_has_been_recorded(self):
        page = results_page.render(EMPTY)
        self.assertTrue(page.startswith("<!-- The GPU results page, generated by bench/results_page.py"))
        self.assertIn("No GPU run has been recorded yet.", page)
        self.assertNotIn("## ", page)

    def test_each_section_shows_its_figures(self):
        for title, lines in PAGE_LINES.items():
            for line in lines:
                with self.subTest(section=title, line=line):
                    self.assertIn(line, self.section(title))
        # The fp8 caches' table has only the rows with an fp8 kernel.
        dirty = self.section("#### L2 flush leaving dirty lines (the default)")
        self.assertFalse(any(line.startswith("| 8 | 64 | 8192 | - |") for line in dirty))
        self.assertNotIn("Sections in results.json", "\n".join(self.section("## Other Sample GPU")))

    def test_check_fails_when_the_page_is_not_what_the_json_generates(self):
        with tempfile.TemporaryDirectory() as folder:
            page = Path(folder) / "RESULTS.md"
            assert_exits(self, [PAGE_SCRIPT, "--results", SAMPLE, "--page", page, "--check"], 1, "is not what")
            self.assertEqual(run([PAGE_SCRIPT, "--results", SAMPLE, "--page", page]).returncode, 0)
            self.assertEqual(run([PAGE_SCRIPT, "--results", SAMPLE, "--page", page, "--check"]).returncode, 0)
            page.write_text(page.read_text().replace("1.25", "1.26"))
            self.assertEqual(run([PAGE_SCRIPT, "--results", SAMPLE, "--page", page, "--check"]).returncode, 1)

    def add(self, folder, document):
        """Records the run `document` in folder's results.json (--add); its GPUs and page text after."""
        folder = Path(folder)
        (folder / "run.json").write_text(json.dumps(document))
        result = run([PAGE_SCRIPT, "--results", folder / "results.json", "--page", folder / "RESULTS.md", "--add",
                      folder / "run.json"])
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads((folder / "results.json").read_text())["gpus"], (folder / "RESULTS.md").read_text()

    def test_add_makes_a_run_the_latest_of_its_gpu(self):
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / "results.json").write_text(SAMPLE.read_text())
            newer = {"schema": 2, "gpus": [{"environment": {"gpu": "Sample GPU", "driver": "999.2"}},
                                           {"environment": {"gpu": "Third Sample GPU"}}]}
            gpus, page = self.add(folder, newer)
            self.assertEqual([g["environment"]["gpu"] for g in gpus],
                             ["Sample GPU", "Other Sample GPU", "Third Sample GPU"])
            self.assertIn('{"environment":{"gpu":"Third Sample GPU"}}',  # a record a line
                          (Path(folder) / "results.json").read_text().splitlines())
            self.assertEqual(gpus[0]["environment"], newer["gpus"][0]["environment"])
            self.assertIn("| driver | 999.2 |", page)
            # The sections the newer run skipped keep the recorded figures, each naming the run it came from; the
            # sample's skipped SASS check is not kept.
            sample = json.loads(SAMPLE.read_text())["gpus"][0]
            self.assertEqual(set(gpus[0]), {"environment", "correctness", "benchmark", "logit_options", "mutants",
                                            "multi_gpu", "earlier"})
            self.assertEqual(gpus[0]["benchmark"], sample["benchmark"])
            provenance = {key: sample["environment"][key] for key in ("commit", "date", "command")}
            self.assertEqual(gpus[0]["earlier"]["benchmark"], provenance)
            self.assertIn(f"From an earlier run (commit {provenance['commit']}, {provenance['date']}, "
                          f"`{provenance['command']}`): the latest run above did not run this.", page)
            # A later run with a benchmark replaces it; the correctness figures keep their first run's name.
            gpus, _ = self.add(folder, {"schema": 2, "gpus": [{"environment": {"gpu": "Sample GPU", "commit": "feed"},
                                                               "benchmark": {"flushes": []}}]})
            self.assertEqual(gpus[0]["benchmark"], {"flushes": []})
            self.assertNotIn("benchmark", gpus[0]["earlier"])
            self.assertEqual(gpus[0]["earlier"]["correctness"], provenance)

    def test_add_keeps_each_correctness_part_a_later_run_skipped(self):
        """The catalogue, the sanitizers and the GPU mutants run apart (SKIP_CHECKS, SKIP_MUTANTS): a run that skipped
        one keeps the recorded one, with its settings and the run it came from, beside the parts it ran."""
        def gpu_run(commit, command, correctness, **sections):
            return {"schema": 2, "gpus": [{"environment": {"gpu": "Sample GPU", "commit": commit, "date": "d",
                                                           "command": command},
                                           "correctness": correctness, **sections}]}
        skip = {"catalogue": {"skipped": "SKIP_CHECKS=1"}, "sanitizers": {"skipped": "SKIP_CHECKS=1"},
                "gpu_mutants": {"skipped": "SKIP_MUTANTS=1"}}
        ran = {"catalogue": {"runs": []}, "sanitizers": {"runs": []}}
        mutants = {"runs": [{"seed": 1, "status": "pass"}], "mutants": {}}
        first = {"commit": "abc", "date": "d", "command": "first"}
        checks = {"commit": "c0ffee", "date": "d", "command": "checks"}
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / "results.json").write_text(json.dumps(gpu_run("abc", "first", {
                "cases_per_property": 5, "sanitizer_cases": 2, **ran, "gpu_mutants": mutants})))
            gpus, _ = self.add(folder, gpu_run("c0ffee", "checks", {"cases_per_property": 7, "sanitizer_cases": 3,
                                                                      **skip, **ran}))
            self.assertEqual(gpus[0]["correctness"]["gpu_mutants"], mutants)
            self.assertEqual(gpus[0]["correctness"]["cases_per_property"], 7)
            self.assertEqual(gpus[0]["earlier"], {"correctness.gpu_mutants": first})
            # Then a benchmark run skips every check: the catalogue and sanitizers come from the checks run.
            gpus, page = self.add(folder, gpu_run("feed", "bench", {"cases_per_property": 1000, **skip},
                                                  benchmark={"flushes": []}))
            correctness = gpus[0]["correctness"]
            self.assertEqual((correctness["cases_per_property"], correctness["sanitizer_cases"]), (7, 3))
            self.assertEqual(correctness["gpu_mutants"], mutants)
            self.assertEqual(gpus[0]["earlier"], {"correctness.catalogue": checks, "correctness.sanitizers": checks,
                                                  "correctness.gpu_mutants": first})
            self.assertIn("From an earlier run (commit c0ffee, d, `checks`): the latest run above did not run this.\n\n"
                          "GPU catalogue (gpu_catalogue_test, 7 cases per property", page)
            self.assertIn("From an earlier run (commit abc, d, `first`): the latest run above did not run this.\n\n"
                          "GPU mutants", page)

    def test_bad_json_is_named(self):
        with tempfile.TemporaryDirectory() as folder:
            results = Path(folder) / "results.json"
            for text, message in (("{not json", "is not valid JSON"),
                                  ('{"runs": []}', 'expected an object with a "gpus" list'),
                                  ('{"schema": 1, "gpus": []}', "schema 1, but these scripts read schema 2"),
                                  ('{"gpus": []}', "schema None, but these scripts read schema 2"),
                                  ('{"schema": 2, "gpus": [{"environment": {}}]}',
                                   r"gpus\[0\] has no environment.gpu"),
                                  ('{"schema": 2, "gpus": [{"environment": {"gpu": "x"}, "benchmark": []}]}',
                                   r"gpus\[0\].benchmark is not an object")):
                results.write_text(text)
                with self.assertRaisesRegex(results_page.ResultsError, message):
                    results_page.load(results)
            assert_exits(self, [PAGE_SCRIPT, "--results", Path(folder) / "missing.json", "--check"], 2,
                         "results_page: cannot read")


PACHECK_LOG = """\
  UlpBoundedAgreement    plugin_k    100 cases  pass
  Determinism            plugin_k     41 cases  FAIL
some other line
"""
OTHER_LOG = PACHECK_LOG.replace("plugin_k", "plugin_other")
PYTEST_LOG = """\
..F.                                                                     [100%]
FAILED test_kernel.py::test_kernel[Determinism] - pacheck._check.PropertyFailure: ...
1 failed, 3 passed in 1.00s
"""


class ExternalResults(unittest.TestCase):
    """external_results.py: kernels checked through pacheck's doors, read from each check's output into results.json."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = Path(self.folder.name)
        self.results = self.dir / "results.json"
        self.results.write_text(json.dumps({"schema": 2, "gpus": [{"environment": {"gpu": "GPU X"}}]}))

    def tearDown(self):
        self.folder.cleanup()

    def record(self, command, log=PACHECK_LOG, *options, kind="--pacheck-log", gpu="GPU X"):
        """Records the check whose output is log (of `kind`) under command, with more options."""
        path = self.dir / f"{len(list(self.dir.iterdir()))}.log"
        path.write_text(log)
        return external_results.main(["--results", str(self.results), "--gpu", gpu, "--door", "d", "--command",
                                      command, *options, kind, str(path)])

    def section(self):
        return json.loads(self.results.read_text())["gpus"][0]["external_kernels"]

    def test_pacheck_check_lines_become_each_property_and_its_status(self):
        self.record("c")
        [run] = self.section()
        self.assertEqual(run["cases_per_property"], 100)
        self.assertEqual(run["kernels"], [{"name": "plugin_k", "held": ["UlpBoundedAgreement"],
                                           "failed": ["Determinism"], "cases": {"Determinism": 41}}])

    def test_a_quiet_pytest_log_names_the_failures_and_the_rest_held(self):
        self.record("c", PYTEST_LOG, "--cases", "50", "--properties", "Determinism,BatchIsolation",
                    kind="--pytest-log")
        [kernel] = self.section()[0]["kernels"]
        self.assertEqual(kernel, {"name": "kernel", "held": ["BatchIsolation"], "failed": ["Determinism"]})

    def test_the_same_command_replaces_its_entry_and_others_stay(self):
        self.record("a")
        self.record("b", OTHER_LOG)
        self.record("a")
        self.assertEqual([run["command"] for run in self.section()], ["b", "a"])

    def test_a_kernels_newest_check_takes_it_out_of_older_entries(self):
        self.record("a")
        self.record("b")
        self.assertEqual([run["command"] for run in self.section()], ["b"])
        self.record("c", OTHER_LOG)
        self.assertEqual([(run["command"], [k["name"] for k in run["kernels"]]) for run in self.section()],
                         [("b", ["plugin_k"]), ("c", ["plugin_other"])])

    def test_an_entry_checked_apart_says_its_commit_and_date_on_the_page(self):
        self.record("c", PACHECK_LOG, "--commit", "abc1234", "--date", "2026-01-02T03:04:05Z")
        self.record("d", OTHER_LOG)
        first, second = self.section()
        self.assertEqual((first["commit"], first["date"]), ("abc1234", "2026-01-02T03:04:05Z"))
        self.assertNotIn("commit", second)
        page = results_page.render(json.loads(self.results.read_text()))
        self.assertIn("`c` (d, 100 cases per property, commit abc1234, date 2026-01-02T03:04:05Z):", page)
        self.assertIn("`d` (d, 100 cases per property):", page)

    def test_output_without_results_and_an_unknown_gpu_are_refused(self):
        with self.assertRaises(SystemExit):
            self.record("c", "nothing here\n")
        with self.assertRaises(SystemExit):
            self.record("c", gpu="GPU Y")


if __name__ == "__main__":
    unittest.main()
