"""Tests of bench/ab_table.py on a small A/B log and of bench/ab_compare.sh with fake benchmark builds."""
import tempfile
import unittest
from pathlib import Path

from bench_testing import BENCH, FAKE_NVIDIA_SMI, fake_bench, run, write_executable

import ab_table

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


class Test(unittest.TestCase):
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
        result = run([BENCH / "ab_table.py", "/no/such/ab.log", "base"])
        self.assertEqual(result.returncode, 2)
        self.assertIn("cannot read /no/such/ab.log", result.stderr)

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
            result = run([BENCH / "ab_compare.sh", folder / "out", one, other])
            self.assertEqual(result.returncode, 2)
            self.assertIn("two builds named bench", result.stderr)
            result = run([BENCH / "ab_compare.sh", folder / "out", one, folder / "missing"])
            self.assertEqual(result.returncode, 2)
            self.assertIn(f"no benchmark build {folder / 'missing'}", result.stderr)
            result = run([BENCH / "ab_compare.sh", folder / "out", one, fake_bench(folder / "other")],
                         env={"PASSES": "dirty warm"})
            self.assertEqual(result.returncode, 2)
            self.assertIn("a pass is dirty or clean, not warm", result.stderr)
            result = run([BENCH / "ab_compare.sh", folder / "out", one])
            self.assertEqual(result.returncode, 2)
            self.assertIn("usage:", result.stderr)


if __name__ == "__main__":
    unittest.main()
