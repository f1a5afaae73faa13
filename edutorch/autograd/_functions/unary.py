"""More element-wise math: log1p, sqrt, rsqrt, abs, sign, sin, cos.

Each derivative is written next to its forward, as in PyTorch's
``derivatives.yaml``:  d log1p(x) = 1/(1+x),  d sqrt(x) = 1/(2 sqrt(x)),
d rsqrt(x) = -rsqrt(x)³/2,  d|x| = sign(x),  d sin = cos,  d cos = -sin.
"""
import numpy as np

from ..function import Function
from .._saved_attrs import Saved
from . import utils as _utils  # _utils._Tensor: edutorch.Tensor, without an import cycle
from .tangents import auto_element_wise
from .utils import quiet_fp
from ..._dtype import is_floating as _is_floating
from ... import _dtype


def _float_input(a):
    """Integer tensors go through these functions as the default float (like PyTorch)."""
    x = a._data
    if not _is_floating(x.dtype):
        x = x.astype(_dtype.get_default_dtype().np)
    return x


def _output(data):

    return _utils._Tensor._make(data)


class Log1p(Function):
    _backward_name = "Log1PBackward0"
    _autocast_op = "log1p"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"self": Saved(0)}  # grad_fn._saved_self (_saved_attrs.py)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_fp():  # log1p(-1) = -inf, log1p(-2) = nan
            return np.log1p(_float_input(a))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / (a + 1)

    jvp = auto_element_wise  # (tangents.py: backward with the tangent as the gradient)


class Sqrt(Function):
    _backward_name = "SqrtBackward0"
    _saved_attrs = {"result": Saved(0)}

    @staticmethod
    def forward(ctx, a):
        with quiet_fp():  # sqrt(-1) = nan
            out = _output(np.sqrt(_float_input(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad / (2 * out)

    jvp = auto_element_wise


class Rsqrt(Function):
    _backward_name = "RsqrtBackward0"
    _autocast_op = "rsqrt"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"result": Saved(0)}

    @staticmethod
    def forward(ctx, a):
        x = _float_input(a)
        with quiet_fp():  # rsqrt(0) = inf, rsqrt(-1) = nan
            out = _output(1 / np.sqrt(x))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out * out * out * -0.5

    jvp = auto_element_wise


class Abs(Function):
    _backward_name = "AbsBackward0"
    _saved_attrs = {"self": Saved(0)}

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.abs(a._data)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a.sign()

    jvp = auto_element_wise


class Sign(Function):
    """``sign(x)`` is flat almost everywhere: its gradient is zero."""

    _backward_name = "SignBackward0"
    _zero_tangent = True  # the tangent formula reads no tangent (forward_ad)

    @staticmethod
    def forward(ctx, a):
        return _utils.sign(a._data)

    @staticmethod
    def backward(ctx, grad):
        return grad.new_zeros(grad.shape)

    jvp = auto_element_wise


class Sgn(Sign):
    """``sgn(x)`` of a real tensor: its sign, with PyTorch's node for it (``SgnBackward0``), which
    keeps the input and the result (its formula serves complex tensors, ``x / |x|``): a later
    in-place write to either refuses backward.  The gradient is zero, as ``sign``'s."""

    _backward_name = "SgnBackward0"
    _saved_attrs = {"self": Saved(0), "result": Saved(1)}

    @staticmethod
    def forward(ctx, a):
        out = _utils._Tensor._make(_utils.sign(a._data))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # noqa: B018 - PyTorch unpacks them: refuses if either was written since
        return grad.new_zeros(grad.shape)


class Sin(Function):
    _backward_name = "SinBackward0"
    _saved_attrs = {"self": Saved(0)}

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.sin(_float_input(a))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a.cos()

    jvp = auto_element_wise


class Cos(Function):
    _backward_name = "CosBackward0"
    _saved_attrs = {"self": Saved(0)}

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.cos(_float_input(a))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * -a.sin()

    jvp = auto_element_wise


class Reciprocal(Function):
    """``1 / x``; d/dx = -1/x² = -out²."""

    _backward_name = "ReciprocalBackward0"
    _autocast_op = "reciprocal"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"result": Saved(0)}

    @staticmethod
    def forward(ctx, a):
        with quiet_fp():  # 1/0 = inf
            out = _output(1 / _float_input(a))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return -grad * out * out

    jvp = auto_element_wise


class _Rounding(Function):
    """round/floor/ceil/trunc: piecewise constant, so the gradient is zero."""

    _zero_tangent = True  # the tangent formula reads no tangent (forward_ad)

    @staticmethod
    def backward(ctx, grad):
        return grad.new_zeros(grad.shape)

    jvp = auto_element_wise


class Round(_Rounding):
    _backward_name = "RoundBackward0"

    @staticmethod
    def forward(ctx, a):
        return np.round(a._data)  # halves to even, as PyTorch


class Floor(_Rounding):
    _backward_name = "FloorBackward0"

    @staticmethod
    def forward(ctx, a):
        return np.floor(a._data)


class Ceil(_Rounding):
    _backward_name = "CeilBackward0"

    @staticmethod
    def forward(ctx, a):
        return np.ceil(a._data)


class Trunc(_Rounding):
    _backward_name = "TruncBackward0"

    @staticmethod
    def forward(ctx, a):
        return np.trunc(a._data)


class NanToNum(Function):
    """``nan_to_num``: NaN -> ``nan``, +-inf -> ``posinf``/``neginf`` (the dtype's extremes by default).

    The gradient passes where the input was finite and is 0 where it was replaced.
    """

    _backward_name = "NanToNumBackward0"

    @staticmethod
    def forward(ctx, a, nan=0.0, posinf=None, neginf=None):
        x = a._data
        ctx.save_for_backward(a)
        if not _is_floating(x.dtype):
            return x.copy()
        return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a.isfinite(), None, None, None

    jvp = auto_element_wise
