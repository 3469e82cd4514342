# The logit options and fp8 KV caches through the Python door: Problem exposes them, a kernel declares those it takes
# and sees them during its call, one that declares none never gets them, and cases with them catch a wrong kernel.
import sys

import numpy as np
import pytest

import pacheck
from attention_kernels import (ALL_OPTIONS, CAPABILITIES, ERROR_MODEL, EVERY_OPTION, WITH_FP8, WITH_OPTIONS,
                               alibi_sign_flipped_kernel, approximate_tanh_kernel, declare, fp8_v_scale_last_kernel,
                               fp8_v_scale_on_k_kernel, reference_kernel)


def with_options(dtype="fp32", **options):
    """Two sequences (a decode step and a continuation) over four query heads, GQA 2, with the given options."""
    return pacheck.make_problem(dtype=dtype, num_kv_heads=2, gqa_ratio=2, head_dim=8, block_size=4,
                                sequences=[(19, 1), (23, 9)], table_padding=1, seed=11, tile_size=5, **options)


def saved(tmp_path, problem, name="case.json"):
    """A case file holding `problem`."""
    path = tmp_path / name
    pacheck.save_case(str(path), problem)
    return path


def test_a_plain_problem_has_no_option_and_no_fp8_cache():
    p = with_options()
    assert (p.soft_cap, p.window, p.alibi_slopes, p.sinks) == (None, None, None, None)
    assert p.logit_options == []
    assert (p.kv_cache, p.k_scales, p.v_scales) == (None, None, None)
    assert p.k_pool_storage.dtype == np.float32


def test_the_options_are_read_only_properties_that_round_trip_through_a_case_file(tmp_path):
    p = with_options(**EVERY_OPTION)
    assert p.soft_cap == 2.5 and p.window == 6
    assert p.alibi_slopes.dtype == np.float32 and p.alibi_slopes.shape == (4,)
    np.testing.assert_array_equal(p.alibi_slopes, np.float32([0.5, 0.25, -0.125, 0.0]))
    np.testing.assert_array_equal(p.sinks, np.float32([-np.inf, 0.5, -1.0, 2.0]))
    assert p.logit_options == ALL_OPTIONS
    with pytest.raises(AttributeError):
        p.window = 3
    q = pacheck.load_case(str(saved(tmp_path, p)))
    assert (q.soft_cap, q.window, q.logit_options) == (2.5, 6, ALL_OPTIONS)
    np.testing.assert_array_equal(q.alibi_slopes, p.alibi_slopes)
    np.testing.assert_array_equal(q.sinks, p.sinks)
    assert "window=6" in q.describe()


@pytest.mark.parametrize("arguments, message", [
    (dict(window=0), "window must be at least 1"),
    (dict(soft_cap=-1.0), "soft_cap must be finite and positive"),
    (dict(alibi_slopes=[0.5, 0.25]), "alibi_slopes"),
    (dict(alibi_slopes=[]), "alibi_slopes is empty"),
    (dict(sinks=[0.0, float("nan"), 0.0, 0.0]), "sinks"),
    (dict(kv_cache="fp8_e4m4"), "unknown value 'fp8_e4m4'; known: fp8_e4m3, fp8_e5m2"),
    (dict(kv_cache="fp8_e4m3", fp8_scales="max"), "fp8_scales: unknown value 'max'"),
])
def test_make_problem_refuses_bad_options_and_fp8_caches_naming_them(arguments, message):
    with pytest.raises(ValueError, match=message):
        with_options(**arguments)


def test_a_kernel_that_declares_the_options_sees_them_during_its_call():
    seen = {}

    def kernel(problem):
        seen.update(soft_cap=problem.soft_cap, window=problem.window, alibi=np.array(problem.alibi_slopes),
                    sinks=np.array(problem.sinks), names=problem.logit_options)
        return reference_kernel(problem)

    p = with_options(**EVERY_OPTION)
    np.testing.assert_array_equal(declare(kernel, WITH_OPTIONS).run(p), reference_kernel(p))
    assert (seen["soft_cap"], seen["window"], seen["names"]) == (2.5, 6, ALL_OPTIONS)
    np.testing.assert_array_equal(seen["alibi"], p.alibi_slopes)
    np.testing.assert_array_equal(seen["sinks"], p.sinks)


def recording_kernel(field):
    """The reference kernel, and the list of problem.<field> of every call it gets."""
    calls = []

    def kernel(problem):
        calls.append(getattr(problem, field))
        return reference_kernel(problem)

    return kernel, calls


