"""Helpers shared by the op definitions: operand dtypes, broadcasting in backward."""
import math

import numpy as np

from ... import _dtype, backend

_BFLOAT16 = _dtype.bfloat16.np
from ..._dtype import is_floating as _is_floating

_Tensor = None  # edutorch.Tensor, set by edutorch/_tensor.py (which imports the ops: a cycle)


def wrap_dim(dim, ndim):
    """Turn a negative ``dim`` into a positive one, with PyTorch's IndexError."""
    n = ndim if ndim > 0 else 1  # a 0-d tensor accepts dims -1 and 0
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def quiet_fp():
    """``np.errstate`` silencing NumPy's 0/0, x/0, log(0), sqrt(-1) warnings.

    PyTorch returns nan/inf there without a word; ops that can hit these cases
    (div, log, log1p, sqrt, rsqrt, reciprocal, pow) compute inside this.
    """
    return np.errstate(divide="ignore", invalid="ignore")


def array_of(x):
    """The array inside a Tensor, or the Python scalar itself."""
    return x._data if isinstance(x, _Tensor) else x


def refuse_bool(x, kernel):
    """PyTorch has no bool kernel for ``kernel`` (``"pow" not implemented for 'Bool'``):
    refuse a bool array where NumPy would compute something."""
    if x.dtype.kind == "b":
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def check_integer_divisor(x, y, kernel):
    """Integer ``//`` and ``%``: PyTorch has no bool kernel and refuses a zero divisor.

    (NumPy would return 0 with a warning: a silently wrong number.)
    """
    refuse_bool(x, kernel)
    if x.dtype.kind in "iu" and (y == 0).any():
        raise RuntimeError("ZeroDivisionError")


def integer_power(x, y):
    """``x ** y`` for integer arrays the way PyTorch computes it.

    NumPy refuses negative integer exponents; PyTorch gives the integer result
    of ``1 / x**|y|``: 1 for x = 1, +1 or -1 for x = -1, and 0 otherwise (also for x = 0).
    """
    negative = y < 0
    if not negative.any():
        return x ** y
    plain = x ** np.where(negative, 0, y)
    odd = (y % 2) != 0
    inverse = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0)).astype(plain.dtype)
    return np.where(negative, inverse, plain)


def binary_arrays(a, b):
    """The arrays of two operands, cast to PyTorch's result dtype.

    PyTorch and NumPy promote differently (an int tensor times 0.5 is float32
    in PyTorch, float64 in NumPy), so we cast to ``torch.result_type`` first.
    """
    x_arr, y_arr = isinstance(a, _Tensor), isinstance(b, _Tensor)
    x = a._data if x_arr else a
    y = b._data if y_arr else b
    if x_arr and y_arr:
        if type(x) is not type(y):
            raise RuntimeError(_device_error(x, y))
        if x.dtype == y.dtype:
            return x, y
    elif x_arr and _is_floating(x.dtype) and not isinstance(y, complex):
        if x.dtype == _BFLOAT16 and not isinstance(y, np.ndarray):  # NumPy would widen to float32
            return x, x.dtype.type(scalar_int(y))
        return x, scalar_int(y)  # float tensor op Python number: stays the tensor's dtype
    dt = _dtype.result_type(a, b).np
    if x_arr and x.dtype != dt:
        x = x.astype(dt)
    if y_arr and y.dtype != dt:
        y = y.astype(dt)
    if not x_arr:
        x = _scalar_as(x, dt)
    if not y_arr:
        y = _scalar_as(y, dt)
    return x, y


def scalar_int(value):
    """A Python int as PyTorch's argument parser reads it into a ``c10::Scalar``: an int64, or a
    uint64 from 2**63 on; beyond 64 bits it raises OverflowError (other values pass unchanged)."""
    if type(value) is int and value >= 2**64:
        raise OverflowError("int too big to convert")
    if type(value) is int and value < -2**63:
        raise OverflowError("can't convert negative int to unsigned")
    return value


def _scalar_as(value, dt):
    """A Python number as an operand of dtype ``dt``.  A Python int for an integer dtype wraps to its
    bits as PyTorch's ``c10::Scalar`` does in arithmetic (``ones(2, dtype=long) + 2**63`` runs)."""
    if type(scalar_int(value)) is not int or dt.kind not in "iu":
        return dt.type(value)
    return np.array(value % 2**64, dtype=np.uint64).astype(dt)[()]  # two's complement, then the dtype's bits


