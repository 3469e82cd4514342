# The logit options through the Python door: Problem exposes them, a kernel declares those it computes and sees them
# during its call, one that declares none is never given them, and cases with options catch a wrong kernel.
import numpy as np
import pytest

import pacheck
from attention_kernels import (CAPABILITIES, ERROR_MODEL, WITH_OPTIONS, alibi_sign_flipped_kernel,
                               reference_kernel)

ALL_OPTIONS = ["soft_cap", "window", "alibi_slopes", "sinks"]


def with_options(dtype="fp32", **options):
    """Two sequences (a decode step and a continuation) over four query heads, GQA 2, with the given options."""
    return pacheck.make_problem(dtype=dtype, num_kv_heads=2, gqa_ratio=2, head_dim=8, block_size=4,
                                sequences=[(19, 1), (23, 9)], table_padding=1, seed=11, tile_size=5, **options)


EVERY_OPTION = dict(soft_cap=2.5, window=6, alibi_slopes=[0.5, 0.25, -0.125, 0.0], sinks=[float("-inf"), 0.5, -1.0, 2.0])


def test_a_problem_without_options_has_none():
    p = with_options()
    assert (p.soft_cap, p.window, p.alibi_slopes, p.sinks) == (None, None, None, None)
    assert p.logit_options == []


def test_the_options_are_read_only_properties_that_round_trip_through_a_case_file(tmp_path):
    p = with_options(**EVERY_OPTION)
    assert p.soft_cap == 2.5 and p.window == 6
    assert p.alibi_slopes.dtype == np.float32 and p.alibi_slopes.shape == (4,)
    np.testing.assert_array_equal(p.alibi_slopes, np.float32([0.5, 0.25, -0.125, 0.0]))
    np.testing.assert_array_equal(p.sinks, np.float32([-np.inf, 0.5, -1.0, 2.0]))
    assert p.logit_options == ALL_OPTIONS
    with pytest.raises(AttributeError):
        p.window = 3
    path = tmp_path / "options.json"
    pacheck.save_case(str(path), p)
    q = pacheck.load_case(str(path))
    assert (q.soft_cap, q.window, q.logit_options) == (2.5, 6, ALL_OPTIONS)
    np.testing.assert_array_equal(q.alibi_slopes, p.alibi_slopes)
    np.testing.assert_array_equal(q.sinks, p.sinks)
    assert "window=6" in q.describe()


@pytest.mark.parametrize("options, message", [
    (dict(window=0), "window must be at least 1"),
    (dict(soft_cap=-1.0), "soft_cap must be finite and positive"),
    (dict(alibi_slopes=[0.5, 0.25]), "alibi_slopes"),
    (dict(alibi_slopes=[]), "alibi_slopes is empty"),
    (dict(sinks=[0.0, float("nan"), 0.0, 0.0]), "sinks"),
])
def test_make_problem_refuses_bad_options_naming_them(options, message):
    with pytest.raises(ValueError, match=message):
        with_options(**options)


def test_a_kernel_that_declares_the_options_sees_them_during_its_call():
    seen = {}

    def kernel(problem):
        seen.update(soft_cap=problem.soft_cap, window=problem.window, alibi=np.array(problem.alibi_slopes),
                    sinks=np.array(problem.sinks), names=problem.logit_options)
        return reference_kernel(problem)

    p = with_options(**EVERY_OPTION)
    declared = pacheck._pacheck.DeclaredKernel(kernel, "sees_options", WITH_OPTIONS, ERROR_MODEL)
    np.testing.assert_array_equal(declared.run(p), reference_kernel(p))
    assert (seen["soft_cap"], seen["window"], seen["names"]) == (2.5, 6, ALL_OPTIONS)
    np.testing.assert_array_equal(seen["alibi"], p.alibi_slopes)
    np.testing.assert_array_equal(seen["sinks"], p.sinks)


@pytest.mark.parametrize("option", ALL_OPTIONS)
def test_a_kernel_that_declares_no_option_is_never_given_one(option, tmp_path):
    calls = []

    def kernel(problem):
        calls.append(problem.logit_options)
        return reference_kernel(problem)

    p = with_options(**{option: EVERY_OPTION[option]})
    declared = pacheck._pacheck.DeclaredKernel(kernel, "declares_none", CAPABILITIES, ERROR_MODEL)
    with pytest.raises(ValueError, match=f"declares_none is not given this problem: {option} not supported"):
        declared.run(p)
    others = [o for o in ALL_OPTIONS if o != option]
    partial = pacheck._pacheck.DeclaredKernel(kernel, "declares_the_others", dict(CAPABILITIES, logit_options=others),
                                              ERROR_MODEL)
    with pytest.raises(ValueError, match=f"{option} not supported"):
        partial.run(p)
    path = tmp_path / "case.json"
    pacheck.save_case(str(path), p)
    with pytest.raises(ValueError, match=f"{option} not supported"):
        pacheck.replay(path, kernel, error_model=ERROR_MODEL)
    assert calls == []


@pytest.mark.parametrize("declared, error, message", [
    (["softcap"], ValueError, "unknown logit option 'softcap'; known: soft_cap, window, alibi_slopes, sinks"),
    (["window", "window"], ValueError, "names 'window' twice"),
    ([1], TypeError, "must hold strings"),
    ({"window": True}, TypeError, "must be a string or a list of strings"),
])
def test_a_declaration_naming_no_known_option_is_refused(declared, error, message):
    with pytest.raises(error, match=message):
        pacheck._pacheck.DeclaredKernel(reference_kernel, "bad", dict(CAPABILITIES, logit_options=declared),
                                        ERROR_MODEL)


# One option at a time, then all four, in each dtype: the reference passes, within the stock model with the options'
# costs.
CASES = [dict(soft_cap=1.5), dict(window=4), dict(window=1), dict(alibi_slopes=[0.5, 0.25, 0.125, 0.0625]),
         dict(sinks=[1.0, float("-inf"), -0.5, 3.0]), EVERY_OPTION]


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("options", CASES, ids=lambda o: "+".join(o))
def test_the_reference_kernel_passes_cases_with_options(dtype, options, tmp_path):
    path = tmp_path / "case.json"
    pacheck.save_case(str(path), with_options(dtype, **options))
    result = pacheck.replay(path, reference_kernel, error_model=ERROR_MODEL, logit_options=list(options))
    assert result.worst.error <= result.worst.bound


def test_the_options_change_the_answer():
    plain = reference_kernel(with_options())
    for options in CASES:
        assert not np.array_equal(reference_kernel(with_options(**options)), plain), options


def test_alibi_with_its_sign_flipped_is_caught_with_a_replay_line(tmp_path):
    path = tmp_path / "alibi.json"
    pacheck.save_case(str(path), with_options(alibi_slopes=[0.5, 0.25, 0.125, 0.0625]))
    with pytest.raises(pacheck.PropertyFailure) as caught:
        pacheck.replay(path, alibi_sign_flipped_kernel, error_model=ERROR_MODEL, logit_options=["alibi_slopes"])
    failure = caught.value
    assert failure.worst is not None and failure.worst.error > failure.worst.bound
    assert "logit_options=['alibi_slopes']" in failure.replay