def assert_refused(p, key, others, refusal, tmp_path):
    """A kernel that declares no capabilities[key], or only `others`, is refused `p` (run and replay), uncalled."""
    kernel, calls = recording_kernel("dtype")
    for name, declared in [("declares_none", []), ("declares_the_others", others)]:
        capabilities = dict(CAPABILITIES, **{key: declared}) if declared else CAPABILITIES
        with pytest.raises(ValueError, match=f"{name} is not given this problem: {refusal}"):
            declare(kernel, capabilities, name).run(p)
        with pytest.raises(ValueError, match=refusal):
            pacheck.replay(saved(tmp_path, p), kernel, error_model=ERROR_MODEL, **{key: declared})
    assert calls == []


@pytest.mark.parametrize("option", ALL_OPTIONS)
def test_a_kernel_that_declares_no_option_is_never_given_one(option, tmp_path):
    others = [o for o in ALL_OPTIONS if o != option]
    assert_refused(with_options(**{option: EVERY_OPTION[option]}), "logit_options", others, f"{option} not supported",
                   tmp_path)


@pytest.mark.parametrize("key, declared, error, message", [
    ("logit_options", ["softcap"], ValueError,
     "unknown logit option 'softcap'; known: soft_cap, window, alibi_slopes, sinks"),
    ("logit_options", ["window", "window"], ValueError, "names 'window' twice"),
    ("logit_options", [1], TypeError, "must hold strings"),
    ("logit_options", {"window": True}, TypeError, "must be a string or a list of strings"),
    ("fp8_caches", ["fp8_e4m4"], ValueError, "unknown value 'fp8_e4m4'; known: fp8_e4m3, fp8_e5m2"),
    ("fp8_caches", ["fp8_e5m2", "float8_e5m2"], ValueError, "names fp8_e5m2 twice"),
    ("fp8_caches", [8], TypeError, "must hold strings"),
])
def test_a_declaration_naming_no_known_option_or_fp8_format_is_refused(key, declared, error, message):
    with pytest.raises(error, match=message):
        declare(reference_kernel, dict(CAPABILITIES, **{key: declared}))


# One option at a time, then all four, in each dtype: the reference passes the stock model with the options' costs.
CASES = [dict(soft_cap=1.5), dict(window=4), dict(window=1), dict(alibi_slopes=[0.5, 0.25, 0.125, 0.0625]),
         dict(sinks=[1.0, float("-inf"), -0.5, 3.0]), EVERY_OPTION]


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("options", CASES, ids=lambda o: "+".join(o))
def test_the_reference_kernel_passes_cases_with_options(dtype, options, tmp_path):
    result = pacheck.replay(saved(tmp_path, with_options(dtype, **options)), reference_kernel,
                            error_model=ERROR_MODEL, logit_options=list(options))
    assert result.worst.error <= result.worst.bound


def test_the_options_change_the_answer():
    plain = reference_kernel(with_options())
    for options in CASES:
        assert not np.array_equal(reference_kernel(with_options(**options)), plain), options


def test_an_approximate_tanh_holds_its_soft_cap_constant_which_counts_only_with_a_cap(tmp_path):
    # A tanh 2^-11 off in relative terms, within tanh.approx.f32's 2^-10.987: 2^13.013 u of the logit, with a cap only.
    capped, plain = saved(tmp_path, with_options(soft_cap=2.5), "capped.json"), saved(tmp_path, with_options())
    declared = {"soft_cap_logit_constant": 2 ** 13.013}
    pacheck.replay(capped, approximate_tanh_kernel, error_model=declared, logit_options=ALL_OPTIONS)
    with pytest.raises(pacheck.PropertyFailure, match="UlpBoundedAgreement"):
        pacheck.replay(capped, approximate_tanh_kernel, error_model={}, logit_options=ALL_OPTIONS)
    loose = pacheck.replay(plain, reference_kernel, error_model=declared, logit_options=ALL_OPTIONS)
    tight = pacheck.replay(plain, reference_kernel, error_model={}, logit_options=ALL_OPTIONS)
    assert loose.worst.bound == tight.worst.bound  # without a cap the constant adds nothing


def test_alibi_with_its_sign_flipped_is_caught_with_a_replay_line(tmp_path):
    path = saved(tmp_path, with_options(alibi_slopes=[0.5, 0.25, 0.125, 0.0625]))
    with pytest.raises(pacheck.PropertyFailure) as caught:
        pacheck.replay(path, alibi_sign_flipped_kernel, error_model=ERROR_MODEL, logit_options=["alibi_slopes"])
    failure = caught.value
    assert failure.worst is not None and failure.worst.error > failure.worst.bound
    assert "logit_options=['alibi_slopes']" in failure.replay


# --- fp8 KV caches ---

