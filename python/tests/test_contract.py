# The bridge's contract: what a kernel declares and what it may return, and the errors naming what is wrong.
import ctypes

import numpy as np
import pytest

import pacheck
from attention_kernels import CAPABILITIES, ERROR_MODEL, reference_kernel
from pacheck import _pacheck


# Bad declarations (capabilities, error models, names, properties, arguments) raise errors naming what is wrong.

def declare(capabilities=CAPABILITIES, error_model=ERROR_MODEL, name="kernel", kernel=reference_kernel, cases=1,
            **options):
    return pacheck.check(kernel, name=name, capabilities=capabilities, error_model=error_model, cases=cases, **options)


def with_capability(**changes):
    return {**CAPABILITIES, **changes}


def without(key):
    return {k: v for k, v in CAPABILITIES.items() if k != key}


@pytest.mark.parametrize("capabilities, error, message", [
    (with_capability(dtypes=["fp32", "fp8"]), ValueError,
     r"capabilities\['dtypes'\]: unknown dtype 'fp8'; dtypes: fp32 \(float32\), fp16 \(float16\), bf16"),
    (with_capability(modes=["decode", "chunked"]), ValueError,
     r"capabilities\['modes'\]: unknown value 'chunked'; known: decode, prefill, continuation"),
    (with_capability(dtypes=[]), ValueError, r"capabilities\['dtypes'\] is empty"),
    (without("modes"), ValueError, "'modes' is missing"),
    (without("max_head_dim"), ValueError, "give 'max_head_dim' or 'head_dims'"),
    (with_capability(max_head_dim=512), ValueError, "max_head_dim must lie in 1..256, got 512"),
    (with_capability(head_dims=[64, 300]), ValueError, r"head dims lie in 1..256, got 300"),
    (with_capability(max_head_dim=64, head_dims=[64, 128]), ValueError, "holds 128, beyond max_head_dim 64"),
    (with_capability(block_sizes=[16, 0]), ValueError, "block sizes must be positive, got 0"),
    (with_capability(gqa_ratios=[-2]), ValueError, "GQA ratios must be positive, got -2"),
    (with_capability(deterministic="yes"), TypeError, r"capabilities\['deterministic'\] must be True or False"),
    (with_capability(max_head_dim=64.0), TypeError, r"capabilities\['max_head_dim'\] must be an int, got float"),
    (with_capability(speed="fast"), ValueError, "capabilities: unknown key 'speed'; keys: dtypes, modes"),
    (["fp32"], TypeError, "capabilities must be a dict, got list"),
])
def test_bad_capabilities(capabilities, error, message):
    with pytest.raises(error, match=message):
        declare(capabilities=capabilities)


@pytest.mark.parametrize("error_model, error, message", [
    ("fp32_online", ValueError,
     "unknown stock model 'fp32_online'; stock models: fp32_online_softmax, fp32_split_k, bf16_tensor_cores, "
     "fp16_tensor_cores"),
    ({"logit_constant": -1.0}, ValueError, "logit_constant"),
    ({"chain_per_key": float("nan")}, ValueError, "chain_per_key"),
    ({"accumulator_unit_roundoff": 2.0}, ValueError, "accumulator_unit_roundoff"),
    ({"absolute_error_per_v_scale": -1.0}, ValueError, "absolute_error_per_v_scale must be finite and non-negative"),
    ({"soft_cap_logit_constant": float("inf")}, ValueError, "soft_cap_logit_constant must be finite and non-negative"),
    ({"chain_per_kye": 1.0}, ValueError, "error_model: unknown key 'chain_per_kye'; keys: logit_constant"),
    ({"weight_constant": "4"}, TypeError, r"error_model\['weight_constant'\] must be a number, got str"),
    ({"weight_constant": True}, TypeError, "must be a number, got bool"),
    (3, TypeError, "error_model must be a stock model's name or a dict of coefficients, got int"),
])
def test_bad_error_models(error_model, error, message):
    with pytest.raises(error, match=message):
        declare(error_model=error_model)


# fp32_online_softmax's own coefficients, spelled out, with room to spare on the chain.
COEFFICIENTS = {"logit_constant": 2, "logit_per_head_dim": 1, "weight_constant": 4, "weight_per_record": 4,
                "chain_constant": 4, "chain_per_key": 1, "chain_per_record": 1}


