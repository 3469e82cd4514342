"""Tests of the parts of gpu_timing.py, torch_sdpa_bench.py and flashinfer_bench.py that run without a GPU."""
import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path

from bench_testing import BENCH, fake_module, run

import gpu_timing

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


class Test(unittest.TestCase):
    def test_shapes_are_the_benchmarks(self):
        self.assertEqual(len(gpu_timing.SHAPES), 24)
        self.assertEqual(gpu_timing.SHAPES[0], (4, 1, 1024))
        self.assertEqual(gpu_timing.SHAPES[-1], (8, 256, 32768))

    def test_bytes_are_what_paged_attention_bench_counts(self):
        # paged_attention_bench printed 2.149 and 2.150 GB moved at batch 64, 8k for GQA 4 and 8.
        self.assertEqual(round(gpu_timing.bytes_moved(4, 64, 8192) / 1e9, 3), 2.149)
        self.assertEqual(round(gpu_timing.bytes_moved(8, 64, 8192) / 1e9, 3), 2.150)
        self.assertEqual(gpu_timing.bytes_moved(4, 1, 1024), 2 * 1024 * 8 * 128 * 2 + 2 * 32 * 128 * 2)

    def test_only_picks_shapes_in_the_benchmarks_order(self):
        args = gpu_timing.parse_args("", "x.json", ["--only", "8,1,1024", "--only", "4,256,32768", "--clean-flush"])
        self.assertEqual(args.shapes, [(4, 256, 32768), (8, 1, 1024)])
        self.assertTrue(args.clean_flush)
        self.assertEqual(gpu_timing.parse_args("", "x.json", []).shapes, list(gpu_timing.SHAPES))

    def test_bad_options_are_named(self):
        for script in SCRIPTS:
            for options, message in ((["--only", "4,1"], "--only takes GQA,BATCH,CONTEXT, not '4,1'"),
                                     (["--only", "3,1,1024"], "--only 3,1,1024 is not one of the benchmark's shapes"),
                                     (["--repeats", "0"], "--repeats must be at least 1")):
                result = run([script] + options)
                self.assertEqual(result.returncode, 2, (script, options))
                self.assertIn(message, result.stderr)

    def test_without_torch_both_scripts_record_the_skip(self):
        with tempfile.TemporaryDirectory() as folder:
            fake_module(folder, "torch", 'raise ImportError("sample: no torch in this test")\n')
            for script in SCRIPTS:
                output = Path(folder) / "out.json"
                result = run([script, "--json", output, "--clean-flush"], env={"PYTHONPATH": folder})
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(len(result.stdout.splitlines()), 1)
                self.assertIn("sample: no torch in this test", result.stdout)
                document = json.loads(output.read_text())
                self.assertIn("is not importable: sample: no torch in this test", document["skipped"])
                self.assertEqual((document["results"], document["clean_flush"]), ([], True))

    def test_without_flashinfer_its_script_records_the_skip(self):
        with tempfile.TemporaryDirectory() as folder:
            fake_module(folder, "torch", "")
            fake_module(folder, "flashinfer", 'raise ImportError("sample: no flashinfer in this test")\n')
            output = Path(folder) / "out.json"
            result = run([SCRIPTS[1], "--json", output], env={"PYTHONPATH": folder})
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(result.stdout, "skipped: flashinfer is not importable: sample: no flashinfer in this "
                                            "test\n")
            self.assertEqual(json.loads(output.read_text())["skipped"],
                             "flashinfer is not importable: sample: no flashinfer in this test")

    def test_without_a_cuda_device_the_scripts_fail_saying_so(self):
        with tempfile.TemporaryDirectory() as folder:
            fake_module(folder, "torch", FAKE_TORCH_WITHOUT_A_DEVICE)
            fake_module(folder, "flashinfer", '__version__ = "0.0.sample"\n')
            for script in SCRIPTS:
                result = run([script, "--json", Path(folder) / "out.json"], env={"PYTHONPATH": folder})
                self.assertEqual(result.returncode, 1, script)
                self.assertEqual(result.stderr, f"{script.stem}: no CUDA device\n")
                self.assertFalse((Path(folder) / "out.json").exists())

    def test_a_backend_error_becomes_the_rows_error(self):
        def refuse(row):
            raise RuntimeError("sample refusal\nsecond line")
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            row = gpu_timing.timed_row("sample", 4, 1, 1024, refuse)
        self.assertIn("error: sample refusal", printed.getvalue())
        self.assertEqual(row, {"backend": "sample", "gqa": 4, "batch": 1, "context": 1024,
                               "bytes": gpu_timing.bytes_moved(4, 1, 1024), "error": "sample refusal"})

    def test_a_timed_row_has_ms_and_tbps(self):
        def time_ms(row):
            row["resolved_backend"] = "sample"
            return 0.5
        with contextlib.redirect_stdout(io.StringIO()):
            row = gpu_timing.timed_row("sample", 8, 64, 8192, time_ms)
        self.assertEqual((row["ms"], row["resolved_backend"]), (0.5, "sample"))
        self.assertAlmostEqual(row["tbps"], gpu_timing.bytes_moved(8, 64, 8192) / 0.5e-3 / 1e12)


if __name__ == "__main__":
    unittest.main()
