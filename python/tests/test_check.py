# pacheck.check, pacheck.replay and the pytest helper: correct kernels pass, planted bugs fail with a replay line.
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import pacheck
from attention_kernels import (CAPABILITIES, ERROR_MODEL, mask_off_by_one_kernel, reference_kernel,
                               unrescaled_accumulator_kernel)


# pacheck.check and pacheck.replay: a correct kernel passes, planted bugs fail with a shrunk case and a replay line.

def test_the_reference_kernel_passes_every_applicable_property(tmp_path):
    results = pacheck.check(reference_kernel, name="reference", capabilities=CAPABILITIES, error_model=ERROR_MODEL,
                            cases=60, failure_dir=tmp_path)
    assert [r.property for r in results] == pacheck.applicable_properties(CAPABILITIES)
    assert all(r.cases == 60 for r in results)
    assert "SplitSizeInvariance" not in [r.property for r in results]  # it does not declare uses_splits
    assert not list(tmp_path.iterdir())


def fail(kernel, tmp_path, property="UlpBoundedAgreement", cases=200):
    with pytest.raises(pacheck.PropertyFailure) as caught:
        pacheck.check(kernel, name=kernel.__name__, capabilities=CAPABILITIES, error_model=ERROR_MODEL,
                      properties=[property], cases=cases, failure_dir=tmp_path)
    return caught.value


@pytest.mark.parametrize("kernel", [mask_off_by_one_kernel, unrescaled_accumulator_kernel])
def test_a_planted_bug_fails_with_a_shrunk_case_a_replay_line_and_a_reproduce_string(kernel, tmp_path):
    failure = fail(kernel, tmp_path / "first")
    assert failure.property == "UlpBoundedAgreement"
    assert failure.kernel == kernel.__name__
    assert failure.case_file == os.path.join(str(tmp_path / "first"), f"UlpBoundedAgreement-{kernel.__name__}.json")
    assert os.path.exists(failure.case_file)
    # Shrunk: one sequence of a few keys, one head of dimension 1; the mask bug to a two-token prefill.
    problem = failure.problem
    assert problem.num_sequences == 1 and problem.max_context_len <= 4
    assert problem.num_query_heads == 1 and problem.head_dim == 1
    if kernel is mask_off_by_one_kernel:
        assert problem.modes == ["prefill"] and problem.total_queries == 2
    worst = failure.worst
    assert worst.error > worst.bound and worst.violations >= 1 and worst.ulps > 1
    assert worst.got == pytest.approx(float(kernel(problem).reshape(-1)[worst.element]))
    assert failure.replay == (f"pacheck.replay({failure.case_file!r}, {kernel.__name__}, name={kernel.__name__!r}, "
                              f"error_model={ERROR_MODEL!r})")
    assert f"replay: {failure.replay}" in str(failure)
    assert "pacheck replay " not in str(failure)  # the command-line replay cannot run a Python kernel
    assert failure.reproduce and failure.kernel_exception is None

    # The replay line and pacheck.replay raise the same failure, and the fixed kernel passes the case.
    with pytest.raises(pacheck.PropertyFailure) as again:
        eval(failure.replay, {"pacheck": pacheck, kernel.__name__: kernel})
    assert again.value.worst == failure.worst
    with pytest.raises(pacheck.PropertyFailure) as again:
        pacheck.replay(failure.case_file, kernel, error_model=ERROR_MODEL)
    assert again.value.worst == failure.worst
    assert again.value.case_file == failure.case_file
    assert f"UlpBoundedAgreement failed on {kernel.__name__}" in str(again.value)  # the case's note
    fixed = pacheck.replay(failure.case_file, reference_kernel, error_model=ERROR_MODEL)
    assert fixed.worst.error <= fixed.worst.bound and fixed.fits_fp32
    assert fixed.problem.describe() == failure.problem.describe()

    # The reproduce string re-runs exactly the failing case.
    with pytest.raises(pacheck.PropertyFailure) as again:
        pacheck.check(kernel, name=kernel.__name__, capabilities=CAPABILITIES, error_model=ERROR_MODEL,
                      properties=["UlpBoundedAgreement"], failure_dir=tmp_path / "second", reproduce=failure.reproduce)
    assert again.value.problem.describe() == failure.problem.describe()
    assert again.value.worst == failure.worst


def test_a_bit_identity_failure_names_the_first_difference_and_has_no_worst_element(tmp_path):
    def batch_dependent(problem):
        out = reference_kernel(problem)
        if problem.num_sequences > 1:  # a batch's first row comes out one ulp off
            out[0, 0, 0] = np.nextafter(out[0, 0, 0], np.float32(np.inf))
        return out

    failure = fail(batch_dependent, tmp_path, property="BatchIsolation")
    assert failure.worst is None
    assert "first difference: seq 0 token 0" in failure.message
    assert failure.problem is not None and failure.replay.startswith("pacheck.replay(")


def test_a_kernel_that_raises_fails_with_its_traceback_and_the_shrunk_case(tmp_path):
    def narrow_kernel(problem):
        if problem.head_dim > 40:
            raise ValueError(f"head_dim {problem.head_dim} is beyond this kernel")
        return reference_kernel(problem)

    failure = fail(narrow_kernel, tmp_path, cases=300)
    assert "ValueError: head_dim 64 is beyond this kernel" in failure.kernel_exception
    assert "in narrow_kernel" in failure.kernel_exception
    assert failure.problem.head_dim == 64  # the smallest drawn head dim past 40
    assert failure.worst is None and os.path.exists(failure.case_file)
    with pytest.raises(pacheck.PropertyFailure) as again:
        pacheck.replay(failure.case_file, narrow_kernel, error_model=ERROR_MODEL)
    assert "ValueError: head_dim 64" in again.value.kernel_exception


def test_check_stops_at_the_first_failing_property(tmp_path):
    # Both properties fail for this kernel; had the second run, it would have saved a case too.
    with pytest.raises(pacheck.PropertyFailure) as caught:
        pacheck.check(unrescaled_accumulator_kernel, name="unrescaled", capabilities=CAPABILITIES,
                      error_model=ERROR_MODEL, properties=["UlpBoundedAgreement", "TileSizeInvariance"],
                      failure_dir=tmp_path)
    assert caught.value.property == "UlpBoundedAgreement"
    assert [p.name for p in tmp_path.iterdir()] == ["UlpBoundedAgreement-unrescaled.json"]


def test_an_interrupt_in_the_kernel_stops_the_check_at_once(tmp_path):
    calls = []

    def interrupted(problem):
        calls.append(1)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pacheck.check(interrupted, name="interrupted", capabilities=CAPABILITIES, error_model=ERROR_MODEL,
                      failure_dir=tmp_path)
    assert len(calls) == 1


# pacheck.pytest.property_tests: each applicable property becomes its own pytest test, run here in a child pytest.

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