FORMATS = ["fp8_e4m3", "fp8_e5m2"]
SCALES = ["amax", "amax-per-head", "power-of-two", "underflowing"]


def with_fp8(kv_cache="fp8_e4m3", fp8_scales="amax-per-head", dtype="fp32", **options):
    return with_options(dtype, kv_cache=kv_cache, fp8_scales=fp8_scales, **options)


def fp8_values(bits, kv_cache):
    """The values of fp8 bit patterns, decoded here independently of pacheck (OCP FP8: e4m3 bias 7, no infinities,
    NaN at S.1111.111; e5m2 bias 15, IEEE specials)."""
    mantissa_bits, bias = (3, 7) if kv_cache == "fp8_e4m3" else (2, 15)
    bits = bits.astype(np.int64)
    exponent, mantissa = (bits & 0x7F) >> mantissa_bits, bits & ((1 << mantissa_bits) - 1)
    normal = np.ldexp(((1 << mantissa_bits) + mantissa).astype(np.float64), exponent - bias - mantissa_bits)
    subnormal = np.ldexp(mantissa.astype(np.float64), 1 - bias - mantissa_bits)
    magnitude = np.where(exponent == 0, subnormal, normal)
    return np.where(bits & 0x80, -magnitude, magnitude).astype(np.float32)


@pytest.mark.parametrize("kv_cache", FORMATS)
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_the_fp8_pools_are_zero_copy_uint8_views_of_the_exact_values(kv_cache, dtype):
    p = with_fp8(kv_cache, dtype=dtype)
    assert p.kv_cache == kv_cache and p.dtype == dtype
    assert p.k_scales.dtype == np.float32 and p.k_scales.shape == (p.num_kv_heads,)
    assert p.v_scales.shape == (p.num_kv_heads,) and not np.array_equal(p.k_scales, p.v_scales)
    for storage, values in [(p.k_pool_storage, p.k_pool), (p.v_pool_storage, p.v_pool)]:
        assert storage.dtype == np.uint8 and storage.shape == values.shape
        np.testing.assert_array_equal(fp8_values(storage, kv_cache), values)
    # One buffer per problem object: a second read is a view of the same bytes, and DLPack exports it.
    assert np.shares_memory(p.k_pool_storage, p.k_pool_storage)
    assert not np.shares_memory(p.k_pool_storage, p.v_pool_storage)
    np.testing.assert_array_equal(np.from_dlpack(p.v_pool_storage), p.v_pool_storage)
    assert p.queries_storage.dtype == (np.float32 if dtype == "fp32" else np.uint16)  # the queries keep the dtype


def test_a_per_tensor_cache_has_one_scale_each_and_round_trips_through_a_case_file(tmp_path):
    p = with_fp8("fp8_e5m2", "amax")
    assert p.k_scales.shape == (1,) and p.v_scales.shape == (1,)
    q = pacheck.load_case(str(saved(tmp_path, p)))
    assert q.kv_cache == "fp8_e5m2"
    np.testing.assert_array_equal(q.k_scales, p.k_scales)
    np.testing.assert_array_equal(q.v_scales, p.v_scales)
    np.testing.assert_array_equal(q.k_pool_storage, p.k_pool_storage)
    assert "kv_cache=fp8_e5m2" in q.describe()


def test_a_kernel_takes_an_fp8_cache_only_with_the_query_dtypes_and_head_dims_it_declares():
    kernel, calls = recording_kernel("kv_cache")
    p = with_fp8("fp8_e4m3", dtype="fp32")
    refusal = f"kv_cache fp8_e4m3 with dtype fp32 and head_dim {p.head_dim} not supported"
    for declared in [dict(fp8_query_dtypes=["bf16"]), dict(fp8_head_dim_multiple=p.head_dim + 1)]:
        with pytest.raises(ValueError, match=refusal):
            declare(kernel, dict(WITH_FP8, **declared)).run(p)
    assert calls == []
    declare(kernel, dict(WITH_FP8, fp8_query_dtypes=["fp32"], fp8_head_dim_multiple=p.head_dim)).run(p)
    assert calls == ["fp8_e4m3"]
    with pytest.raises(ValueError, match=r"capabilities\['fp8_head_dim_multiple'\] must be at least 1, got 0"):
        declare(kernel, dict(WITH_FP8, fp8_head_dim_multiple=0))


