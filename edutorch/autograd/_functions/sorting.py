"""``sort``, ``argsort`` and ``topk``: values are picked by position, so the
gradient goes back to the positions they were taken from (a scatter).
"""
import numpy as np

from ... import backend
from ..function import Function
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


def _scatter_back(ctx, grad):
    """Zeros of the input's shape with ``grad`` written where each value came from."""

    shape = ctx.in_shape or (1,)
    g = grad if ctx.in_shape else grad.reshape(ctx.indices.shape)
    out = g.new_zeros(shape).scatter(ctx.axis, _utils._Tensor._make(ctx.indices.astype(np.int64)), g)
    return out if ctx.in_shape else out.reshape(())
