"""Pooling: max and average over sliding windows (``F.max_pool2d``, ``F.avg_pool2d``...).

The windows come from the same strided view as convolution (``conv.windows``).
When the windows tile the input exactly (kernel == stride, no padding, sizes
divide) a plain ``reshape`` to (N, C, Ho, kh, Wo, kw) is enough and faster.
"""
import numpy as np

from ...autograd.function import Function, once_differentiable
from .conv import col2im, pad2d, windows


def out_size(size, k, s, p, d, ceil_mode):
    """Output length of a pooling window (PyTorch's ``pooling_output_shape``)."""
    span = d * (k - 1) + 1
    num = size + 2 * p - span + ((s - 1) if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1  # the last window must start inside the input or left padding
    return out


def _tiles(x, k):
    """True when (kh, kw) windows tile ``x`` exactly: pooling becomes a reshape."""
    return x.shape[2] % k[0] == 0 and x.shape[3] % k[1] == 0


class MaxPool2d(Function):
    """Max over each window; the gradient goes to the (first) max of each window."""

    _backward_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, input, kernel, stride, padding, dilation, ceil_mode):
        x = input.data
        n, c, h, w = x.shape
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
        ho = out_size(h, kh, sh, ph, dh, ceil_mode)
        wo = out_size(w, kw, sw, pw, dw, ceil_mode)
        fast = kernel == stride and padding == (0, 0) and dilation == (1, 1) and _tiles(x, kernel)
        if fast:
            # (N, C, Ho, kh, Wo, kw) -> (N, C, Ho, Wo, kh*kw): a copy, but a cheap one
            win = x.reshape(n, c, ho, kh, wo, kw).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, ho, wo, kh * kw)
        else:
            # pad with -inf (never the max); ceil_mode may need extra room at the end
            extra_h = max(0, (ho - 1) * sh + (kh - 1) * dh + 1 - (h + 2 * ph))
            extra_w = max(0, (wo - 1) * sw + (kw - 1) * dw + 1 - (w + 2 * pw))
            xp = pad2d(x, ((ph, ph + extra_h), (pw, pw + extra_w)), value=-np.inf)
            win = windows(xp, kernel, stride, dilation)[:, :, :ho, :wo].reshape(n, c, ho, wo, kh * kw)
        arg = win.argmax(axis=-1)  # position inside the window (first max, as PyTorch)
        out = np.take_along_axis(win, arg[..., None], axis=-1)[..., 0]
        ctx.meta = (x.shape, kernel, stride, padding, dilation, fast, (ho, wo))
        ctx.arg = arg
        return out

    @staticmethod
    def indices(ctx):
        """``return_indices=True``: the flat index ``h * W + w`` of each max in its input plane."""
        (n, c, h, w), (kh, kw), (sh, sw), (ph, pw), (dh, dw), _, (ho, wo) = ctx.meta
        ki, kj = np.divmod(ctx.arg, kw)
        rows = np.arange(ho)[:, None] * sh - ph + ki * dh
        cols = np.arange(wo)[None, :] * sw - pw + kj * dw
        return (rows * w + cols).astype(np.int64)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        from ..._tensor import Tensor

        (n, c, h, w), kernel, stride, padding, dilation, fast, (ho, wo) = ctx.meta
        g = grad.data
        kh, kw = kernel
        if fast:
            # one-hot of the argmax times the gradient, reshaped back to the input
            onehot = ctx.arg[..., None] == np.arange(kh * kw)
            dwin = (onehot * g[..., None]).reshape(n, c, ho, wo, kh, kw)
            dx = dwin.transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h, w)
            return Tensor._make(dx.astype(g.dtype, copy=False)), None, None, None, None, None
        # windows may overlap: add gradients at their flat input index with bincount
        flat = MaxPool2d.indices(ctx) + (np.arange(n * c) * (h * w)).reshape(n, c, 1, 1)
        dx = np.bincount(flat.ravel(), weights=g.ravel(), minlength=n * c * h * w)
        return Tensor._make(dx.reshape(n, c, h, w).astype(g.dtype)), None, None, None, None, None


def avg_divisor(size, k, s, p, out, count_include_pad):
    """How many elements each 1-D window averages (PyTorch's avg_pool2d rule)."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, size + p)
    pool = end - start  # counts padding, but not the ceil_mode overhang
    if not count_include_pad:
        pool = np.minimum(end, size) - np.maximum(start, 0)
    return pool


class AvgPool2d(Function):
    """Mean over each window; backward spreads ``grad / count`` over the window."""

    _backward_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, input, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
        x = input.data
        n, c, h, w = x.shape
        (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
        ho = out_size(h, kh, sh, ph, 1, ceil_mode)
        wo = out_size(w, kw, sw, pw, 1, ceil_mode)
        extra_h = max(0, (ho - 1) * sh + kh - (h + 2 * ph))
        extra_w = max(0, (wo - 1) * sw + kw - (w + 2 * pw))
        pads = ((ph, ph + extra_h), (pw, pw + extra_w))
        xp = pad2d(x, pads)
        total = windows(xp, kernel, stride, (1, 1))[:, :, :ho, :wo].sum(axis=(-2, -1))
        if divisor_override:
            div = np.asarray(divisor_override, dtype=x.dtype)
        else:  # an (Ho, Wo) table: windows at the border may count fewer elements
            div = np.outer(avg_divisor(h, kh, sh, ph, ho, count_include_pad),
                           avg_divisor(w, kw, sw, pw, wo, count_include_pad)).astype(x.dtype)
        ctx.meta = (x.shape, xp.shape, kernel, stride, pads, div)
        return total / div

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        from ..._tensor import Tensor

        x_shape, xp_shape, (kh, kw), stride, pads, div = ctx.meta
        g = grad.data / div
        # every element of a window receives the window's grad / count
        dwin = np.broadcast_to(g[..., None, None], g.shape + (kh, kw))
        dxp = col2im(dwin, xp_shape, stride, (1, 1))
        (top, _), (left, _) = pads
        dx = dxp[:, :, top: top + x_shape[2], left: left + x_shape[3]]
        return Tensor._make(np.ascontiguousarray(dx)), None, None, None, None, None, None


def adaptive_bounds(size, out):
    """Window [start, end) of each output cell: PyTorch's floor/ceil split."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


class AdaptiveAvgPool2d(Function):
    """Average over windows chosen so that the output has a given size."""

    _backward_name = "AdaptiveAvgPool2DBackward0"

    @staticmethod
    def forward(ctx, input, output_size):
        x = input.data
        h, w = x.shape[-2:]
        ho, wo = output_size
        # an averaging matrix per axis: out = Ah @ x @ Aw^T, exact for any sizes
        ah = _averaging_matrix(h, ho, x.dtype)
        aw = _averaging_matrix(w, wo, x.dtype)
        ctx.mats = (ah, aw)
        return ah @ x @ aw.T

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        from ..._tensor import Tensor

        ah, aw = ctx.mats
        return Tensor._make(ah.T @ grad.data @ aw), None


def _averaging_matrix(size, out, dtype):
    """(out, size) matrix whose row i averages the input cells of window i."""
    start, end = adaptive_bounds(size, out)
    idx = np.arange(size)
    inside = (idx >= start[:, None]) & (idx < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)