def negated_alpha(alpha):
    """``sub``'s ``alpha`` as PyTorch passes it on to ``add`` (``a - alpha * b`` is ``a + (-alpha) * b``):
    ``-alpha``, an int wrapped into int64 as the C++ negation of a ``Scalar`` does (``-(2**63)``
    stays ``-2**63``)."""
    if type(scalar_int(alpha)) is int:
        return (-alpha + 2**63) % 2**64 - 2**63
    return -alpha


# the C++ type PyTorch names when a number does not fit a dtype (c10::checked_convert)
_CHECKED_TYPE_NAMES = {"int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t", "uint8": "uint8_t",
                       "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t", "float32": "float"}


def checked_scalar(value, dt):
    """A Python number converted to dtype ``dt`` with PyTorch's overflow check (``c10::checked_convert``:
    ``fill_``, ``masked_fill``, ``clamp``, ``where``, ``full``, ``pow``'s exponent, ``alpha``).

    A value outside the dtype's range raises "value cannot be converted to type int64_t without
    overflow": ``2**63`` for int64, ``300`` for int8, NaN or inf for any integer dtype, ``1e40``
    for float32.  A negative int may wrap into an unsigned dtype (``-1`` fills a uint8 with 255),
    as PyTorch allows.  float16, bfloat16 and float64 take any number (beyond their range: inf).
    """
    value = scalar_int(value)
    if dt.name in _CHECKED_TYPE_NAMES and not isinstance(value, bool):
        if dt.kind == "f":
            fits = math.isinf(value) or math.isnan(value) or abs(value) <= float(np.finfo(dt).max)
        else:
            info = np.iinfo(dt)
            low = -int(info.max) if info.min == 0 and type(value) is int else int(info.min)
            fits = not (isinstance(value, float) and math.isnan(value)) and low <= value <= info.max
        if not fits:
            raise RuntimeError(f"value cannot be converted to type {_CHECKED_TYPE_NAMES[dt.name]} without overflow")
        if dt.kind == "u" and value < 0:
            value %= int(info.max) + 1  # two's complement in the dtype's width
    with np.errstate(over="ignore"):  # float16 and bfloat16 round a large number to inf
        return dt.type(float(value) if dt.kind == "f" or dt == _BFLOAT16 else value)


def scalar_for(value, x):
    """A Python number about to multiply array ``x``: as a bfloat16 scalar when ``x`` is bfloat16
    (NumPy would widen the product to float32), unchanged otherwise."""
    return x.dtype.type(value) if getattr(x, "dtype", None) == _BFLOAT16 else value


def matmul(x, y):
    """``x @ y`` for arrays, in ``x``'s dtype.  float16 and bfloat16 are multiplied in
    float32 and rounded once at the end, as PyTorch's CPU kernels accumulate: NumPy
    has no BLAS for float16 (its own loop is ~100x slower) and returns float32 for bfloat16."""
    if x.dtype == np.float16 or x.dtype == _BFLOAT16:
        return (x.astype(np.float32) @ y.astype(np.float32)).astype(x.dtype)
    return x @ y


def in_dtype_of(out, x):
    """``out`` in ``x``'s dtype.  NumPy multiplies bfloat16 (ml_dtypes) matrices in
    float32 and returns float32; PyTorch's bfloat16 matmul returns bfloat16."""
    return out if out.dtype == x.dtype else out.astype(x.dtype)


def _device_error(x, y):
    names = {"cpu": "cpu", "cuda": "cuda:0"}
    return (
        "Expected all tensors to be on the same device, but found at least two devices, "
        f"{names[backend.device_of(x)]} and {names[backend.device_of(y)]}!"
    )


def input_meta(t, out_shape, out_dtype):
    """What backward needs to shape a gradient for ``t``: None if it matches the output."""
    if not isinstance(t, _Tensor):
        return None
    if t._data.shape == out_shape and t._data.dtype == out_dtype:
        return None
    return (t._data.shape, t._data.dtype)


def grad_for(grad, meta):
    """Sum a broadcast gradient back to the input's shape and cast it to its dtype."""
    if meta is None or grad is None:
        return grad
    shape, dtype = meta
    if len(shape) > grad._data.ndim:  # a value with extra leading 1s (x[i] = v of shape (1, 1, n)), as PyTorch
        grad = grad.reshape((1,) * (len(shape) - grad._data.ndim) + tuple(grad._data.shape))
    if grad._data.shape != shape:
        grad = grad.sum_to_size(shape)
    if grad._data.dtype != dtype:
        grad = grad.to(_dtype.from_numpy_dtype(dtype))
    return grad


