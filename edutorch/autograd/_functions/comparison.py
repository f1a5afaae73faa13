"""Ops that pick values by comparing them: maximum, minimum, clamp, where.

The gradient flows to whichever input was picked.  Where two inputs tie,
``maximum``/``minimum`` split it half and half, as PyTorch does.
"""
import operator

import numpy as np

from ..function import Function
from .._saved_attrs import Saved
from . import utils as _utils  # _utils._Tensor: edutorch.Tensor, without an import cycle
from .tangents import auto_element_wise, auto_linear, zero_if_missing
from .utils import array_of, binary_arrays, broadcast_error, grad_for, input_meta
from ..._dtype import is_floating as _is_floating
from ... import _dtype


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


def _pick_backward(ctx, grad, loses):
    """PyTorch's rule: each input gets the gradient unless it ``loses`` the comparison; ties share it.

    ``maximum``: ``a`` gets nothing where ``a < b``, half where ``a == b``, all
    elsewhere -- and so does ``b`` with the roles swapped.  Where a NaN is
    compared, nobody loses and nobody ties: both inputs get the whole gradient.
    """
    a, b = ctx.saved_tensors
    dtype = grad.dtype
    scale = 1 - (a == b).to(dtype) * 0.5  # 1, or 1/2 on ties
    ma, mb = ctx.meta
    ga = grad_for(grad * scale * (1 - loses(a, b).to(dtype)), ma) if ctx.needs_input_grad[0] else None
    gb = grad_for(grad * scale * (1 - loses(b, a).to(dtype)), mb) if ctx.needs_input_grad[1] else None
    return ga, gb


def _pick_jvp(ctx, da, db, wins):
    """The tangent of ``maximum``/``minimum``: ``a``'s where ``a`` ``wins``, ``b``'s where it loses,
    the mean of the two on ties (PyTorch's formula)."""
    a, b = ctx.primals
    da, db = zero_if_missing(a, da), zero_if_missing(b, db)
    weight_a = wins(a, b).to(ctx.result.dtype).masked_fill(a == b, 0.5)
    return db + weight_a * (da - db)


class Maximum(Function):
    _backward_name = "MaximumBackward0"
    _saved_attrs = {"self": Saved(0), "other": Saved(1)}  # grad_fn._saved_* (_saved_attrs.py)

    @staticmethod
    def forward(ctx, a, b):
        return _pick_forward(ctx, np.maximum, a, b)

    @staticmethod
    def backward(ctx, grad):
        return _pick_backward(ctx, grad, operator.lt)  # an input loses where it is the smaller

    @staticmethod
    def jvp(ctx, da, db):
        return _pick_jvp(ctx, da, db, operator.gt)


class Minimum(Function):
    _backward_name = "MinimumBackward0"
    _saved_attrs = Maximum._saved_attrs

    @staticmethod
    def forward(ctx, a, b):
        return _pick_forward(ctx, np.minimum, a, b)

    @staticmethod
    def backward(ctx, grad):
        return _pick_backward(ctx, grad, operator.gt)  # an input loses where it is the larger

    @staticmethod
    def jvp(ctx, da, db):
        return _pick_jvp(ctx, da, db, operator.lt)


class Clamp(Function):
    """``clamp(x, min, max)`` with numbers: the gradient passes where min <= x <= max."""

    _backward_name = "ClampBackward1"
    _saved_attrs = {"min": lambda ctx: ctx.bounds[0], "max": lambda ctx: ctx.bounds[1], "self": Saved(0)}

    @staticmethod
    def forward(ctx, a, min=None, max=None):
        x = a._data
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        ctx.save_for_backward(a)
        ctx.bounds = (min, max)
        if not _is_floating(x.dtype) and any(isinstance(v, float) for v in (min, max)):
            x = x.astype(_dtype.get_default_dtype().np)
        min, max = (None if v is None else _utils.checked_scalar(v, x.dtype) for v in (min, max))
        out = x
        if min is not None:
            out = np.maximum(out, min)
        if max is not None:
            out = np.minimum(out, max)
        return _utils.in_dtype_of(out, x) if out is not x else x.copy()

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

    jvp = auto_element_wise  # (tangents.py: backward with the tangent as the gradient)


class ClampMin(Clamp):
    """``clamp_min(x, min)`` (also ``clamp(x, min=...)`` written as its own op)."""

    _backward_name = "ClampMinBackward0"
    _saved_attrs = {"min": lambda ctx: ctx.bounds[0], "self": Saved(0)}


