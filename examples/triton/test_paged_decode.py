# pacheck's properties on the Triton paged-decode kernel, as a kernel project's pytest suite would hold them; and the
# same kernel with a planted bug, which pacheck must catch and shrink.
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: the Triton kernel runs on the GPU", allow_module_level=True)

import pacheck  # noqa: E402
import pacheck.pytest  # noqa: E402

from paged_decode import CAPABILITIES, ERROR_MODEL, paged_decode  # noqa: E402

test_paged_decode = pacheck.pytest.property_tests(
    paged_decode, name="triton_paged_decode", capabilities=CAPABILITIES, error_model=ERROR_MODEL, cases=200)


def test_a_missed_rescale_is_caught_and_shrunk(tmp_path):
    def planted(problem):
        return paged_decode(problem, rescale=False)

    with pytest.raises(pacheck.PropertyFailure) as failure:
        pacheck.check(planted, name="triton_paged_decode_no_rescale", capabilities=CAPABILITIES,
                      error_model=ERROR_MODEL, properties=["UlpBoundedAgreement"], cases=200,
                      failure_dir=str(tmp_path))
    f = failure.value
    assert f.case_file is not None and f.worst is not None
    assert f.worst.error > f.worst.bound
    # The shrunk case needs two tiles at least (a rescale happens only when a later tile raises the max).
    assert max(s.context_len for s in f.problem.sequences) > 32
    with pytest.raises(pacheck.PropertyFailure):
        pacheck.replay(f.case_file, planted, name="triton_paged_decode_no_rescale", error_model=ERROR_MODEL)
    # The correct kernel passes the same case (replay raises PropertyFailure otherwise).
    pacheck.replay(f.case_file, paged_decode, name="triton_paged_decode", error_model=ERROR_MODEL)
