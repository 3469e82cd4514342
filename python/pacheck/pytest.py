# pacheck.pytest: the property catalogue as pytest tests, one test per property that applies to a kernel.
from __future__ import annotations

from typing import Optional

import pytest

from . import _check, _pacheck


def property_tests(kernel, *, name: str, capabilities: dict, error_model, properties=None, cases: int = 100,
                   seed: int = 1, engine_shapes: bool = False, failure_dir="pacheck-failures",
                   reproduce: Optional[str] = None):
    """A pytest test function parametrised over the properties that apply to the declared kernel (or over
    `properties`); assign it to a module-level name that starts with test_:

        test_my_kernel = pacheck.pytest.property_tests(my_kernel, name="my_kernel", capabilities={...},
                                                       error_model="fp32_online_softmax", cases=200)

    Each property becomes its own test, test_my_kernel[UlpBoundedAgreement] and so on, running pacheck.check on it
    alone and failing with its PropertyFailure. The declaration is checked at collection: a bad one is a collection
    error naming what is wrong."""
    names = _check.property_names(_pacheck.DeclaredKernel(kernel, name, capabilities, error_model), properties)

    @pytest.mark.parametrize("pacheck_property", names)
    def test(pacheck_property):
        __tracebackhide__ = True
        _check.check(kernel, name=name, capabilities=capabilities, error_model=error_model,
                     properties=[pacheck_property], cases=cases, seed=seed, engine_shapes=engine_shapes,
                     failure_dir=failure_dir, reproduce=reproduce)

    return test
