"""``F.embedding`` (a table lookup) and ``F.pad``, each with a backward that is differentiable again."""
import numpy as np

from ... import backend

from ...autograd.function import Function
from ...autograd._saved_attrs import Saved, int64
from .utils import constant
from ...autograd._functions.tangents import auto_linear


class Embedding(Function):
    """``weight[indices]``: row ``i`` of the table for each index ``i``.

    Backward adds each output row's gradient into the row it was read from
    (an index used twice gets both gradients); the ``padding_idx`` row gets none.
    """

    _backward_name = "EmbeddingBackward0"
    # grad_fn._saved_<name> (autograd/_saved_attrs.py); PyTorch stores "no padding_idx" as -1
    _saved_attrs = {
        "indices": Saved(0), "padding_idx": lambda ctx: int64(-1 if ctx.meta[1] is None else ctx.meta[1]),
        "scale_grad_by_freq": lambda ctx: ctx.meta[2], "sparse": lambda ctx: False,  # sparse=True is refused
        "weight_sym_argsize_0": lambda ctx: ctx.meta[0][0],
    }

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq=False):
        ctx.meta = (weight._data.shape, padding_idx, scale_grad_by_freq)
        ctx.save_for_backward(indices)  # changing the indices before backward is PyTorch's error
        return weight._data[indices._data]

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        shape, padding_idx, scale_grad_by_freq = ctx.meta
        gw = EmbeddingBackward.apply(grad, shape, indices._data, padding_idx, scale_grad_by_freq)
        return gw, None, None, None

    jvp = auto_linear(0)  # rows of the weight's tangent (autograd/_functions/tangents.py)


def _row_factors(flat, num, padding_idx, scale_grad_by_freq, dtype):
    """What each looked-up row's gradient is multiplied by: 0 for ``padding_idx``, 1/count if scaled."""
    factor = backend.get_array_module(flat).ones(flat.shape, dtype=dtype)
    if padding_idx is not None:
        factor *= flat != padding_idx
    if scale_grad_by_freq:  # divide by how often each index occurs in this batch
        factor /= np.bincount(flat, minlength=num)[flat]
    return factor[:, None]


class EmbeddingBackward(Function):
    """The gradient of the lookup: each output row's gradient added into its table row.

    Linear in ``grad``; its own backward is a lookup again (``gg[indices]``), so
    ``create_graph=True`` works through an embedding.
    """

    _backward_name = "EmbeddingDenseBackward0"

    @staticmethod
    def forward(ctx, grad, table_shape, idx, padding_idx, scale_grad_by_freq):
        num, dim = table_shape
        ctx.meta = (idx, padding_idx, scale_grad_by_freq, num)
        flat = idx.reshape(-1)
        g = grad._data.reshape(-1, dim) * _row_factors(flat, num, padding_idx, scale_grad_by_freq, grad._data.dtype)
        dw = backend.get_array_module(g).zeros((num, dim), dtype=g.dtype)
        backend.get_array_module(dw).add.at(dw, flat, g)  # unbuffered: repeated indices accumulate
        return dw

    @staticmethod
    def backward(ctx, gg):
        idx, padding_idx, scale_grad_by_freq, num = ctx.meta
        flat = idx.reshape(-1)
        factor = _row_factors(flat, num, padding_idx, scale_grad_by_freq, gg._data.dtype)
        rows = gg[constant(flat)] * constant(factor)
        return rows.reshape(*idx.shape, gg.shape[1]), None, None, None, None

    jvp = auto_linear(0)


def constant_padded(x, widths, value):
    """``np.pad(x, widths, constant_values=value)``, faster: a filled array with ``x`` copied into its middle.

    A negative width crops instead (PyTorch's ``constant_pad_nd`` narrows first)."""
    x = x[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(widths, x.shape))]
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    shape = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, widths))
    out = backend.get_array_module(x).full(shape, value, dtype=x.dtype)
    out[tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, x.shape))] = x
    return out


class Pad(Function):
    """``F.pad``: add values around the last dims; backward slices the middle back out.

    For ``'reflect'``, ``'replicate'`` and ``'circular'`` the padded values are
    copies of inputs, so their gradients flow back too: we pad an array of
    *positions* the same way and add every output gradient at its source.
    """

    _backward_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, input, widths, mode, value):
        x = input._data
        ctx.meta = (x.shape, widths, mode)
        if mode in ("reflect", "replicate"):  # PyTorch's reflection/replication pads save the input
            ctx.save_for_backward(input)
        if mode == "constant":
            return constant_padded(x, widths, value)
        np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
        return np.pad(x, widths, mode=np_mode)

    @staticmethod
    def backward(ctx, grad):
        shape, widths, mode = ctx.meta
        return PadBackward.apply(grad, shape, widths, mode), None, None, None

    jvp = auto_linear(0, 3)  # the padded tangent (0 for a number value)


class PadBackward(Function):
    """The gradient of ``F.pad``: crop the middle, and add each padded copy back to its source.

    Linear in ``grad``; its own backward pads again (with zeros for ``'constant'``),
    so ``create_graph=True`` works through ``F.pad``.
    """

    _backward_name = "ConstantPadNdBackward0"  # PyTorch's: a pad with negated widths

    @staticmethod
    def forward(ctx, grad, shape, widths, mode):
        ctx.meta = (widths, mode)
        g = grad._data
        if mode == "constant":  # the middle: a pad with the widths negated (zeros where it cropped)
            return constant_padded(g, [(-lo, -hi) for lo, hi in widths], 0)
        np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
        source = np.pad(np.arange(int(np.prod(shape))).reshape(shape), widths, mode=np_mode)
        dx = np.bincount(source.ravel(), weights=g.ravel(), minlength=int(np.prod(shape)))
        return dx.reshape(shape).astype(g.dtype)

    @staticmethod
    def backward(ctx, gg):
        widths, mode = ctx.meta
        return Pad.apply(gg, widths, mode, 0.0), None, None, None

    jvp = auto_linear(0)
