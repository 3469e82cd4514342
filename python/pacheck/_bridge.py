# Helpers the C++ bridge calls: reading a kernel's output into host memory, and a kernel's exception as text.
import traceback

import numpy

# DLPack device types whose memory the host reads in place: the CPU and pinned CUDA host memory.
_HOST_DEVICES = (1, 3)


def host_array(value):
    """`value` as something the bridge reads as a host array: tensors are detached, device arrays copied to the
    host (torch's .cpu(), else numpy.from_dlpack), anything without DLPack or the buffer protocol given to
    numpy.asarray."""
    detach = getattr(value, "detach", None)
    if callable(detach):
        value = detach()
    dlpack_device = getattr(value, "__dlpack_device__", None)
    if callable(dlpack_device):
        if dlpack_device()[0] in _HOST_DEVICES:
            return value
        cpu = getattr(value, "cpu", None)
        if callable(cpu):
            return cpu()
        return numpy.from_dlpack(value, device="cpu", copy=True)
    return numpy.asarray(value)


def exception_text(exc):
    """The exception's traceback and message, after which its frames (and the chained exceptions' frames) are
    cleared: their locals may hold views of a problem whose loan has ended."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)
        exc = exc.__cause__ or exc.__context__
    return text
