"""Binary element-wise math: atan2, hypot, fmod.

    d atan2(a, b) = (b, -a) / (a² + b²)
    d hypot(a, b) = (a, b) / hypot(a, b)
    d fmod(a, b)  = (1, -trunc(a / b))
    d xlogy(a, b) = (log(b) where a != 0, a / b)
"""
import numpy as np

from ..function import Function
from .._saved_attrs import Saved
from . import utils as _utils  # _utils._Tensor: edutorch.Tensor, without an import cycle
from .pointwise import _binary_meta
from .tangents import sum_tangents
from .utils import binary_arrays, broadcast_error, check_integer_divisor, grad_for, quiet_fp
from ..._dtype import is_floating as _is_floating
from ... import _dtype


def _float_pair(a, b):
    """Both operands as arrays of the result dtype, integers promoted to the default float."""
    x, y = binary_arrays(a, b)
    if not _is_floating(getattr(x, "dtype", np.dtype("f"))):
        dt = _dtype.get_default_dtype().np
        x, y = np.asarray(x).astype(dt), np.asarray(y).astype(dt)
    return x, y


def _apply(ufunc, x, y):
    try:
        with quiet_fp():
            return ufunc(x, y)
    except ValueError:
        raise broadcast_error(x, y) from None


def _keeping_both(ctx, a, b, ufunc, arrays):
    """``ufunc`` of the inputs' arrays (``arrays(a, b)``); both inputs kept for backward, as PyTorch."""
    x, y = arrays(a, b)
    out = _apply(ufunc, x, y)
    _binary_meta(ctx, a, b, out)
    ctx.save_for_backward(a, b)
    return out


class Atan2(Function):
    _backward_name = "Atan2Backward0"
    _autocast_op = "atan2"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, a, b):
        return _keeping_both(ctx, a, b, np.arctan2, _float_pair)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ma, mb = ctx.meta
        scale = grad / (a * a + b * b)
        ga = grad_for(scale * b, ma) if ctx.needs_input_grad[0] else None
        gb = grad_for(scale * -a, mb) if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.primals
        numerator = sum_tangents(da * b if da is not None else None, -db * a if db is not None else None)
        return numerator / (a * a + b * b)


