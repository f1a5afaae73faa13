"""Pooling: max and average over sliding windows (``F.max_pool2d``, ``F.avg_pool2d``...).

As in convolution (``conv.py``), we loop over the kh*kw *offsets* of the
window, not over the output positions: offset (i, j) of every window at once
is one strided slice of the input, so a 2x2 pool is four vectorised steps.

Each backward is written once and works for ``create_graph=True`` too (double
backward), as in PyTorch: a pooling is linear in its input once the windows
(and, for max pooling, each window's argmax) are fixed, so its backward is a
Function of ``grad`` whose own gradient is the pooling again: max pooling's
backward scatters ``grad`` to the argmax positions (its gradient *gathers*
there), average pooling's spreads ``grad / count`` over each window (its
gradient is the average pooling itself), the adaptive average is two matrix
products.
"""
import numpy as np

from ... import backend

from ...autograd.function import Function
from .conv import _crop, _offset_slices, col2im, pad2d
from .utils import constant
from ...autograd._functions.tangents import auto_linear


def out_size(size, k, s, p, d, ceil_mode):
    """Output length of a pooling window (PyTorch's ``pooling_output_shape``)."""
    span = d * (k - 1) + 1
    num = size + 2 * p - span + ((s - 1) if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1  # the last window must start inside the input or left padding
    return out


def _padded(x, kernel, stride, padding, dilation, out_hw, value):
    """Pad H, W (``value``), with extra room at the end for ceil_mode's last window."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    ho, wo = out_hw
    extra_h = max(0, (ho - 1) * sh + (kh - 1) * dh + 1 - (x.shape[2] + 2 * ph))
    extra_w = max(0, (wo - 1) * sw + (kw - 1) * dw + 1 - (x.shape[3] + 2 * pw))
    pads = ((ph, ph + extra_h), (pw, pw + extra_w))
    return pad2d(x, pads, value), pads


def _zeros_for_input(ctx, grad_grad):
    """A pooling backward's gradient w.r.t. the pooling's input: zeros (PyTorch's ``zeros_like(self)``).

    ``grad_grad``, the gradient of the pooling's input gradient, has that input's shape.
    """
    return grad_grad.new_zeros(grad_grad.shape) if ctx.needs_input_grad[1] else None


class MaxPool2d(Function):
    """Max over each window; the gradient goes to the (first) max of each window."""

    _backward_name = "MaxPool2DWithIndicesBackward0"
    _profiler_name = "aten::max_pool2d"  # its torch.profiler event (not derived from the node name)

    @staticmethod
    def forward(ctx, input, kernel, stride, padding, dilation, ceil_mode):
        x = input._data
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
        hw = (out_size(x.shape[2], kh, sh, ph, dh, ceil_mode), out_size(x.shape[3], kw, sw, pw, dw, ceil_mode))
        xp, pads = _padded(x, kernel, stride, padding, dilation, hw, -np.inf)  # -inf is never the max
        ctx.x_shape, ctx.pads, ctx.hw = x.shape, pads, hw  # hw: the output's (height, width)
        ctx.kernel, ctx.stride, ctx.padding, ctx.dilation = kernel, stride, padding, dilation
        ctx.save_for_backward(input)  # version-checked: ``xp`` may be the input's own array
        ctx.xp = xp
        offsets = [_offset_slices(p // kw, p % kw, hw, stride, dilation) for p in range(kh * kw)]
        if len(offsets) == 1:  # 1x1 windows: every element is its own max
            out = xp[offsets[0]].copy()
        else:  # the elementwise max of the shifted planes, one per kernel offset
            out = np.maximum(xp[offsets[0]], xp[offsets[1]])
            for sl in offsets[2:]:
                np.maximum(out, xp[sl], out=out)
        # backward finds each window's max by comparing with these values: a graph node keeps
        # a private copy, as the user may change the output in place (PyTorch saves the argmax
        # indices instead); a throwaway ctx (no graph, or ``indices``) may read ``out`` itself
        ctx.out = out.copy() if ctx.needs_input_grad[0] else out
        return out

    @staticmethod
    def first_max(ctx):
        """For each kernel offset: (input region, mask of the windows whose max sits there).

        PyTorch's kernel scans a window and keeps ``val > max or isnan(val)``: on
        ties the FIRST maximum wins, so a window already matched at an earlier
        offset is excluded from the later masks; a NaN is the maximum, and of
        several NaNs the LAST one wins.
        """
        (kh, kw), stride, dilation, hw = ctx.kernel, ctx.stride, ctx.dilation, ctx.hw
        xp = backend.get_array_module(ctx.out)
        found = xp.zeros(ctx.out.shape, dtype=bool)
        hit = xp.empty(ctx.out.shape, dtype=bool)
        nan_windows = np.isnan(ctx.out)
        last_nan = MaxPool2d.last_nan_offset(ctx) if nan_windows.any() else None
        for p in range(kh * kw):
            sl = _offset_slices(p // kw, p % kw, hw, stride, dilation)
            np.equal(ctx.xp[sl], ctx.out, out=hit)
            np.greater(hit, found, out=hit)  # hit and not found before
            found |= hit
            if last_nan is not None:  # NaN != NaN: those windows are matched by position
                hit |= nan_windows & (last_nan == p)
            yield p, sl, hit

    @staticmethod
    def last_nan_offset(ctx):
        """For each window, the last kernel offset holding a NaN (-1 if none)."""
        (kh, kw), stride, dilation, hw = ctx.kernel, ctx.stride, ctx.dilation, ctx.hw
        last = backend.get_array_module(ctx.out).full(ctx.out.shape, -1)
        for p in range(kh * kw):
            last[np.isnan(ctx.xp[_offset_slices(p // kw, p % kw, hw, stride, dilation)])] = p
        return last

    @staticmethod
    def indices(ctx):
        """``return_indices=True``: the flat index ``h * W + w`` of each max in its input plane."""
        w, kw = ctx.x_shape[3], ctx.kernel[1]
        (sh, sw), (ph, pw), (dh, dw), (ho, wo) = ctx.stride, ctx.padding, ctx.dilation, ctx.hw
        xp = backend.get_array_module(ctx.out)
        arg = xp.zeros(ctx.out.shape, dtype=np.int64)  # which kernel offset holds the max
        for p, _, hit in MaxPool2d.first_max(ctx):
            arg[hit] = p
        ki, kj = xp.divmod(arg, kw)
        rows = xp.arange(ho)[:, None] * sh - ph + ki * dh
        cols = xp.arange(wo)[None, :] * sw - pw + kj * dw
        return rows * w + cols

    @staticmethod
    def backward(ctx, grad):
        return MaxPool2dBackward.apply(grad, *ctx.saved_tensors, ctx), None, None, None, None, None

    @staticmethod
    def jvp(ctx, d_input, *_):
        return at_maxima(ctx, d_input)  # each window's tangent is its max's


class MaxPool2dBackward(Function):
    """The gradient of max pooling: each window's ``grad`` goes to its (first) max.

    Linear in ``grad`` (the argmax is fixed): its own gradient gathers the
    incoming gradient at the argmax, as PyTorch's ``max_pool_double_backward``.
    ``pool`` is the max pooling's node, which knows the windows and their maxima.
    As in PyTorch, the pooling's ``input`` is an input here too, with a zero gradient.
    """

    _backward_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, pool):
        ctx.pool = pool
        g = grad._data
        dxp = backend.get_array_module(g).zeros(pool.xp.shape, dtype=g.dtype)
        # windows that do not overlap write each input pixel at most once: plain stores
        overlap = any(s < (k - 1) * d + 1 for s, k, d in zip(pool.stride, pool.kernel, pool.dilation))
        for _, sl, hit in MaxPool2d.first_max(pool):  # each window's gradient goes to its max
            if overlap:
                dxp[sl] += g * hit
            else:
                np.multiply(g, hit, out=dxp[sl])
        return _crop(dxp, pool.pads, pool.x_shape[2:])

    @staticmethod
    def backward(ctx, grad_grad):
        return at_maxima(ctx.pool, grad_grad), _zeros_for_input(ctx, grad_grad), None

    jvp = auto_linear(0)  # linear in grad (autograd/_functions/tangents.py)


def at_maxima(pool, t):
    """The values of ``t`` (shaped like the pooling's input) at each window's max: the tangent of
    max pooling, and the gradient of its backward."""
    n, c, h, w = t.shape
    index = constant(MaxPool2d.indices(pool))  # (N, C, Ho, Wo) flat indices into each plane
    flat_index = index.reshape(n, c, index.shape[2] * index.shape[3])  # sizes spelled out: N may be 0
    return t.reshape(n, c, h * w).gather(2, flat_index).reshape(index.shape)


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
        x = input._data
        (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
        hw = (out_size(x.shape[2], kh, sh, ph, 1, ceil_mode), out_size(x.shape[3], kw, sw, pw, 1, ceil_mode))
        xp, pads = _padded(x, kernel, stride, padding, (1, 1), hw, 0.0)
        total = backend.get_array_module(x).zeros(x.shape[:2] + hw, dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                total += xp[_offset_slices(i, j, hw, stride, (1, 1))]
        if divisor_override:
            div = np.asarray(divisor_override, dtype=x.dtype)
        else:  # an (Ho, Wo) table: windows at the border may count fewer elements
            div = np.outer(avg_divisor(x.shape[2], kh, sh, ph, hw[0], count_include_pad),
                           avg_divisor(x.shape[3], kw, sw, pw, hw[1], count_include_pad)).astype(x.dtype)
            div = backend.get_array_module(x).asarray(div)  # the table is built on the host
        ctx.x_shape, ctx.xp_shape, ctx.kernel, ctx.stride, ctx.pads = x.shape, xp.shape, kernel, stride, pads
        ctx.div = div  # the count each window's sum is divided by
        ctx.args = (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
        ctx.save_for_backward(input)  # what PyTorch saves (backward does not read it)
        return total / div

    @staticmethod
    def backward(ctx, grad):
        return AvgPool2dBackward.apply(grad, *ctx.saved_tensors, ctx), None, None, None, None, None, None

    jvp = auto_linear(0)  # the average of the tangent


class AvgPool2dBackward(Function):
    """The gradient of average pooling: every element of a window receives the window's grad / count.

    Linear in ``grad``; its own gradient is the average pooling of the incoming
    gradient (PyTorch's double backward of ``avg_pool2d``).  ``pool`` is the
    average pooling's node: the windows, their counts and its arguments.  As in
    PyTorch, the pooling's ``input`` is an input here too, with a zero gradient.
    """

    _backward_name = "AvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, pool):
        ctx.pool = pool
        (kh, kw), stride = pool.kernel, pool.stride
        g = grad._data / pool.div
        n, c, ho, wo = g.shape
        dcols = np.broadcast_to(g[:, None, None, None], (n, 1, kh, kw, c, ho, wo))  # col2im's layout
        dxp = col2im(dcols, pool.xp_shape, stride, (1, 1))
        return _crop(dxp, pool.pads, pool.x_shape[2:])

    @staticmethod
    def backward(ctx, grad_grad):
        zeros = _zeros_for_input(ctx, grad_grad)
        return AvgPool2d.apply(grad_grad, *ctx.pool.args), zeros, None

    jvp = auto_linear(0)


def adaptive_bounds(size, out):
    """Window [start, end) of each output cell: PyTorch's floor/ceil split."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


class AdaptiveAvgPool2d(Function):
    """Average over windows chosen so that the output has a given size."""

    _backward_name = "AdaptiveAvgPool2DBackward0"

    @staticmethod
    def forward(ctx, input, output_size):
        x = input._data
        h, w = x.shape[-2:]
        ho, wo = output_size
        # an averaging matrix per axis: out = Ah @ x @ Aw^T, exact for any sizes
        ah = _averaging_matrix(h, ho, x.dtype)
        aw = _averaging_matrix(w, wo, x.dtype)
        ctx.mats, ctx.output_size = (ah, aw), output_size
        ctx.save_for_backward(input)  # what PyTorch saves (backward does not read it)
        return ah @ x @ aw.T

    @staticmethod
    def backward(ctx, grad):
        return AdaptiveAvgPool2dBackward.apply(grad, *ctx.saved_tensors, ctx), None

    jvp = auto_linear(0)


class AdaptiveAvgPool2dBackward(Function):
    """The gradient of ``Ah @ x @ Aw^T``: ``Ah^T @ grad @ Aw``.

    Linear in ``grad``; its own gradient is the adaptive average pooling again
    (as in PyTorch).  ``pool`` is the pooling's node: its averaging matrices.
    As in PyTorch, the pooling's ``input`` is an input here too, with a zero gradient.
    """

    _backward_name = "AdaptiveAvgPool2DBackwardBackward0"
    _profiler_name = "aten::_adaptive_avg_pool2d_backward"  # its torch.profiler event (not derived from the node name)

    @staticmethod
    def forward(ctx, grad, input, pool):
        g = grad._data
        empty = [d for d in range(1, g.ndim) if g.shape[d] == 0]
        if empty:  # PyTorch's kernel refuses an empty non-batch dim here (the forward ran)
            raise RuntimeError("adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size for non-batch "
                               f"dimensions, but grad_output has sizes {list(g.shape)} with dimension {empty[0]} being empty")
        ctx.pool = pool
        ah, aw = pool.mats
        return ah.T @ g @ aw

    @staticmethod
    def backward(ctx, grad_grad):
        zeros = _zeros_for_input(ctx, grad_grad)
        return AdaptiveAvgPool2d.apply(grad_grad, ctx.pool.output_size), zeros, None

    jvp = auto_linear(0)


def _averaging_matrix(size, out, dtype):
    """(out, size) matrix whose row i averages the input cells of window i."""
    start, end = adaptive_bounds(size, out)
    idx = np.arange(size)
    inside = (idx >= start[:, None]) & (idx < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)
