"""Indexing ``x[idx]``: the gradient is scattered back into a zero tensor.

Advanced (integer-array) indices may repeat; ``np.add.at`` accumulates the
gradient of every repeat instead of keeping only the last write.
"""
import numpy as np

from ..function import Function


def to_index(idx):
    """Turn Tensors inside an index expression into arrays NumPy understands."""
    from ..._tensor import Tensor

    if isinstance(idx, Tensor):
        return idx.data
    if isinstance(idx, tuple):
        return tuple(to_index(i) for i in idx)
    if isinstance(idx, list) and any(isinstance(i, Tensor) for i in idx):
        return [to_index(i) for i in idx]
    return idx


def is_basic(idx):
    """True if ``idx`` selects a view (ints, slices, None, Ellipsis only)."""
    items = idx if isinstance(idx, tuple) else (idx,)
    return all(isinstance(i, (int, slice, type(None), type(Ellipsis))) and not isinstance(i, bool) for i in items)


class Index(Function):
    _backward_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, a, idx):
        from ..._tensor import Tensor

        ctx.in_shape, ctx.idx = a.data.shape, idx
        out = a.data[idx]
        if is_basic(idx):  # a view: shares memory and version counter with ``a``
            return Tensor._make(out, False, None, 0, a._version_counter)
        return out

    @staticmethod
    def backward(ctx, grad):
        return IndexBackward.apply(grad, ctx.in_shape, ctx.idx), None


class IndexBackward(Function):
    """Scatter-add ``grad`` into zeros of ``shape`` at ``idx`` (differentiable too)."""

    _backward_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, grad, shape, idx):
        from ... import backend

        xp = backend.get_array_module(grad.data)
        ctx.idx = idx
        out = xp.zeros(shape, dtype=grad.data.dtype)
        if is_basic(idx):
            out[idx] = grad.data
        else:
            (np.add.at if xp is np else xp.add.at)(out, idx, grad.data)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad[ctx.idx], None, None