class Hypot(Function):
    _backward_name = "HypotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = binary_arrays(a, b)
        out = _utils._Tensor._make(_apply(np.hypot, x, y))
        _binary_meta(ctx, a, b, out._data)
        n = ctx.needs_input_grad  # an operand is needed only for its own gradient (as PyTorch saves)
        ctx.save_for_backward(a if n[0] else None, b if n[1] else None, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        ma, mb = ctx.meta
        ga = grad_for(grad * a / out, ma) if ctx.needs_input_grad[0] else None
        gb = grad_for(grad * b / out, mb) if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.primals
        return sum_tangents(da * a if da is not None else None, db * b if db is not None else None) / ctx.result


class Logaddexp(Function):
    """``log(exp(x) + exp(y))`` (NumPy's, without overflow).

    d/dx = 1 / (1 + exp(y - x)), d/dy = 1 / (1 + exp(x - y)), in PyTorch's form
    (derivatives.yaml): smooth everywhere, so a second derivative is right also
    where x == y (written as ``max + log1p(exp(-|x - y|))`` with Tensor ops,
    autograd saw |.|'s kink there and lost the curvature); far apart, ``exp``
    overflows as PyTorch's does (a first derivative of 0, a second of inf/inf = NaN).
    """

    _backward_name = "LogaddexpBackward0"
    _ufunc = staticmethod(np.logaddexp)
    _power = staticmethod(lambda t: t.exp())  # the base raised to t: exp here, exp2 for logaddexp2

    @classmethod
    def _denominator(cls, x, other):
        """d/dx = 1 / this: ``1 + base ** (other - x)``, the one formula of both derivatives."""
        return 1 + cls._power(other - x)

    @classmethod
    def forward(cls, ctx, a, b):
        return _keeping_both(ctx, a, b, cls._ufunc, binary_arrays)

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        ma, mb = ctx.meta
        with np.errstate(over="ignore"):  # far apart exp overflows to inf, the gradient is 0: no warning
            ga = grad_for(grad / cls._denominator(a, b), ma) if ctx.needs_input_grad[0] else None
            gb = grad_for(grad / cls._denominator(b, a), mb) if ctx.needs_input_grad[1] else None
        return ga, gb

    @classmethod
    def jvp(cls, ctx, da, db):
        a, b = ctx.primals
        return sum_tangents(da / cls._denominator(a, b) if da is not None else None,
                            db / cls._denominator(b, a) if db is not None else None)


class Logaddexp2(Logaddexp):
    """``log2(2**x + 2**y)``: d/dx = 1 / (1 + 2**(y - x)), d/dy = 1 / (1 + 2**(x - y)) (PyTorch's
    form, as ``Logaddexp``'s); both inputs are kept, as PyTorch's node keeps them."""

    _backward_name = "Logaddexp2Backward0"
    _ufunc = staticmethod(np.logaddexp2)
    _power = staticmethod(lambda t: t.exp2())


class Fmax(Function):
    """``fmax(a, b)``: the larger of the two, a NaN ignored unless both are NaN.

    The gradient goes to the one chosen: ``a`` where ``a >= b`` or ``b`` is NaN, else ``b`` (PyTorch's
    ``FmaxBackward0``, which keeps both inputs)."""

    _backward_name = "FmaxBackward0"

    @staticmethod
    def _first(a, b):
        """Where the result is ``a``."""
        return (a >= b) | b.isnan()

    @classmethod
    def forward(cls, ctx, a, b):
        return _keeping_both(ctx, a, b, np.fmax if cls is Fmax else np.fmin, binary_arrays)

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        ma, mb = ctx.meta
        first = cls._first(a, b)
        ga = grad_for(grad.masked_fill(first.logical_not(), 0), ma) if ctx.needs_input_grad[0] else None
        gb = grad_for(grad.masked_fill(first, 0), mb) if ctx.needs_input_grad[1] else None
        return ga, gb

    @classmethod
    def jvp(cls, ctx, da, db):
        a, b = ctx.primals
        first = cls._first(a, b)
        return sum_tangents(da * first if da is not None else None,  # (the tangents broadcast to the result)
                            db * first.logical_not() if db is not None else None)


class Fmin(Fmax):
    """``fmin(a, b)``: the smaller of the two, a NaN ignored unless both are NaN (``FminBackward0``)."""

    _backward_name = "FminBackward0"

    @staticmethod
    def _first(a, b):
        return (a <= b) | b.isnan()


class Fmod(Function):
    """C's ``fmod``: the remainder has the sign of the dividend (``remainder``'s has the divisor's)."""

    _backward_name = "FmodBackward0"
    _number_operands = 2

    @staticmethod
    def forward(ctx, a, b):
        x, y = binary_arrays(a, b)
        check_integer_divisor(np.asarray(x), np.asarray(y), "fmod_cpu")
        out = _apply(np.fmod, x, y)
        _binary_meta(ctx, a, b, out)
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None,
                              b if ctx.needs_input_grad[1] else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ma, mb = ctx.meta
        ga = grad_for(grad, ma) if ctx.needs_input_grad[0] else None
        gb = grad_for(grad * -(a / b).trunc(), mb) if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.primals
        return sum_tangents(da, db * -(a / b).trunc() if db is not None else None)


def _xlogy_self_derivative(g, a, b):
    """``g`` times d xlogy(a, b) / da, as PyTorch's derivatives.yaml writes it:
    ``xlogy(g, b).masked_fill((a == 0) & (b <= 0), 0)``: ``g * log(b)`` (0 where ``g`` is 0),
    and 0 where ``a`` is 0 and ``log(b)`` is not finite.  For a Python number ``b``
    (``xlogy.Scalar_Other``) the mask is ``a == 0`` unless ``b > 0`` (a NaN ``b`` included)."""
    d = Xlogy.apply(g, b)
    if isinstance(b, (int, float)):
        return d if b > 0 else d.masked_fill(a == 0, 0)
    return d.masked_fill((a == 0) & (b <= 0), 0)


class Xlogy(Function):
    """``a * log(b)``, 0 where ``a == 0`` (also for ``b == 0``) unless ``b`` is NaN."""

    _backward_name = "XlogyBackward0"
    _number_operands = 2
    _saved_attrs = {"self": Saved(0), "other": Saved(1)}

    @staticmethod
    def forward(ctx, a, b):
        x, y = _float_pair(a, b)
        with quiet_fp():
            out = _apply(np.multiply, x, np.log(y))
        out = np.where((x == 0) & ~np.isnan(y), 0, out).astype(out.dtype, copy=False)
        _binary_meta(ctx, a, b, out)
        ctx.save_for_backward(a, b)  # PyTorch keeps both, whichever needs a gradient
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ma, mb = ctx.meta
        # d/da = log(b) (times grad: xlogy(grad, b)), 0 where a == 0 and b <= 0;  d/db = a / b
        ga = grad_for(_xlogy_self_derivative(grad, a, b), ma) if ctx.needs_input_grad[0] else None
        gb = grad_for(grad * a / b, mb) if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.primals
        d_self = _xlogy_self_derivative(da, a, b) if da is not None else None
        return sum_tangents(d_self, db * a / b if db is not None else None)
