# pacheck.check and pacheck.replay: a Python kernel through the property catalogue, failures raised as PropertyFailure.
from __future__ import annotations

import dataclasses
import os
from typing import Optional

from . import _pacheck

ALL_DTYPES = ("fp32", "fp16", "bf16")
ALL_MODES = ("decode", "prefill", "continuation")


@dataclasses.dataclass(frozen=True)
class WorstElement:
    """The output element with the largest error relative to its bound."""

    element: int  # flat index into the [total_queries, num_query_heads, head_dim] output
    position: str  # "seq 0 token 1 (position 3) head 2 dim 5"
    exact: float  # the oracle's value, in double
    rounded_exact: float  # the oracle's value rounded to the problem's dtype
    got: float  # the kernel's value
    error: float  # |got - exact|
    bound: float  # the error model's bound for this element
    ulps: float  # |got - rounded_exact| in ulps of the dtype
    violations: int  # elements of the output outside their bound
    elements: int  # elements of the output


@dataclasses.dataclass(frozen=True)
class PropertyResult:
    """A property that held: its name and the cases it held on."""

    property: str
    cases: int


@dataclasses.dataclass(frozen=True)
class ReplayResult:
    """A replayed case that the kernel passed: the case, its problem and the worst element (within its bound)."""

    case_file: str
    problem: _pacheck.Problem
    worst: WorstElement
    fits_fp32: bool  # False: the problem overflows fp32 ranges or reads inf/NaN; no error model covers it


class PropertyFailure(AssertionError):
    """A property failed for a kernel.

    property          the property's name
    kernel            the kernel's declared name
    cases             passing cases before the failing one
    message           pacheck's description: the shrunk problem, the knobs, the worst element or first difference
    case_file         the shrunk case as a case file, or None when it could not be saved
    problem           that case as a pacheck.Problem (None without a case file)
    worst             WorstElement when the output exceeded its bound, else None
    kernel_exception  the kernel's traceback when it raised, else None
    replay            one line of Python that re-runs the saved case: pacheck.replay(...)
    reproduce         RapidCheck's string: check(..., properties=[property], reproduce=...) re-runs exactly this case
    """

    def __init__(self, *, property: str, kernel: str, cases: int, message: str, case_file: Optional[str],
                 worst: Optional[WorstElement], kernel_exception: Optional[str], replay: str, reproduce: str):
        self.property = property
        self.kernel = kernel
        self.cases = cases
        self.message = message
        self.case_file = case_file
        self.problem = _pacheck.load_case(case_file) if case_file else None
        self.worst = worst
        self.kernel_exception = kernel_exception
        self.replay = replay
        self.reproduce = reproduce
        super().__init__(self._text())

    def _text(self) -> str:
        lines = [f"{self.property} failed for kernel {self.kernel!r} after {self.cases} passing cases",
                 self.message.rstrip()]
        if self.reproduce:
            lines.append(f"reproduce: pacheck.check(<the same kernel and declaration>, "
                         f"properties=[{self.property!r}], reproduce={self.reproduce!r})")
        return "\n".join(lines)


def _default_name(kernel) -> str:
    name = getattr(kernel, "__name__", "")
    cleaned = "".join(c if c.isalnum() or c in "_-." else "_" for c in name)[:64].strip("_")
    return cleaned or "kernel"


def _replay_line(case_file: str, kernel, name: str, error_model, features: dict) -> str:
    reference = getattr(kernel, "__name__", "")
    if not reference.isidentifier():
        reference = "kernel"
    declared = "".join(f", {key}={value!r}" for key, value in features.items() if value)
    return f"pacheck.replay({case_file!r}, {reference}, name={name!r}, error_model={error_model!r}{declared})"


def _raise_on_failure(outcome: dict, property: str, kernel, name: str, error_model, features: dict) -> None:
    """Raises the outcome's interrupt, KernelContractError, give-up or PropertyFailure; returns if the property held."""
    if outcome["interrupt"] is not None:
        raise outcome["interrupt"]
    if outcome["contract_error"] is not None:
        raise _pacheck.KernelContractError(outcome["contract_error"])
    if outcome["passed"]:
        return
    if outcome["gave_up"]:
        raise RuntimeError(f"{property} gave up on kernel {name!r} after {outcome['cases']} cases: the declared "
                           f"capabilities leave its generators too few problems ({outcome['message']})")
    case_file = outcome["case_file"]
    message = outcome["message"]
    replay = ""
    if case_file is not None:
        replay = _replay_line(case_file, kernel, name, error_model, features)
        cli_line = f"replay: pacheck replay {case_file} --variant {name}"
        if cli_line in message:
            message = message.replace(cli_line, f"replay: {replay}")
        else:
            message = f"{message.rstrip()}\nreplay: {replay}"
    worst = WorstElement(**outcome["worst"]) if outcome["worst"] is not None else None
    raise PropertyFailure(property=property, kernel=name, cases=outcome["cases"], message=message,
                          case_file=case_file, worst=worst, kernel_exception=outcome["kernel_exception"],
                          replay=replay, reproduce=outcome["reproduce"])


