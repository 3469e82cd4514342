# Bad declarations (capabilities, error models, names, properties, arguments) raise errors naming what is wrong.
import pytest

import pacheck
from attention_kernels import CAPABILITIES, ERROR_MODEL, reference_kernel


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
     "unknown stock model 'fp32_online'; stock models: fp32_online_softmax, fp32_split_k, bf16_tensor_cores"),
    ({"logit_constant": -1.0}, ValueError, "logit_constant"),
    ({"chain_per_key": float("nan")}, ValueError, "chain_per_key"),
    ({"accumulator_unit_roundoff": 2.0}, ValueError, "accumulator_unit_roundoff"),
    ({"chain_per_kye": 1.0}, ValueError, "error_model: unknown key 'chain_per_kye'; keys: logit_constant"),
    ({"weight_constant": "4"}, TypeError, r"error_model\['weight_constant'\] must be a number, got str"),
    ({"weight_constant": True}, TypeError, "must be a number, got bool"),
    (3, TypeError, "error_model must be a stock model's name or a dict of coefficients, got int"),
])
def test_bad_error_models(error_model, error, message):
    with pytest.raises(error, match=message):
        declare(error_model=error_model)


def test_explicit_coefficients_are_a_model(tmp_path):
    # fp32_online_softmax's own coefficients, spelled out, with room to spare on the chain.
    coefficients = {"logit_constant": 2, "logit_per_head_dim": 1, "weight_constant": 4, "weight_per_record": 4,
                    "chain_constant": 4, "chain_per_key": 1, "chain_per_record": 1}
    results = declare(error_model=coefficients, properties=["UlpBoundedAgreement"], failure_dir=tmp_path)
    assert results[0].property == "UlpBoundedAgreement"


def test_a_model_too_tight_for_the_kernel_fails_it(tmp_path):
    with pytest.raises(pacheck.PropertyFailure):
        pacheck.check(reference_kernel, name="tight", capabilities=CAPABILITIES, failure_dir=tmp_path,
                      error_model={"logit_constant": 0, "logit_per_head_dim": 0, "weight_constant": 0,
                                   "weight_per_record": 0, "chain_constant": 0, "chain_per_key": 0,
                                   "chain_per_record": 0}, properties=["UlpBoundedAgreement"])


@pytest.mark.parametrize("name, message", [
    ("", "the name is empty"),
    ("my kernel", "the name may hold only letters, digits"),
    ("k" * 65, "longer than 64 characters"),
])
def test_bad_names(name, message):
    with pytest.raises(ValueError, match=message):
        declare(name=name)


def test_the_kernel_must_be_callable():
    with pytest.raises(TypeError, match="kernel must be callable"):
        declare(kernel=42)


def test_unknown_and_inapplicable_properties(tmp_path):
    with pytest.raises(ValueError, match="unknown property 'Ulp'; properties: UlpBoundedAgreement"):
        declare(properties=["Ulp"])
    with pytest.raises(ValueError, match="property SplitSizeInvariance does not apply to kernel 'kernel'"):
        declare(properties=["UlpBoundedAgreement", "SplitSizeInvariance"], failure_dir=tmp_path)
    assert not list(tmp_path.iterdir())  # nothing ran before the second name was refused
    with pytest.raises(ValueError, match="properties is empty"):
        declare(properties=[])


def test_bad_run_arguments():
    with pytest.raises(ValueError, match="cases must lie in 1.."):
        declare(cases=0)
    with pytest.raises(ValueError, match="seed must lie in 0.."):
        declare(seed=-1)
    with pytest.raises(TypeError, match="cases must be an int"):
        declare(cases=1.5)
    with pytest.raises(ValueError, match="not a RapidCheck reproduce string"):
        declare(properties=["Determinism"], reproduce="not base64!")


def test_applicable_properties_follow_the_capabilities():
    everything = [name for name, _ in pacheck.properties()]
    assert len(everything) == 11
    assert pacheck.applicable_properties(with_capability(uses_splits=True)) == everything
    narrow = pacheck.applicable_properties(with_capability(deterministic=False, batch_invariant=False,
                                                           gqa_ratios=[4]))
    assert not {"Determinism", "BatchIsolation", "GqaEquivalence", "SplitSizeInvariance"} & set(narrow)
    assert "UlpBoundedAgreement" in narrow