@pytest.mark.parametrize("kv_cache", FORMATS)
def test_a_kernel_is_never_given_an_fp8_format_it_does_not_declare(kv_cache, tmp_path):
    p = with_fp8(kv_cache)
    assert_refused(p, "fp8_caches", [f for f in FORMATS if f != kv_cache], f"kv_cache {kv_cache} not supported",
                   tmp_path)
    kernel, calls = recording_kernel("kv_cache")
    torch_name = "float8_e4m3fn" if kv_cache == "fp8_e4m3" else "float8_e5m2"  # torch's names declare it too
    np.testing.assert_array_equal(declare(kernel, dict(CAPABILITIES, fp8_caches=[torch_name])).run(p),
                                  reference_kernel(p))
    assert calls == [kv_cache]


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("fp8_scales", SCALES)
@pytest.mark.parametrize("kv_cache", FORMATS)
def test_the_reference_kernel_passes_fp8_caches(kv_cache, fp8_scales, dtype, tmp_path):
    result = pacheck.replay(saved(tmp_path, with_fp8(kv_cache, fp8_scales, dtype, **EVERY_OPTION)), reference_kernel,
                            error_model=ERROR_MODEL, logit_options=ALL_OPTIONS, fp8_caches=[kv_cache])
    assert result.worst.error <= result.worst.bound


def test_the_reference_kernel_passes_the_catalogue_with_fp8_caches(tmp_path):
    results = pacheck.check(reference_kernel, name="reference_fp8", capabilities=WITH_FP8, error_model=ERROR_MODEL,
                            cases=60, failure_dir=tmp_path)
    assert [r.property for r in results] == pacheck.applicable_properties(WITH_FP8)
    assert not list(tmp_path.iterdir())


def test_a_k_scaled_by_the_v_scale_fails_with_a_shrunk_fp8_case_and_a_replay_line(tmp_path):
    with pytest.raises(pacheck.PropertyFailure) as caught:
        pacheck.check(fp8_v_scale_on_k_kernel, name="v_scale_on_k", capabilities=WITH_FP8, error_model=ERROR_MODEL,
                      properties=["UlpBoundedAgreement"], cases=300, failure_dir=tmp_path)
    failure = caught.value
    problem = failure.problem
    assert problem.kv_cache in FORMATS  # only an fp8 cache shows the bug
    assert not np.array_equal(problem.k_scales, problem.v_scales)
    # Shrunk: one sequence of one head of dimension 1 (a sink may stay: it makes a single key's logit matter).
    assert problem.num_sequences == 1 and problem.num_query_heads == 1 and problem.head_dim == 1
    assert failure.worst.error > failure.worst.bound
    assert "fp8_caches=['fp8_e4m3', 'fp8_e5m2']" in failure.replay
    pacheck.replay(failure.case_file, reference_kernel, error_model=ERROR_MODEL, logit_options=ALL_OPTIONS,
                   fp8_caches=FORMATS)  # the fix passes


# A kernel that scales V last rounds its fp16 output before the V scale: fp32_online_softmax's coefficients (the keys
# left out), plus that rounding (2^13 u on every term) and its subnormal floor, half of 2^-24 in the stored values'
# units, times the scale.
V_SCALE_LAST = {"chain_constant": 3 + 2 ** 13, "absolute_error_per_v_scale": 2.0 ** -25}


def test_a_kernel_that_scales_v_last_needs_its_loss_per_v_scale_and_holds_the_laws(tmp_path):
    # e5m2 values at most its smallest normal, 2^-14: the output before the V scale lies in fp16's subnormal range.
    path = saved(tmp_path, with_fp8("fp8_e5m2", "underflowing", "fp16"))
    result = pacheck.replay(path, fp8_v_scale_last_kernel, error_model=V_SCALE_LAST, fp8_caches=FORMATS)
    assert result.worst.error <= result.worst.bound
    with pytest.raises(pacheck.PropertyFailure, match="UlpBoundedAgreement"):
        pacheck.replay(path, fp8_v_scale_last_kernel, error_model=dict(V_SCALE_LAST, absolute_error_per_v_scale=0),
                       fp8_caches=FORMATS)
    # The exact laws hold too: PowerOfTwoValueScaling leaves out outputs that are subnormal in either units.
    declared = dict(CAPABILITIES, dtypes=["fp16"], fp8_caches=FORMATS)
    results = pacheck.check(fp8_v_scale_last_kernel, name="v_scale_last", capabilities=declared,
                            error_model=V_SCALE_LAST, cases=150, failure_dir=tmp_path / "failures")
    assert [r.property for r in results] == pacheck.applicable_properties(declared)


def test_torch_float8_needs_torch_only_when_called(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # torch unimportable, whether or not it is installed
    p = with_fp8()
    with pytest.raises(ImportError, match="need torch"):
        pacheck.torch_float8(p.k_pool_storage, p.kv_cache)
    assert reference_kernel(p).shape == p.queries.shape  # a numpy kernel reads the cache without it