def test_explicit_coefficients_are_a_model(tmp_path):
    results = declare(error_model=COEFFICIENTS, properties=["UlpBoundedAgreement"], failure_dir=tmp_path)
    assert results[0].property == "UlpBoundedAgreement"


def test_a_model_too_tight_for_the_kernel_fails_it(tmp_path):
    with pytest.raises(pacheck.PropertyFailure):
        declare(name="tight", error_model=dict.fromkeys(COEFFICIENTS, 0), properties=["UlpBoundedAgreement"],
                cases=100, failure_dir=tmp_path)


@pytest.mark.parametrize("arguments, error, message", [
    (dict(name=""), ValueError, "the name is empty"),
    (dict(name="my kernel"), ValueError, "the name may hold only letters, digits"),
    (dict(name="k" * 65), ValueError, "longer than 64 characters"),
    (dict(kernel=42), TypeError, "kernel must be callable"),
    (dict(properties=["Ulp"]), ValueError, "unknown property 'Ulp'; properties: UlpBoundedAgreement"),
    (dict(properties=[]), ValueError, "properties is empty"),
    (dict(cases=0), ValueError, "cases must lie in 1.."),
    (dict(seed=-1), ValueError, "seed must lie in 0.."),
    (dict(cases=1.5), TypeError, "cases must be an int"),
    (dict(properties=["Determinism"], reproduce="not base64!"), ValueError, "not a RapidCheck reproduce string"),
])
def test_bad_names_properties_and_run_arguments(arguments, error, message):
    with pytest.raises(error, match=message):
        declare(**arguments)


def test_an_inapplicable_property_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(ValueError, match="property SplitSizeInvariance does not apply to kernel 'kernel'"):
        declare(properties=["UlpBoundedAgreement", "SplitSizeInvariance"], failure_dir=tmp_path)
    assert not list(tmp_path.iterdir())  # nothing ran before the second name was refused


def test_applicable_properties_follow_the_capabilities():
    everything = [name for name, _ in pacheck.properties()]
    assert len(everything) == 14
    every_option = ["soft_cap", "window", "alibi_slopes", "sinks"]
    assert pacheck.applicable_properties(with_capability(uses_splits=True, logit_options=every_option)) == everything
    # The three laws of the logit options apply only to a kernel that takes the option each is about.
    plain = pacheck.applicable_properties(with_capability(uses_splits=True))
    assert set(everything) - set(plain) == {"WindowedOutKeysZeroWeight", "LargeSoftCapIsNoCap",
                                            "MinusInfinitySinkIsNoSink"}
    narrow = pacheck.applicable_properties(with_capability(deterministic=False, batch_invariant=False,
                                                           gqa_ratios=[4]))
    assert not {"Determinism", "BatchIsolation", "GqaEquivalence", "SplitSizeInvariance"} & set(narrow)
    assert "UlpBoundedAgreement" in narrow


# What a kernel may return (numpy, any strides, fp16, DLPack-only arrays, bf16) and the contract errors for the rest.

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class Bfloat16Array:
    """A host array of bf16 values that only DLPack reads, as pacheck reads a torch bfloat16 tensor."""

    def __init__(self, bits):
        self._bits = np.ascontiguousarray(bits, dtype=np.uint16)
        self._shape = (ctypes.c_int64 * self._bits.ndim)(*self._bits.shape)
        self._managed = _DLManagedTensor()
        tensor = self._managed.dl_tensor
        tensor.data = self._bits.ctypes.data
        tensor.device = _DLDevice(1, 0)
        tensor.ndim = self._bits.ndim
        tensor.dtype = _DLDataType(4, 16, 1)  # kDLBfloat, 16 bits, one lane
        tensor.shape = self._shape

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **_):
        return _capsule_new(ctypes.addressof(self._managed), b"dltensor", None)


class DLPackOnly:
    """Forwards DLPack to a numpy array and offers nothing else (no buffer protocol, no __array__)."""

    def __init__(self, array):
        self._array = array

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)


def problem(dtype="fp32"):
    return pacheck.make_problem(dtype=dtype, num_kv_heads=2, gqa_ratio=2, head_dim=8, block_size=4,
                                sequences=[(6, 1), (9, 2)], seed=11)


def read(kernel, p):
    """The kernel's output on `p` as pacheck reads it."""
    return _pacheck.DeclaredKernel(kernel, "kernel", CAPABILITIES, ERROR_MODEL).run(p)


