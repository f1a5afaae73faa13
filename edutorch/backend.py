"""The one place that knows about NumPy versus CuPy.

``device="cpu"`` tensors hold a ``numpy.ndarray``; ``device="cuda"`` tensors hold
a ``cupy.ndarray``.  Ops find the array module from their inputs with
:func:`get_array_module` (the idea comes from Chainer), so the same op code runs
on both.  CuPy is imported lazily, only when a CUDA tensor is asked for.
"""
import numpy as np

_cupy = None

CUPY_HELP = (
    "Torch not compiled with CUDA enabled: edutorch runs CUDA tensors through CuPy, "
    "which is not installed or found no GPU. Install it with "
    "`pip install -e .[gpu]` (the cupy-cuda12x wheel) on a machine with an NVIDIA GPU."
)


def _import_cupy():
    """Import CuPy on first use; if it or a GPU is missing, PyTorch's error for a build without
    CUDA (an ``AssertionError``, as ``torch`` raises it) that says how to install CuPy."""
    global _cupy
    if _cupy is None:
        try:
            import cupy
            cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # ImportError, or CUDA errors when no GPU/driver
            raise AssertionError(CUPY_HELP) from exc
        _cupy = cupy
    return _cupy


def cuda_is_available():
    """``torch.cuda.is_available()``: CuPy importable and a GPU present."""
    try:
        _import_cupy()
    except AssertionError:
        return False
    return True


def get_array_module(*arrays):
    """Return ``numpy`` or ``cupy``, whichever the arrays belong to (Chainer's idea)."""
    if _cupy is not None:
        for a in arrays:
            if isinstance(a, _cupy.ndarray):
                return _cupy
    return np


class MetaArray(np.ndarray):
    """The array of a tensor on the ``meta`` device: a shape and a dtype, and no data.

    One element, seen through zero strides, stands for all of them, so a meta
    tensor of any size costs a few bytes; writes land on that one element,
    which nothing reads (see ``edutorch/_meta.py`` for how ops treat it).
    """


_NO_DATA = "Cannot copy out of meta tensor; no data!"


# Called with the one element of each new meta array: ``_meta.track`` registers itself here, as
# backend sits below autograd, which ``_meta`` hooks into (``edutorch/__init__.py`` imports it).
meta_array_made = []


def meta_array(shape, dtype):
    """A :class:`MetaArray` of ``shape`` and ``dtype``; while one exists, ``_meta`` handles ops on them."""
    one = np.zeros(1, dtype)
    for track in meta_array_made:
        track(one)
    return np.lib.stride_tricks.as_strided(one, shape=tuple(shape), strides=(0,) * len(shape),
                                           writeable=True).view(MetaArray)


def device_of(array):
    """The device type string of an array: ``"cpu"``, ``"cuda"`` or ``"meta"``."""
    if isinstance(array, (np.ndarray, np.generic)):
        return "meta" if type(array) is MetaArray else "cpu"
    return "cuda"


def array_module_for(device_type):
    """The array module that stores tensors of ``device_type``."""
    if device_type == "cpu":
        return np
    if device_type == "cuda":
        return _import_cupy()
    if device_type == "meta":  # computed as NumPy arrays, then made meta (``to_device``)
        return np
    raise RuntimeError(
        f"Expected one of cpu, cuda device type at start of device string: {device_type}"
    )


def to_device(array, device_type):
    """Move an array to ``device_type`` (a copy only when it changes device)."""
    if device_of(array) == device_type:
        return array
    if device_type == "meta":
        return meta_array(array.shape, array.dtype)
    if type(array) is MetaArray:
        raise NotImplementedError(_NO_DATA)
    if device_type == "cpu":
        return array.get()
    return array_module_for("cuda").asarray(array)