def _require_int(what: str, value, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{what} must lie in {low}..{high}, got {value}")


def _features(capabilities: dict) -> dict:
    """What a replay line declares beyond the error model (DeclaredKernel has checked it): uses_splits, and the logit
    options and fp8 cache formats as lists of names."""
    features = {"uses_splits": capabilities.get("uses_splits") is True}
    for key in ("logit_options", "fp8_caches"):
        declared = capabilities.get(key, [])
        features[key] = [declared] if isinstance(declared, str) else list(declared)
    return features


def property_names(declared, properties) -> list:
    """The properties to run: every one that applies to the declaration when `properties` is None, else those named,
    each checked to exist and apply."""
    if properties is None:
        return declared.applicable_properties()
    names = [properties] if isinstance(properties, str) else list(properties)
    if not names:
        raise ValueError("properties is empty: give None for every applicable property, or names")
    for property in names:
        declared.require_applicable(property)
    return names


def check(kernel, *, name: str, capabilities: dict, error_model, properties=None, cases: int = 100, seed: int = 1,
          engine_shapes: bool = False, failure_dir="pacheck-failures", reproduce: Optional[str] = None):
    """Runs the catalogue's properties against `kernel(problem) -> output` and returns a PropertyResult for each.

    name           the kernel's name in messages and case files: letters, digits, '_', '-', '.'
    capabilities   dict: dtypes, modes, max_head_dim and/or head_dims, block_sizes, gqa_ratios, deterministic,
                   batch_invariant, uses_splits, logit_options, fp8_caches (python/README.md)
    error_model    a stock model's name (fp32_online_softmax, fp32_split_k, bf16_tensor_cores,
                   fp16_tensor_cores) or a dict of coefficients
    properties     None: every property that applies to the capabilities; or a name or a list of names
    cases          cases per property; seed: RapidCheck's seed (mixed with each property's name)
    engine_shapes  draw only serving-engine shapes (bf16 or fp16, real head dims, block sizes 16/32/64)
    failure_dir    where shrunk failures are saved as <Property>-<name>.json
    reproduce      a PropertyFailure's reproduce string: re-runs exactly its failing case

    Stops at the first failing property: raises PropertyFailure; KernelContractError when the kernel breaks the
    bridge's contract (an output of the wrong shape or dtype, a view of the problem kept after the call).
    """
    declared = _pacheck.DeclaredKernel(kernel, name, capabilities, error_model)
    _require_int("cases", cases, 1, 2**31 - 1)
    _require_int("seed", seed, 0, 2**64 - 1)
    names = property_names(declared, properties)
    results = []
    for property in names:
        outcome = declared.run_property(property, cases, seed, bool(engine_shapes), os.fspath(failure_dir), reproduce)
        _raise_on_failure(outcome, property, kernel, name, error_model, _features(capabilities))
        results.append(PropertyResult(property, outcome["cases"]))
    return results


def replay(case_file, kernel, *, error_model, uses_splits: bool = False, logit_options=(), fp8_caches=(),
           name: Optional[str] = None) -> ReplayResult:
    """Runs `kernel` on a saved case and compares its output with the oracle under `error_model`.

    Returns a ReplayResult when every element is within its bound; raises PropertyFailure (property
    UlpBoundedAgreement) when one is not or the kernel raises, KernelContractError as check() does. `uses_splits`,
    `logit_options` and `fp8_caches` declare what the capabilities of those names do in check(): a case that sets an
    undeclared option or format raises ValueError without calling the kernel.
    """
    name = _default_name(kernel) if name is None else name
    capabilities = {"dtypes": list(ALL_DTYPES), "modes": list(ALL_MODES), "max_head_dim": 256,
                    "uses_splits": uses_splits, "logit_options": list(logit_options),
                    "fp8_caches": list(fp8_caches)}
    declared = _pacheck.DeclaredKernel(kernel, name, capabilities, error_model)
    path = os.fspath(case_file)
    outcome = declared.replay(path)
    if outcome["note"]:
        outcome["message"] = f"case {path} ({outcome['note']})\n{outcome['message']}"
    _raise_on_failure(outcome, "UlpBoundedAgreement", kernel, name, error_model, _features(capabilities))
    return ReplayResult(case_file=path, problem=_pacheck.load_case(path), worst=WorstElement(**outcome["worst"]),
                        fits_fp32=outcome["fits_fp32"])
