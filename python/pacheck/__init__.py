# pacheck for Python: property-based and differential tests of paged-attention kernels against an exact oracle.
"""Check a paged-attention kernel written in Python (numpy, torch, Triton) with pacheck's generators, exact oracle,
error models, properties, shrinking and case files. See python/README.md."""

from ._pacheck import (
    CaseFileError,
    KernelContractError,
    Problem,
    Sequence,
    applicable_properties,
    load_case,
    make_problem,
    properties,
    save_case,
)
from ._check import PropertyFailure, PropertyResult, ReplayResult, WorstElement, check, replay
from ._bridge import TorchInputs, torch_float8, torch_inputs

__all__ = [
    "CaseFileError",
    "KernelContractError",
    "Problem",
    "PropertyFailure",
    "PropertyResult",
    "ReplayResult",
    "Sequence",
    "TorchInputs",
    "WorstElement",
    "applicable_properties",
    "check",
    "load_case",
    "make_problem",
    "properties",
    "replay",
    "save_case",
    "torch_float8",
    "torch_inputs",
]
