# pacheck.pytest.property_tests: each applicable property becomes its own pytest test, run here in a child pytest.
import os
import pathlib
import re
import subprocess
import sys

import pacheck
from attention_kernels import CAPABILITIES

TESTS = pathlib.Path(__file__).resolve().parent


def run_pytest(tmp_path, source: str):
    """Runs pytest on a test module holding `source`, importing the kernels of this folder; returns its output."""
    (tmp_path / "test_generated.py").write_text(source)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH")]))
    completed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                                "test_generated.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=600)
    return completed.stdout + completed.stderr


def summary(output: str) -> dict:
    """{'passed': n, 'failed': n, 'error': n} from pytest's last line."""
    counts = {"passed": 0, "failed": 0, "error": 0}
    for count, outcome in re.findall(r"(\d+) (passed|failed|errors?)", output.strip().splitlines()[-1]):
        counts["error" if outcome.startswith("error") else outcome] = int(count)
    return counts


def test_every_applicable_property_is_a_test_of_its_own(tmp_path):
    output = run_pytest(tmp_path, f"""
import pacheck.pytest
from attention_kernels import CAPABILITIES, ERROR_MODEL, reference_kernel, unrescaled_accumulator_kernel

test_reference = pacheck.pytest.property_tests(
    reference_kernel, name="reference", capabilities=CAPABILITIES, error_model=ERROR_MODEL, cases=20,
    failure_dir={str(tmp_path / "failures")!r})
test_unrescaled = pacheck.pytest.property_tests(
    unrescaled_accumulator_kernel, name="unrescaled", capabilities=CAPABILITIES, error_model=ERROR_MODEL,
    properties=["UlpBoundedAgreement", "Determinism"], cases=50, failure_dir={str(tmp_path / "failures")!r})
""")
    applicable = pacheck.applicable_properties(CAPABILITIES)
    assert summary(output) == {"passed": len(applicable) + 1, "failed": 1, "error": 0}, output
    for property in applicable:
        assert f"PASSED test_generated.py::test_reference[{property}]" in output
    assert "PASSED test_generated.py::test_unrescaled[Determinism]" in output
    assert "FAILED test_generated.py::test_unrescaled[UlpBoundedAgreement]" in output
    assert "PropertyFailure: UlpBoundedAgreement failed for kernel 'unrescaled'" in output
    assert "replay: pacheck.replay(" in output
    assert (tmp_path / "failures" / "UlpBoundedAgreement-unrescaled.json").exists()


def test_a_bad_declaration_is_a_collection_error_naming_it(tmp_path):
    output = run_pytest(tmp_path, """
import pacheck.pytest
from attention_kernels import reference_kernel

test_reference = pacheck.pytest.property_tests(
    reference_kernel, name="reference", capabilities={"dtypes": ["fp32"], "max_head_dim": 64},
    error_model="fp32_online_softmax")
""")
    assert summary(output)["error"] == 1, output
    assert "'modes' is missing" in output
