"""Ops that pick values by comparing them: maximum, minimum, clamp, where.

The gradient flows to whichever input was picked.  Where two inputs tie,
``maximum``/``minimum`` split it half and half, as PyTorch does.
"""
import operator

import numpy as np

from ..function import Function
from . import utils as _utils  # _utils._Tensor: edutorch.Tensor, without an import cycle
from .utils import array_of, binary_arrays, broadcast_error, grad_for, input_meta


def _meta(ctx, out, *inputs):
    ctx.meta = tuple(input_meta(t, out.shape, out.dtype) for t in inputs)


def _pick_forward(ctx, ufunc, a, b):
    """``np.maximum``/``np.minimum`` of the operands, with PyTorch's broadcast error."""
    x, y = binary_arrays(a, b)
    try:
        out = ufunc(x, y)
    except ValueError:
        raise broadcast_error(x, y) from None
    _meta(ctx, out, a, b)
    ctx.save_for_backward(a, b)
    return out


def _pick_backward(ctx, grad, wins):
    """The gradient goes to the input that ``wins``; on ties, half to each."""
    a, b = ctx.saved_tensors
    share = wins(a, b).to(grad.dtype) + (a == b).to(grad.dtype) * 0.5
    return _split(ctx, grad, share)


class Maximum(Function):
    _backward_name = "MaximumBackward0"

    @staticmethod
    def forward(ctx, a, b):
        return _pick_forward(ctx, np.maximum, a, b)

    @staticmethod
    def backward(ctx, grad):
        return _pick_backward(ctx, grad, operator.gt)


class Minimum(Function):
    _backward_name = "MinimumBackward0"

    @staticmethod
    def forward(ctx, a, b):
        return _pick_forward(ctx, np.minimum, a, b)

    @staticmethod
    def backward(ctx, grad):
        return _pick_backward(ctx, grad, operator.lt)


def _split(ctx, grad, share):
    """``share`` of the gradient goes to the first input, the rest to the second."""
    ma, mb = ctx.meta
    ga = grad_for(grad * share, ma) if ctx.needs_input_grad[0] else None
    gb = grad_for(grad * (1 - share), mb) if ctx.needs_input_grad[1] else None
    return ga, gb


class Clamp(Function):
    """``clamp(x, min, max)`` with numbers: the gradient passes where min <= x <= max."""

    _backward_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, a, min=None, max=None):
        x = a.data
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        ctx.save_for_backward(a)
        ctx.bounds = (min, max)
        if x.dtype.kind != "f" and any(isinstance(v, float) for v in (min, max)):
            from ... import _dtype

            x = x.astype(_dtype.get_default_dtype().np)
        out = x
        if min is not None:
            out = np.maximum(out, min)
        if max is not None:
            out = np.minimum(out, max)
        return out if out is not x else x.copy()

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        lo, hi = ctx.bounds
        keep = None
        if lo is not None:
            keep = a >= lo
        if hi is not None:
            keep = (a <= hi) if keep is None else keep & (a <= hi)
        return grad * keep, None, None


class ClampMin(Clamp):
    """``clamp_min(x, min)`` (also ``clamp(x, min=...)`` written as its own op)."""

    _backward_name = "ClampMinBackward0"


class ClampMax(Clamp):
    _backward_name = "ClampMaxBackward0"


class ClampTensor(Function):
    """``clamp(x, min, max)`` with tensor bounds: each gets the gradient where it was picked."""

    _backward_name = "ClampBackward0"

    @staticmethod
    def forward(ctx, a, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        x = a.data
        out = x
        if min is not None:
            out = np.maximum(out, binary_arrays(a, min)[1])
        if max is not None:
            out = np.minimum(out, binary_arrays(a, max)[1])
        out = out.astype(x.dtype, copy=out is x)
        _meta(ctx, out, a, min, max)
        ctx.save_for_backward(a, min, max)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, lo, hi = ctx.saved_tensors
        ma, mlo, mhi = ctx.meta
        below = (a < lo) if lo is not None else None
        above = (a > hi) if hi is not None else None
        if hi is not None and lo is not None:
            below = below & ~above  # when min > max, max wins (as in PyTorch)
        inside = ~(below | above) if (below is not None and above is not None) else \
            ~(below if below is not None else above)
        ga = grad_for(grad * inside, ma) if ctx.needs_input_grad[0] else None
        glo = grad_for(grad * below, mlo) if lo is not None and ctx.needs_input_grad[1] else None
        ghi = grad_for(grad * above, mhi) if hi is not None and ctx.needs_input_grad[2] else None
        return ga, glo, ghi


class Where(Function):
    """``where(condition, a, b)``: ``a`` where the condition holds, else ``b``."""

    _backward_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, condition, a, b):
        cond = array_of(condition)
        if cond.dtype.kind != "b":
            from ... import _dtype

            raise RuntimeError(
                "where expected condition to be a boolean tensor, but got a tensor with dtype "
                f"{_dtype.scalar_type_name(condition.dtype)}"
            )
        x, y = binary_arrays(a, b)

        if not isinstance(a, _utils._Tensor) and not isinstance(b, _utils._Tensor):
            x, y = binary_arrays(_utils._Tensor._make(np.asarray(x)), y)
        try:
            out = np.where(cond, x, y)
        except ValueError:
            raise broadcast_error(x, y) from None
        _meta(ctx, out, a, b)
        ctx.condition = condition
        return out

    @staticmethod
    def backward(ctx, grad):
        cond = ctx.condition
        ma, mb = ctx.meta
        ga = grad_for(grad.masked_fill(~cond, 0), ma) if ctx.needs_input_grad[1] else None
        gb = grad_for(grad.masked_fill(cond, 0), mb) if ctx.needs_input_grad[2] else None
        return None, ga, gb