def sum_to_shape_axes(grad_shape, shape):
    """The axes to sum (and keep) to reduce ``grad_shape`` to a broadcastable ``shape``."""
    lead = len(grad_shape) - len(shape)
    axes = tuple(range(lead))
    kept = tuple(lead + i for i, s in enumerate(shape) if s == 1 and grad_shape[lead + i] != 1)
    return axes, kept


def sign(x):
    """``np.sign`` with PyTorch's value for NaN: 0 (NumPy gives NaN)."""
    if _is_floating(x.dtype):
        return np.where(np.isnan(x), 0, np.sign(x))
    return np.sign(x)


# float16 and bfloat16: PyTorch's CPU reductions accumulate them in float32 and round once at
# the end (its "acc_type"); a bfloat16 running sum would stop at 256, where 256 + 1 rounds to 256.
REDUCED_FLOATS = frozenset({np.dtype(np.float16), np.dtype(_BFLOAT16)})
_FLOAT32 = np.dtype(np.float32)


def accumulation_input(x):
    """``x`` as a reduction over it computes: float16 and bfloat16 widened to float32
    (round the result back with ``rounded_to(out, x.dtype)``), any other array as it is."""
    return x.astype(_FLOAT32) if x.dtype in REDUCED_FLOATS else x


def rounded_to(x, dtype):
    """A float32 accumulation rounded once to ``dtype``: beyond float16's range it becomes inf
    silently, as in PyTorch (NumPy would warn)."""
    if x.dtype == dtype:
        return x
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def summed(x, axis=None, keepdims=False, dtype=None):
    """``x.sum(axis, keepdims=..., dtype=...)`` as PyTorch's CPU sum: a float16 or bfloat16
    result is accumulated in float32 and rounded once (``dtype`` casts ``x`` first)."""
    target = x.dtype if dtype is None else np.dtype(dtype)
    if target not in REDUCED_FLOATS:
        return x.sum(axis=axis, keepdims=keepdims, dtype=dtype)
    if x.dtype != target:
        x = x.astype(target)
    return rounded_to(x.sum(axis=axis, keepdims=keepdims, dtype=_FLOAT32), target)


def summed_to(x, shape):
    """The array ``x`` summed over its broadcast axes down to ``shape`` (in float32 for
    float16 and bfloat16, rounded once, as PyTorch's ``sum_to_size``)."""
    lead, kept = sum_to_shape_axes(x.shape, tuple(shape))
    if not lead and not kept:
        return x
    wide = accumulation_input(x)
    if kept:
        wide = wide.sum(axis=kept, keepdims=True)
    if lead:
        wide = wide.sum(axis=lead)
    return rounded_to(wide, x.dtype)


def broadcast_to(x, shape):
    """``np.broadcast_to`` for a NumPy or CuPy array: a read-only view, nothing copied."""
    return backend.get_array_module(x).broadcast_to(x, shape)


def broadcast_error(x, y):
    """PyTorch's RuntimeError for shapes that do not broadcast (NumPy raises ValueError)."""
    sx, sy = getattr(x, "shape", ()), getattr(y, "shape", ())
    n = max(len(sx), len(sy))
    px, py = (1,) * (n - len(sx)) + tuple(sx), (1,) * (n - len(sy)) + tuple(sy)
    for i in range(n - 1, -1, -1):  # PyTorch reports the last mismatching dimension
        if px[i] != py[i] and px[i] != 1 and py[i] != 1:
            return RuntimeError(
                f"The size of tensor a ({px[i]}) must match the size of tensor b ({py[i]}) "
                f"at non-singleton dimension {i}"
            )
    return RuntimeError(f"shapes {list(sx)} and {list(sy)} cannot be broadcast together")


SUB_BOOL_ERROR = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                  "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
SUB_TWO_BOOLS_ERROR = ("Subtraction, the `-` operator, with two bool tensors is not supported. "
                       "Use the `^` or `logical_xor()` operator instead.")


def check_sub(a, b):
    """PyTorch refuses ``-`` on bool tensors (use ``~``/``^``): so do we."""
    a_bool = a is True or a is False or (isinstance(a, _Tensor) and a._data.dtype.kind == "b")
    b_bool = b is True or b is False or (isinstance(b, _Tensor) and b._data.dtype.kind == "b")
    if not (a_bool or b_bool):
        return
    if a_bool and b_bool:
        raise RuntimeError(SUB_TWO_BOOLS_ERROR)
    if a_bool or b_bool:
        raise RuntimeError(SUB_BOOL_ERROR)
