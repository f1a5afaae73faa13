"""Tensor factories: ``tensor``, ``zeros``, ``ones``, ``arange``, ``eye``...

Python lists of floats become ``float32`` (PyTorch's default dtype), lists of
ints ``int64`` and lists of bools ``bool``, unlike NumPy's float64 default.
"""
import contextlib
import math
import warnings

import numpy as np

from . import _dtype, backend
from ._tensor import Tensor, device as _device
from ._dtype import is_floating as _is_floating
from .autograd._functions import layout
from .autograd._functions.utils import checked_scalar


def _np_dtype(dtype):
    return None if dtype is None else _dtype.to_numpy_dtype(dtype)


_default_device = None  # ``torch.set_default_device``: where factory functions put tensors


def set_default_device(device):
    """``torch.set_default_device``: the device of new tensors made without ``device=`` (None: CPU)."""
    global _default_device
    _default_device = None if device is None else _device(device)


def get_default_device():
    """``torch.get_default_device``: ``device(type='cpu')`` unless ``set_default_device`` changed it."""
    d = _default_device or _device("cpu")
    return _device(d.type, 0) if d.type == "cuda" and d.index is None else d


def _device_type(device):
    if device is None:
        return "cpu" if _default_device is None else _default_device.type
    return str(device).split(":")[0]


def _infer_dtype(data):
    """PyTorch's dtype for Python data: bool, int64, or the default float."""
    arr = np.asarray(data)
    if arr.dtype.kind == "b":
        return np.bool_
    if arr.dtype.kind in "iu":
        return np.int64 if arr.dtype.kind == "i" or arr.dtype.itemsize < 8 else arr.dtype
    if _is_floating(arr.dtype):
        return _dtype.get_default_dtype().np
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _finish(array, dtype, device, requires_grad):
    """Move to ``device``, then wrap; ``requires_grad`` is validated by the setter."""
    device_type = _device_type(device)
    if device_type != "cpu":
        array = backend.to_device(array, device_type)
    t = Tensor._make(array)
    if requires_grad:
        if not _dtype.is_floating(array.dtype):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return t


_NO_PINNED_ALLOCATOR = ("pin_memory=True requires a CUDA or other accelerator backend; no pinned "
                        "memory allocator is available on this system.")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """``torch.tensor``: always copies ``data`` into a new leaf tensor."""
    if pin_memory:
        if not backend.cuda_is_available():
            raise RuntimeError(_NO_PINNED_ALLOCATOR)
        raise NotImplementedError("edutorch does not model pinned (page-locked) host memory")
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() "
            "or sourceTensor.clone().detach().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        array = backend.to_device(data._data, "cpu").copy()
        np_dtype = _np_dtype(dtype) or array.dtype
    elif isinstance(data, (np.ndarray, np.generic)):  # NumPy arrays and scalars keep their dtype
        np_dtype = _np_dtype(dtype) or _dtype.from_numpy_dtype(data.dtype).np
        array = data
    else:
        array, np_dtype = _from_python(_unwrap_nested(data), _np_dtype(dtype))
    with np.errstate(over="ignore"):  # beyond float16's range: inf, silently as in PyTorch
        array = np.array(array, dtype=np_dtype)
    return _finish(array, dtype, device, requires_grad)


_OVERFLOW_ERROR = "Overflow when unpacking long long"


def _from_python(data, np_dtype):
    """Python numbers (maybe nested) as an array for ``np_dtype`` (None: PyTorch's inferred dtype).

    PyTorch reads every Python int as a C ``long long``: an int beyond int64 is a ValueError
    unless the target is floating point or bool (NumPy would quietly build a uint64 or
    object array), and an int that does not fit a smaller integer dtype is a RuntimeError.
    """
    values = np.asarray(data)
    # an int beyond int64 makes NumPy build a uint64, object or float array with a value of magnitude >= 2**63
    if values.dtype.kind in "uO" or values.dtype.kind == "f" and values.size and np.abs(values).max() >= 2.0**63:
        elements = list(np.asarray(data, dtype=object).flat)
        if any(type(v) is int and not -2**63 <= v <= _INT64_MAX for v in elements):
            all_ints = all(isinstance(v, (int, np.integer)) for v in elements)
            if (np_dtype is None and all_ints) or (np_dtype is not None and np.dtype(np_dtype).kind in "iu"):
                raise ValueError(_OVERFLOW_ERROR)
            # a floating point (or bool) result: each int converted as a double, as in PyTorch
            return values.astype(np.float64), np_dtype or _dtype.get_default_dtype().np
    if np_dtype is None:
        return data, _infer_dtype(data)
    if values.dtype.kind == "i" and np.dtype(np_dtype).kind in "iu":
        check_int_fits(values, np_dtype, np.dtype(np_dtype).name)
        return values.astype(np_dtype), np_dtype  # a negative value wraps into uint8, as in PyTorch
    return data, np_dtype


def check_int_fits(values, np_dtype, type_name):
    """PyTorch's range check for ints stored in a smaller integer dtype: uint8 also takes
    negative values down to -255 (they wrap, two's complement), as PyTorch allows."""
    info = np.iinfo(np_dtype)
    values = np.asarray(values)
    if values.size == 0:
        return
    low = -info.max if info.min == 0 else info.min
    if values.max() > info.max or values.min() < low:
        raise RuntimeError(f"value cannot be converted to type {type_name} without overflow")


def _unwrap_nested(data):
    """Lists may hold one-element tensors (``[t1, t2]``): use their values."""
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(d) for d in data]
    if isinstance(data, Tensor):
        return data._data
    return data


