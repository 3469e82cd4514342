# external_results.py: kernels checked through pacheck's doors, read from each check's output into results.json.
import json
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import external_results  # noqa: E402

RESULTS = {"schema": 1, "gpus": [{"environment": {"gpu": "GPU X"}}]}
PACHECK_LOG = """\
  UlpBoundedAgreement    plugin_k    100 cases  pass
  Determinism            plugin_k     41 cases  FAIL
some other line
"""
PYTEST_LOG = """\
..F.                                                                     [100%]
FAILED test_kernel.py::test_kernel[Determinism] - pacheck._check.PropertyFailure: ...
1 failed, 3 passed in 1.00s
"""


class Test(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.results = self.dir / "results.json"
        self.results.write_text(json.dumps(RESULTS))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def record(self, *args):
        return external_results.main(["--results", str(self.results), "--gpu", "GPU X", "--door", "d", *args])

    def section(self):
        return json.loads(self.results.read_text())["gpus"][0]["external_kernels"]

    def test_pacheck_check_lines_become_each_property_and_its_status(self):
        (self.dir / "log").write_text(PACHECK_LOG)
        self.record("--command", "c", "--pacheck-log", str(self.dir / "log"))
        [run] = self.section()
        self.assertEqual(run["cases_per_property"], 100)
        self.assertEqual(run["kernels"], [{"name": "plugin_k", "properties": [
            {"property": "UlpBoundedAgreement", "status": "pass", "cases": 100},
            {"property": "Determinism", "status": "fail", "cases": 41}]}])

    def test_a_quiet_pytest_log_names_the_failures_and_the_rest_held(self):
        (self.dir / "log").write_text(PYTEST_LOG)
        self.record("--command", "c", "--cases", "50", "--properties", "Determinism,BatchIsolation",
                    "--pytest-log", str(self.dir / "log"))
        statuses = {p["property"]: p["status"] for p in self.section()[0]["kernels"][0]["properties"]}
        self.assertEqual(statuses, {"Determinism": "fail", "BatchIsolation": "pass"})

    def test_the_same_command_replaces_its_entry_and_others_stay(self):
        (self.dir / "log").write_text(PACHECK_LOG)
        self.record("--command", "a", "--pacheck-log", str(self.dir / "log"))
        self.record("--command", "b", "--pacheck-log", str(self.dir / "log"))
        self.record("--command", "a", "--pacheck-log", str(self.dir / "log"))
        self.assertEqual([run["command"] for run in self.section()], ["b", "a"])

    def test_output_without_results_and_an_unknown_gpu_are_refused(self):
        (self.dir / "log").write_text("nothing here\n")
        with self.assertRaises(SystemExit):
            self.record("--command", "c", "--pacheck-log", str(self.dir / "log"))
        (self.dir / "log").write_text(PACHECK_LOG)
        with self.assertRaises(SystemExit):
            external_results.main(["--results", str(self.results), "--gpu", "GPU Y", "--door", "d", "--command", "c",
                                   "--pacheck-log", str(self.dir / "log")])


if __name__ == "__main__":
    unittest.main()
