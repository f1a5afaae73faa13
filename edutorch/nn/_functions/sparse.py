"""``F.embedding`` (a table lookup) and ``F.one_hot``."""
import numpy as np

from ...autograd.function import Function
from ..._tensor import Tensor


class Embedding(Function):
    """``weight[indices]``: row ``i`` of the table for each index ``i``.

    Backward adds each output row's gradient into the row it was read from
    (an index used twice gets both gradients); the ``padding_idx`` row gets none.
    """

    _backward_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq=False):
        idx = indices.data
        ctx.meta = (weight.data.shape, idx, padding_idx, scale_grad_by_freq)
        return weight.data[idx]

    @staticmethod
    def backward(ctx, grad):
        (num, dim), idx, padding_idx, scale_grad_by_freq = ctx.meta
        g = grad.data.reshape(-1, dim)
        flat = idx.reshape(-1)
        if padding_idx is not None:
            g = g * (flat != padding_idx)[:, None]
        if scale_grad_by_freq:  # divide by how often each index occurs in this batch
            counts = np.bincount(flat, minlength=num)
            g = g / counts[flat][:, None].astype(g.dtype)
        dw = np.zeros((num, dim), dtype=g.dtype)
        np.add.at(dw, flat, g)  # unbuffered: repeated indices accumulate
        return Tensor._make(dw), None, None, None


class Pad(Function):
    """``F.pad``: add values around the last dims; backward slices the middle back out.

    For ``'reflect'``, ``'replicate'`` and ``'circular'`` the padded values are
    copies of inputs, so their gradients flow back too: we pad an array of
    *positions* the same way and add every output gradient at its source.
    """

    _backward_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, input, widths, mode, value):
        x = input.data
        ctx.meta = (x.shape, widths, mode)
        if mode == "constant":
            return np.pad(x, widths, constant_values=value)
        np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
        return np.pad(x, widths, mode=np_mode)

    @staticmethod
    def backward(ctx, grad):
        shape, widths, mode = ctx.meta
        g = grad.data
        if mode == "constant":
            inner = tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, shape))
            return Tensor._make(np.ascontiguousarray(g[inner])), None, None, None
        np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
        source = np.pad(np.arange(int(np.prod(shape))).reshape(shape), widths, mode=np_mode)
        dx = np.bincount(source.ravel(), weights=g.ravel(), minlength=int(np.prod(shape)))
        return Tensor._make(dx.reshape(shape).astype(g.dtype)), None, None, None