def as_tensor(data, dtype=None, device=None):
    """``torch.as_tensor``: share memory with ``data`` when no conversion is needed."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (dtype or device) else data
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == _np_dtype(dtype)):
        return _finish(data, dtype, device, False)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """``torch.from_numpy``: a tensor sharing the array's memory."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _dtype.from_numpy_dtype(array.dtype)  # TypeError for unsupported dtypes
    return Tensor._make(array)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


_INT64_MAX = 2**63 - 1


def checked_shape(name, shape, dtype):
    """``shape`` if PyTorch would try to allocate it, else PyTorch's error: a size beyond int64
    (TypeError), a negative one, or more bytes than an int64 counts (RuntimeError)."""
    for i, s in enumerate(shape):
        if s > _INT64_MAX or s < -_INT64_MAX - 1:
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            "\"Overflow when unpacking long long\"")
    if any(s < 0 for s in shape):
        if name == "zeros":  # PyTorch's zeros checks with its own words
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        first = next(s for s in shape if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {first}: {list(shape)}")
    numel = 1
    for s in shape:
        numel *= s
    if numel * np.dtype(dtype).itemsize > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    return shape


@contextlib.contextmanager
def allocating(nbytes):
    """Turn NumPy's MemoryError into PyTorch's RuntimeError from its CPU allocator."""
    try:
        yield
    except MemoryError:
        raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate {nbytes} bytes. "
                           "Error code 12 (Cannot allocate memory)") from None


def nbytes_of(shape, dtype):
    return int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize


def _size_args(name, args, size):
    """``zeros(2, 3)``, ``zeros((2, 3))`` and ``zeros(size=(2, 3))`` name the same shape."""
    if size is None:
        return args
    if args:
        raise TypeError(f"{name}() received an invalid combination of arguments: the size was given twice")
    return (tuple(size),)


def _filled(name, fill, size, dtype, device, requires_grad):
    xp = backend.array_module_for(_device_type(device))
    np_dtype = _np_dtype(dtype) or _dtype.get_default_dtype().np
    shape = checked_shape(name, _size(size), np_dtype)
    if _device_type(device) == "meta":  # no data: nothing to allocate or fill
        return _finish(backend.meta_array(shape, np_dtype), dtype, device, requires_grad)
    with allocating(nbytes_of(shape, np_dtype)):
        array = fill(xp, shape, np_dtype)
    return _finish(array, dtype, None if xp is not np else device, requires_grad)


def zeros(*args, size=None, dtype=None, device=None, requires_grad=False, out=None):
    return _filled("zeros", lambda xp, s, d: xp.zeros(s, d), _size_args("zeros", args, size), dtype, device,
                   requires_grad)


def ones(*args, size=None, dtype=None, device=None, requires_grad=False, out=None):
    return _filled("ones", lambda xp, s, d: xp.ones(s, d), _size_args("ones", args, size), dtype, device,
                   requires_grad)


def empty(*args, size=None, dtype=None, device=None, requires_grad=False, out=None):
    return _filled("empty", lambda xp, s, d: xp.empty(s, d), _size_args("empty", args, size), dtype, device,
                   requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = _dtype.default_dtype_for_scalar(fill_value)
    np_dtype = _np_dtype(dtype)
    if isinstance(fill_value, (int, float)):
        fill_value = checked_scalar(fill_value, np.dtype(np_dtype))  # PyTorch's overflow check
    return _filled("full", lambda xp, s, d: xp.full(s, fill_value, d), (size,), dtype, device, requires_grad)


def _like(t, dtype, device):
    return (dtype or t.dtype), (device or t.device)


def _laid_out_like(new, t):
    """``new`` with ``t``'s memory layout (PyTorch's ``memory_format=torch.preserve_format``)."""
    new._data = layout.like(new._data, t._data)
    return new


def zeros_like(t, *, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(t, dtype, device)
    return _laid_out_like(zeros(t.shape, dtype=dtype, device=device, requires_grad=requires_grad), t)


def ones_like(t, *, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(t, dtype, device)
    return _laid_out_like(ones(t.shape, dtype=dtype, device=device, requires_grad=requires_grad), t)


def empty_like(t, *, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(t, dtype, device)
    return _laid_out_like(empty(t.shape, dtype=dtype, device=device, requires_grad=requires_grad), t)


def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(t, dtype, device)
    return _laid_out_like(full(t.shape, fill_value, dtype=dtype, device=device, requires_grad=requires_grad), t)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """``torch.arange``: int64 for integer arguments, else the default float."""
    if end is None:
        start, end = 0, start
    if step == 0:  # NumPy would raise ZeroDivisionError
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        is_int = all(isinstance(v, int) for v in (start, end, step))
        dtype = _dtype.int64 if is_int else _dtype.get_default_dtype()
    if not dtype.is_floating_point and any(abs(v) > _INT64_MAX for v in (start, end, step)):
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    with allocating(nbytes_of((max(math.ceil((end - start) / step), 0),), dtype.np)):
        values = np.arange(start, end, step, dtype=np.float64 if dtype.is_floating_point else None)
    return _finish(values.astype(dtype.np), dtype, device, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    dtype = dtype or _dtype.get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    with allocating(nbytes_of((steps,), dtype.np)):
        values = np.linspace(start, end, steps).astype(dtype.np)
    return _finish(values, dtype, device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    dtype = dtype or _dtype.get_default_dtype()
    for name, size in (("n", n), ("m", m)):
        if size is not None and size < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {size}")
    with allocating(nbytes_of((n, n if m is None else m), dtype.np)):
        values = np.eye(n, m, dtype=dtype.np)
    return _finish(values, dtype, device, requires_grad)