class ClampMax(Clamp):
    _backward_name = "ClampMaxBackward0"
    _saved_attrs = {"max": lambda ctx: ctx.bounds[1], "self": Saved(0)}


class ClampTensor(Function):
    """``clamp(x, min, max)`` with tensor bounds: each gets the gradient where it was picked."""

    _backward_name = "ClampBackward0"

    @staticmethod
    def forward(ctx, a, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        x = a._data
        out = x
        for bound, pick in ((min, np.maximum), (max, np.minimum)):
            if bound is not None:
                bound = binary_arrays(a, bound)[1]
                try:
                    out = pick(out, bound)
                except ValueError:  # shapes that do not broadcast: PyTorch's RuntimeError
                    raise broadcast_error(out, bound) from None
        out = out.astype(x.dtype, copy=out is x)
        _meta(ctx, out, a, min, max)
        ctx.save_for_backward(a, min, max)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, lo, hi = ctx.saved_tensors
        ma, mlo, mhi = ctx.meta
        # PyTorch's clamp_backward_min_max.  Comparisons with NaN are False, so a NaN in
        # x or in a bound passes no gradient; when min > max, max wins.
        if lo is not None and hi is not None:
            keep, to_lo, to_hi = (a >= lo) & (a <= hi), (a < lo) & (hi > lo), (a > hi) | (hi < lo)
        elif lo is not None:
            keep, to_lo, to_hi = a >= lo, a < lo, None
        else:
            keep, to_lo, to_hi = a <= hi, None, a > hi
        ga = grad_for(grad.masked_fill(~keep, 0), ma) if ctx.needs_input_grad[0] else None
        glo = grad_for(grad.masked_fill(~to_lo, 0), mlo) if lo is not None and ctx.needs_input_grad[1] else None
        ghi = grad_for(grad.masked_fill(~to_hi, 0), mhi) if hi is not None and ctx.needs_input_grad[2] else None
        return ga, glo, ghi

    @staticmethod
    def jvp(ctx, da, dlo, dhi):
        """The tangent of whichever was picked; when min > max, max's (PyTorch's ``clamp_jvp``)."""
        a, lo, hi = ctx.primals
        da = zero_if_missing(a, da)
        if lo is not None:
            dlo = zero_if_missing(lo, dlo)
        if hi is not None:
            dhi = zero_if_missing(hi, dhi)
        if lo is not None and hi is not None:
            return dhi.where(lo > hi, dlo.where(a < lo, dhi.where(a > hi, da)))
        if lo is not None:
            return da.where(a > lo, dlo)
        return da.where(a < hi, dhi)


class Where(Function):
    """``where(condition, a, b)``: ``a`` where the condition holds, else ``b``."""

    _backward_name = "WhereBackward0"
    _saved_attrs = {"condition": Saved(0)}

    @staticmethod
    def forward(ctx, condition, a, b):
        cond = array_of(condition)
        if cond.dtype.kind != "b":
            raise RuntimeError(
                "where expected condition to be a boolean tensor, but got a tensor with dtype "
                f"{_dtype.scalar_type_name(condition.dtype)}"
            )
        x, y = binary_arrays(a, b)
        if isinstance(a, _utils._Tensor) or isinstance(b, _utils._Tensor):
            for v in (a, b):  # a Python number must fit the result's dtype (PyTorch's checked conversion)
                if isinstance(v, (int, float)):
                    _utils.checked_scalar(v, _dtype.result_type(a, b).np)
        if not isinstance(a, _utils._Tensor) and not isinstance(b, _utils._Tensor):
            x, y = binary_arrays(_utils._Tensor._make(np.asarray(x)), y)
        try:
            out = np.where(cond, x, y)
        except ValueError:
            raise broadcast_error(x, y) from None
        _meta(ctx, out, a, b)
        ctx.save_for_backward(condition)
        return out

    @staticmethod
    def backward(ctx, grad):
        (cond,) = ctx.saved_tensors
        ma, mb = ctx.meta
        ga = grad_for(grad.masked_fill(~cond, 0), ma) if ctx.needs_input_grad[1] else None
        gb = grad_for(grad.masked_fill(cond, 0), mb) if ctx.needs_input_grad[2] else None
        return None, ga, gb

    jvp = auto_linear(1, 2)  # where(condition, da, db)
