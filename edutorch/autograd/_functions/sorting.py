"""``sort``, ``argsort`` and ``topk``: values are picked by position, so the
gradient goes back to the positions they were taken from (a scatter).
"""
import numpy as np

from ... import backend
from ..function import Function
from .._saved_attrs import Saved
from .reduction import MaxDim, evenly_distribute_backward
from .tangents import auto_reduction
from . import utils as _utils  # _utils._Tensor: edutorch.Tensor, without an import cycle
from ..._dtype import is_floating as _is_floating


def _sorted_positions(x, axis, descending):
    """Indices that sort ``x`` along ``axis``; equal values keep their order.

    As in PyTorch a NaN counts as the largest value: last when ascending (NumPy's
    order too), first when descending.
    """
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    if _is_floating(x.dtype):  # NaN first (the last key decides first), then largest first
        return np.lexsort((-x, ~np.isnan(x)), axis=axis)
    keys = -x.astype(np.int64) if x.dtype.kind in "bu" else -x  # largest first
    return np.argsort(keys, axis=axis, kind="stable")


class Sort(Function):
    """``x.sort(dim, descending)`` → (values, indices)."""

    _backward_name = "SortBackward0"

    @staticmethod
    def forward(ctx, a, axis, descending):
        x = a._data if a._data.ndim else a._data.reshape(1)
        idx = _sorted_positions(x, axis, descending)
        values = np.take_along_axis(x, idx, axis)
        ctx.axis, ctx.indices, ctx.in_shape = axis, idx, a._data.shape
        return values.reshape(a._data.shape), idx.reshape(a._data.shape).astype(np.int64)

    @staticmethod
    def backward(ctx, grad, grad_indices=None):
        return _scatter_back(ctx, grad), None, None

    @staticmethod
    def jvp(ctx, da, *_):
        return _picked_tangent(ctx, da)


class TopK(Function):
    """``x.topk(k, dim, largest)`` → (values, indices), largest first."""

    _backward_name = "TopkBackward0"

    @staticmethod
    def forward(ctx, a, k, axis, largest):
        x = a._data if a._data.ndim else a._data.reshape(1)
        size = x.shape[axis]
        if not 0 <= k <= size:
            raise RuntimeError("selected index k out of range")
        xp = backend.get_array_module(x)
        idx = xp.take(_sorted_positions(x, axis, largest), xp.arange(k), axis=axis)
        values = np.take_along_axis(x, idx, axis)
        ctx.axis, ctx.indices, ctx.in_shape = axis, idx, a._data.shape
        if not a._data.ndim:
            values, idx = values.reshape(()), idx.reshape(())
        return values, idx.astype(np.int64)

    @staticmethod
    def backward(ctx, grad, grad_indices=None):
        return _scatter_back(ctx, grad), None, None, None

    @staticmethod
    def jvp(ctx, da, *_):
        return _picked_tangent(ctx, da)


def _scatter_back(ctx, grad):
    """Zeros of the input's shape with ``grad`` written where each value came from."""

    shape = ctx.in_shape or (1,)
    g = grad if ctx.in_shape else grad.reshape(ctx.indices.shape)
    out = g.new_zeros(shape).scatter(ctx.axis, _utils._Tensor._make(ctx.indices.astype(np.int64)), g)
    return out if ctx.in_shape else out.reshape(())


def _picked_tangent(ctx, da):
    """The values' tangent: the input's tangent at the positions the values came from
    (the indices get none)."""
    t = da if ctx.in_shape else da.reshape(1)
    values = t.gather(ctx.axis, _utils._Tensor._make(ctx.indices.astype(np.int64)))
    return (values if ctx.in_shape else values.reshape(())), None


def median_positions(x, axis):
    """Where the lower median of each slice along ``axis`` sits (the first NaN if the slice has one)."""
    xp = backend.get_array_module(x)
    order = xp.argsort(x, axis=axis, kind="stable")  # NaN sorts last
    k = (x.shape[axis] - 1) // 2
    positions = xp.take(order, k, axis=axis)
    has_nan = xp.isnan(x).any(axis=axis) if _is_floating(x.dtype) else xp.zeros(positions.shape, bool)
    first_nan = xp.argmax(xp.isnan(x), axis=axis) if _is_floating(x.dtype) else positions
    return xp.where(has_nan, first_nan, positions).astype(np.int64)


class Median(Function):
    """``x.median()``: the lower median of all values (NaN if there is one); PyTorch's
    ``MedianBackward0`` shares the gradient evenly among the entries equal to it."""

    _backward_name = "MedianBackward0"
    _saved_attrs = {"result": Saved(1), "self": Saved(0)}

    @staticmethod
    def forward(ctx, a):
        _utils.refuse_bool(a._data, "median_cpu")
        x = a._data.reshape(-1)
        if x.size == 0:
            out = np.full((), np.nan, dtype=x.dtype)
        else:
            out = x[median_positions(x, 0)].reshape(())
        out = _utils._Tensor._make(out)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        return evenly_distribute_backward(grad, a, out)

    jvp = auto_reduction  # (tangents.py: Σ of backward(ones) · tangent)


class MedianDim(MaxDim):
    """``x.median(dim)``: (values, indices); the gradient goes to the returned index only
    (PyTorch's ``MedianBackward1``; which of several equal values it returns is not specified)."""

    _backward_name = "MedianBackward1"
    _arg = staticmethod(median_positions)
    _name = "median"
    _saved_attrs = MaxDim._saved_attrs

    @staticmethod
    def forward(ctx, a, dim, keepdim=False):
        _utils.refuse_bool(a._data, "median_cpu")
        return MedianDim._forward(ctx, a, dim, keepdim)


def kth_positions(k):
    """``positions(x, axis)``: where the ``k``-th smallest value of each slice along ``axis`` sits."""
    def positions(x, axis):
        if not 1 <= k <= x.shape[axis]:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
        return np.take(np.argsort(x, axis=axis, kind="stable"), k - 1, axis=axis)
    return positions


class Kthvalue(MaxDim):
    """``x.kthvalue(k, dim)``: (values, indices) of the ``k``-th smallest; the gradient goes to the
    returned index (PyTorch's ``KthvalueBackward0`` keeps only the indices, not the input)."""

    _backward_name = "KthvalueBackward0"
    _name = "kthvalue"
    _saved_attrs = MaxDim._saved_attrs

    @staticmethod
    def forward(ctx, a, k, dim=-1, keepdim=False):
        _utils.refuse_bool(a._data, "kthvalue_cpu")
        return Kthvalue._forward(ctx, a, dim, keepdim, kth_positions(k))

    @staticmethod
    def backward(ctx, grad, grad_indices=None):
        return MaxDim.backward(ctx, grad)[0], None, None, None
