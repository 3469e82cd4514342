"""Tests of bench/sass_descriptor_check.py on small synthetic `cuobjdump -sass` listings."""
import tempfile
import unittest
from pathlib import Path

from bench_testing import (BENCH, CLEAN_KERNEL, FAULTING_KERNEL, NO_COPY_KERNEL, run, sass_listing,
                           write_executable)

SCRIPT = BENCH / "sass_descriptor_check.py"
# A fake cuobjdump: `-sass FILE` prints FILE, which the tests fill with a listing.
FAKE_CUOBJDUMP = '#!/bin/sh\n[ "$1" = -sass ] || exit 3\nexec cat "$2"\n'


class Test(unittest.TestCase):
    def check(self, kernels):
        return run([SCRIPT], stdin=sass_listing(kernels))

    def test_a_clean_kernel_passes(self):
        result = self.check([CLEAN_KERNEL])
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("1 kernels with LDGSTS copies in the input, 0 reading an unwritten descriptor", result.stdout)

    def test_a_copy_reading_an_unwritten_descriptor_fails_naming_the_kernel(self):
        result = self.check([CLEAN_KERNEL, FAULTING_KERNEL])
        self.assertEqual(result.returncode, 1)
        self.assertIn("UNWRITTEN DESCRIPTOR UR[6]: 1 LDGSTS read desc[UR[6]] in faulting_kernel", result.stdout)
        self.assertNotIn("in clean_kernel", result.stdout)
        self.assertIn("2 kernels with LDGSTS copies in the input, 1 reading an unwritten descriptor", result.stdout)

    def test_input_without_kernels_fails(self):
        for text in ("", "this is not SASS\n", sass_listing([NO_COPY_KERNEL])):
            result = run([SCRIPT], stdin=text)
            self.assertEqual(result.returncode, 1, text)
            self.assertIn("FAILED, no kernel with LDGSTS copies in the input", result.stdout)

    def test_a_64_bit_write_covers_the_next_register_and_a_32_bit_one_does_not(self):
        wide = ("wide", ["ULDC.64 UR4, c[0x0][0x208]", "LDGSTS.E.128 [R2], desc[UR5][R4.64]"])
        narrow = ("narrow", ["UMOV UR4, 0x1", "LDGSTS.E.128 [R2], desc[UR5][R4.64]"])
        self.assertEqual(self.check([wide]).returncode, 0)
        result = self.check([narrow])
        self.assertEqual(result.returncode, 1)
        self.assertIn("UR[5]", result.stdout)

    def test_a_write_in_another_kernel_does_not_count(self):
        writer = ("writer", ["ULDC.64 UR6, c[0x0][0x208]", "LDGSTS.E.128 [R2], desc[UR6][R4.64]"])
        reader = ("reader", ["LDGSTS.E.128 [R2], desc[UR6][R4.64]"])
        result = self.check([writer, reader])
        self.assertEqual(result.returncode, 1)
        self.assertIn("in reader", result.stdout)
        self.assertNotIn("in writer", result.stdout)

    def test_files_are_read_through_cuobjdump(self):
        with tempfile.TemporaryDirectory() as folder:
            cuobjdump = write_executable(Path(folder) / "cuobjdump", FAKE_CUOBJDUMP)
            clean, faulting = Path(folder) / "clean.a", Path(folder) / "faulting.a"
            clean.write_text(sass_listing([CLEAN_KERNEL]))
            faulting.write_text(sass_listing([FAULTING_KERNEL]))
            result = run([SCRIPT, "--cuobjdump", cuobjdump, clean])
            self.assertEqual(result.returncode, 0, result.stdout)
            self.assertIn(f"1 kernels with LDGSTS copies in {clean}, 0 reading", result.stdout)
            result = run([SCRIPT, "--cuobjdump", cuobjdump, clean, faulting])
            self.assertEqual(result.returncode, 1, result.stdout)
            self.assertIn("in faulting_kernel", result.stdout)

    def test_cuobjdump_is_found_on_path(self):
        with tempfile.TemporaryDirectory() as folder:
            write_executable(Path(folder) / "cuobjdump", FAKE_CUOBJDUMP)
            library = Path(folder) / "library.a"
            library.write_text(sass_listing([CLEAN_KERNEL]))
            result = run([SCRIPT, library], env={"PATH": f"{folder}:/bin:/usr/bin"})
            self.assertEqual(result.returncode, 0, result.stdout)

    def test_a_failing_cuobjdump_is_an_error_naming_the_file(self):
        with tempfile.TemporaryDirectory() as folder:
            cuobjdump = write_executable(Path(folder) / "cuobjdump", FAKE_CUOBJDUMP)
            missing = Path(folder) / "missing.a"
            result = run([SCRIPT, "--cuobjdump", cuobjdump, missing])
            self.assertEqual(result.returncode, 2)
            self.assertIn(f"cuobjdump -sass {missing} failed (exit 1)", result.stdout)

    def test_a_missing_cuobjdump_skips_with_the_reason(self):
        with tempfile.TemporaryDirectory() as folder:
            result = run([SCRIPT, "--cuobjdump", Path(folder) / "cuobjdump", "library.a"])
            self.assertEqual(result.returncode, 77)
            self.assertIn(f"cuobjdump not found: {Path(folder) / 'cuobjdump'}", result.stdout)
            result = run([SCRIPT, "library.a"], env={"PATH": folder})
            self.assertEqual(result.returncode, 77)
            self.assertIn("cuobjdump not found: none on PATH", result.stdout)


if __name__ == "__main__":
    unittest.main()