def transposed(out):
    """The same values in other strides."""
    strided = np.ascontiguousarray(out.transpose(2, 0, 1)).transpose(1, 2, 0)
    assert not strided.flags.c_contiguous
    return strided


def every_other(out):
    """The same values at every other element of a wider array."""
    wide = np.zeros(out.shape[:2] + (2 * out.shape[2],), np.float32)
    wide[..., ::2] = out
    return wide[..., ::2]


def nested_list(out):
    return np.array([[[np.float32(x) for x in head] for head in row] for row in out], dtype=np.float32)


def bf16_bits(out):
    """bf16 values held as float32, as an array of bf16 that only DLPack reads."""
    return Bfloat16Array((out.view(np.uint32) >> 16).astype(np.uint16))


# Each returned form of the reference kernel's output is read exactly, element by element, into float32.
@pytest.mark.parametrize("dtype, returned", [
    ("fp32", lambda out: out), ("fp32", transposed), ("fp32", every_other), ("fp32", nested_list),
    ("fp32", DLPackOnly), ("fp16", lambda out: out), ("bf16", bf16_bits),
], ids=["float32", "transposed", "every_other", "nested_list", "dlpack_only", "float16", "bfloat16_dlpack"])
def test_an_output_is_read_exactly(dtype, returned):
    p = problem(dtype)
    out = reference_kernel(p)  # float16 for fp16; float32 (holding bf16 values for bf16) otherwise
    assert out.dtype == (np.float16 if dtype == "fp16" else np.float32)
    got = read(lambda q: returned(out), p)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, out.astype(np.float32))


def test_a_kernel_returning_a_dlpack_only_array_passes_the_check(tmp_path):
    results = declare(kernel=lambda q: DLPackOnly(reference_kernel(q)), name="dlpack_only",
                      properties="UlpBoundedAgreement", cases=30, failure_dir=tmp_path)
    assert results[0].cases == 30


@pytest.mark.parametrize("returned, message", [
    (lambda p: np.zeros((p.total_queries, p.num_query_heads), np.float32),
     r"returned an array of shape \(\d+, \d+\); the output must be \[total_queries, num_query_heads, head_dim\] = "
     r"\[\d+, \d+, \d+\]"),
    (lambda p: np.zeros((p.total_queries, p.num_query_heads, p.head_dim + 1), np.float32),
     r"shape \((\d+), (\d+), \d+\); the output must be .* = \[\1, \2, \d+\]"),
    (lambda p: reference_kernel(p).astype(np.float64), "returned float64 values; the output must be float32"),
    (lambda p: reference_kernel(p).astype(np.int32), "returned int32 values"),
    (lambda p: reference_kernel(p).tolist(), "returned float64 values"),
    (lambda p: None, "returned a NoneType that pacheck cannot read as an array"),
    (lambda p: "output", "returned a str"),
])
def test_a_bad_output_is_a_contract_error_naming_what_is_wrong(returned, message, tmp_path):
    with pytest.raises(pacheck.KernelContractError, match=message):
        read(returned, problem())
    with pytest.raises(pacheck.KernelContractError, match=message):
        declare(kernel=returned, name="bad", properties=["SingleKeyReturnsItsValue"], cases=100, failure_dir=tmp_path)
    assert issubclass(pacheck.KernelContractError, ValueError)


def test_a_kernel_that_keeps_a_view_of_its_problem_is_stopped(tmp_path):
    kept = []

    def keeper(p):
        kept.append(p)
        return reference_kernel(p)

    with pytest.raises(pacheck.KernelContractError, match="kept a reference to its problem"):
        declare(kernel=keeper, name="keeper", cases=100, failure_dir=tmp_path)
    assert len(kept) == 1  # stopped at the first call
    with pytest.raises(RuntimeError, match="lent to a kernel for one call"):
        kept[0].k_pool
    assert "released" in repr(kept[0])


def test_a_kernel_may_return_a_copy_of_its_problem_queries():
    p = problem()
    # Not attention, but a legal return: the queries' shape is the output's, and the copy leaves the loan alone.
    np.testing.assert_array_equal(read(lambda q: np.array(q.queries), p), p.queries)
    # Returning the view itself is legal too: pacheck reads it before the loan ends.
    np.testing.assert_array_equal(read(lambda q: q.queries, p), p.queries)
