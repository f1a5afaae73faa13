"""Convolution as matrix products: the *im2col* trick.

A 2-D convolution slides a ``kh x kw`` window over the (padded) input and
takes, at every position, the dot product of the window with each filter.
Instead of looping over the Ho*Wo positions we

1. ``im2col``: build ``cols`` of shape (N, G, kh, kw, C/G, Ho, Wo), where
   ``cols[n, g, i, j]`` is sample n's group-g channels *shifted* by the kernel
   offset (i, j) (and subsampled by the stride).  That is only kh*kw strided
   slice copies, one per kernel offset, each a fast vectorised copy;
2. view it as (N, G, kh*kw*C/G, Ho*Wo) (free: it is contiguous) and multiply
   by the weights, reordered to the same (i, j, c) order:
   ``W (G, O/G, kh*kw*C/G) @ cols``: all outputs of all samples in one
   batched matrix product, landing directly in the (N, O, Ho, Wo) layout.

``groups`` splits the channels into independent convolutions (the G axis).
A 1-D convolution is the 2-D one with height 1.

Why two column layouts (the ``rows`` flag that ``columns``, ``uncolumns``,
``_plan``, ``Im2Col``, ``Col2Im`` and ``Convolution`` pass along): with
stride 1, the common case, ``im2col_rows`` computes every output row on the
*padded* width Wp instead of Wo, so each kernel offset's columns are one
contiguous range of the flattened padded input, copied in one piece (and
added back in one piece by ``col2im_rows``); the kh-1 extra columns per row
are cropped from the output.  Measured on (32, 16, 28, 28) with a 3x3 kernel
(single thread): im2col 1.7 ms instead of 2.0, col2im 2.8 ms instead of 4.3,
for a product about 7% wider.  Any other stride uses the strided layout
(``im2col``), whose columns are exactly Ho x Wo.  Both are the same
mathematics; only the copies differ.

Backward is the matrix product's gradient, written once
(``blas.mm_mat1_backward``/``mm_mat2_backward``, with Tensor ops):
``dW = sum_n grad[n] @ cols[n].T`` and ``dx = col2im(W.T @ grad)``.
``Im2Col`` and ``Col2Im`` are two autograd Functions, each the other's
gradient (``col2im`` adds each shifted plane back where ``im2col`` read it
from), so the same lines serve a plain backward and ``create_graph=True``
(double backward: the backward is differentiated again).
"""
import numpy as np

from ... import backend

from ...autograd.function import Function
from .sparse import Pad, constant_padded
from ...autograd._functions.blas import mm_mat1_backward, mm_mat2_backward
from ...autograd._functions.tangents import auto_linear, sum_tangents
from ...autograd._functions.utils import matmul


def _offset_slices(i, j, out_hw, stride, dilation):
    """The input region read by kernel offset (i, j): rows i*dh, i*dh+sh, ... (Ho of them)."""
    (ho, wo), (sh, sw), (dh, dw) = out_hw, stride, dilation
    return (Ellipsis,
            slice(i * dh, i * dh + sh * (ho - 1) + 1, sh),
            slice(j * dw, j * dw + sw * (wo - 1) + 1, sw))


def out_hw(in_hw, kernel, stride, dilation):
    """Output height and width of a window sliding over a (padded) ``in_hw`` plane."""
    return tuple((n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(in_hw, kernel, stride, dilation))


def im2col(xp, kernel, stride, dilation, groups):
    """(N, C, H, W) -> (N, G, kh, kw, C/G, Ho, Wo): one shifted, strided copy per kernel offset."""
    n, c = xp.shape[:2]
    kh, kw = kernel
    ho, wo = out_hw(xp.shape[2:], kernel, stride, dilation)
    x5 = xp.reshape(n, groups, c // groups, *xp.shape[2:])  # a free view splitting the channels
    cols = backend.get_array_module(xp).empty((n, groups, kh, kw, c // groups, ho, wo), dtype=xp.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = x5[_offset_slices(i, j, (ho, wo), stride, dilation)]
    return cols


def col2im(dcols, in_shape, stride, dilation):
    """The adjoint of ``im2col``: add each offset's plane back onto the pixels it came from.

    ``dcols`` is (N, G, kh, kw, C/G, Ho, Wo); the result has ``in_shape`` (N, C, H, W).
    Overlapping windows (stride < kernel) simply add up.
    """
    n, groups, kh, kw, cg, ho, wo = dcols.shape
    dx = backend.get_array_module(dcols).zeros(in_shape, dtype=dcols.dtype)
    dx5 = dx.reshape(n, groups, cg, *in_shape[2:])  # a view: writes land in dx
    for i in range(kh):
        for j in range(kw):
            dx5[_offset_slices(i, j, (ho, wo), stride, dilation)] += dcols[:, :, i, j]
    return dx


def pad2d(x, padding, value=0.0):
    """Pad H and W of (N, C, H, W) by ``padding = ((top, bottom), (left, right))``."""
    if not any(padding[0] + padding[1]):
        return x
    return constant_padded(x, ((0, 0), (0, 0)) + tuple(padding), value)


def _crop(xp, padding, hw):
    """The inverse of ``pad2d``: the (H, W) middle of a padded (N, C, Hp, Wp) array, contiguous."""
    (top, _), (left, _) = padding
    inner = xp[:, :, top: top + hw[0], left: left + hw[1]]
    return backend.get_array_module(xp).ascontiguousarray(inner)


# -- stride 1: copy whole rows at a time ---------------------------------------------------
# With stride 1 we may compute the output on the *padded* width Wp (and drop the
# extra Wp - Wo columns at the end).  Then, in the flattened (H*Wp) plane, the
# pixels read by kernel offset (i, j) form ONE contiguous range starting at
# i*dh*Wp + j*dw: a copy of Ho*Wp numbers per plane instead of Ho short rows.
# The extra columns cost a little more matmul; they are discarded (forward) or
# receive zero gradient (backward).

def flat_padded(x, padding, dilation, kernel):
    """Zero-padded (N, C, Hp*Wp + overhang) copy of x: the last offset's range may run past Hp*Wp."""
    (top, bottom), (left, right) = padding
    n, c, h, w = x.shape
    hp, wp = h + top + bottom, w + left + right
    overhang = dilation[1] * (kernel[1] - 1)
    flat = backend.get_array_module(x).zeros((n, c, hp * wp + overhang), dtype=x.dtype)
    flat[:, :, :hp * wp].reshape(n, c, hp, wp)[:, :, top:top + h, left:left + w] = x
    return flat, (hp, wp)


def im2col_rows(flat, hw_p, kernel, dilation, groups):
    """Stride-1 im2col: (N, G, kh, kw, C/G, Ho*Wp), one contiguous range per plane and offset."""
    n, c = flat.shape[:2]
    (hp, wp), (kh, kw), (dh, dw) = hw_p, kernel, dilation
    length = (hp - dh * (kh - 1)) * wp  # Ho rows of the padded width
    f5 = flat.reshape(n, groups, c // groups, flat.shape[-1])  # sizes spelled out: N may be 0
    cols = backend.get_array_module(flat).empty((n, groups, kh, kw, c // groups, length), dtype=flat.dtype)
    for i in range(kh):
        for j in range(kw):
            start = i * dh * wp + j * dw
            cols[:, :, i, j] = f5[..., start:start + length]
    return cols


def col2im_rows(dcols, flat_shape, wp, dilation):
    """The adjoint of ``im2col_rows``: add each offset's range back into the flat padded planes."""
    n, groups, kh, kw, cg, length = dcols.shape
    dh, dw = dilation
    dflat = backend.get_array_module(dcols).zeros(flat_shape, dtype=dcols.dtype)
    d5 = dflat.reshape(n, groups, cg, flat_shape[-1])
    for i in range(kh):
        for j in range(kw):
            start = i * dh * wp + j * dw
            d5[..., start:start + length] += dcols[:, :, i, j]
    return dflat


# -- the two layouts behind one pair of functions ------------------------------------------

def _plan(x_hw, kernel, stride, padding, dilation, rows):
    """The columns' geometry: (Ho, Wo, width), ``width`` the length of a row of columns.

    ``rows`` (stride 1 only): the row layout, computed on the padded width Wp;
    otherwise the strided layout, ``width`` = Wo.
    """
    hp, wp = x_hw[0] + sum(padding[0]), x_hw[1] + sum(padding[1])
    ho, wo = out_hw((hp, wp), kernel, stride, dilation)
    return ho, wo, wp if rows else wo


def columns(x, kernel, dilation, padding, stride, groups, rows):
    """im2col of the array x (N, C, H, W): (N, G * kh*kw*C/G, Ho*width), rows in (g, i, j, c) order.

    With one channel per group (``groups = C``) that is PyTorch's ``F.unfold`` layout (c, i, j).
    """
    n, c = x.shape[:2]
    ho, _, width = _plan(x.shape[2:], kernel, stride, padding, dilation, rows)
    if rows:
        flat, hw_p = flat_padded(x, padding, dilation, kernel)
        cols = im2col_rows(flat, hw_p, kernel, dilation, groups)
    else:
        cols = im2col(pad2d(x, padding), kernel, stride, dilation, groups)
    return cols.reshape(n, kernel[0] * kernel[1] * c, ho * width)


def uncolumns(dcols, x_hw, kernel, dilation, padding, stride, groups, rows):
    """col2im: the adjoint of ``columns``, back to an (N, C, H, W) array with (H, W) = ``x_hw``."""
    (kh, kw), (h, w) = kernel, x_hw
    n, c, length = dcols.shape[0], dcols.shape[1] // (kh * kw), dcols.shape[2]
    ho, wo, width = _plan(x_hw, kernel, stride, padding, dilation, rows)
    hp, wp = h + sum(padding[0]), w + sum(padding[1])
    blocks = (n, groups, kh, kw, c // groups)
    if rows:
        flat_shape = (n, c, hp * wp + dilation[1] * (kw - 1))
        dflat = col2im_rows(dcols.reshape(*blocks, length), flat_shape, wp, dilation)
        dxp = dflat[:, :, :hp * wp].reshape(n, c, hp, wp)
    else:
        dxp = col2im(dcols.reshape(*blocks, ho, wo), (n, c, hp, wp), stride, dilation)
    return _crop(dxp, padding, x_hw)


class Im2Col(Function):
    """im2col as an autograd Function (``F.unfold``): (N, C, H, W) -> (N, kh*kw*C, Ho*width).

    ``padding`` is ``((top, bottom), (left, right))``; ``groups`` and ``rows``
    choose the convolution's layouts (``F.unfold``: ``groups = C``, no rows).
    An unbatched (C, H, W) input gives unbatched columns.  Its gradient is
    ``Col2Im`` (and ``Col2Im``'s is this one), as in PyTorch.  ``cols``, when
    given, is what the convolution's forward already built from this very
    input: returned as is.
    """

    _backward_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx, input, kernel, dilation, padding, stride, groups, rows, cols=None):
        x = input._data
        ctx.geometry = (tuple(x.shape[-2:]), kernel, dilation, padding, stride, groups, rows)
        if cols is None:
            cols = columns(x if x.ndim == 4 else x[None], kernel, dilation, padding, stride, groups, rows)
            cols = cols if x.ndim == 4 else cols[0]
        return cols

    @staticmethod
    def backward(ctx, grad):
        return (Col2Im.apply(grad, *ctx.geometry),) + (None,) * 7

    @staticmethod
    def jvp(ctx, d_input, *_):
        """Linear in the input: the tangent's own columns (not the ``cols`` built from the input)."""
        return Im2Col.apply(d_input, *ctx.primals[1:7])


class Col2Im(Function):
    """col2im as an autograd Function (``F.fold``): (N, kh*kw*C, Ho*width) -> (N, C, H, W).

    Adds every column entry onto the pixel it was read from (``x_hw`` = (H, W));
    its gradient is ``Im2Col``.  Unbatched (kh*kw*C, L) columns give (C, H, W).
    """

    _backward_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, dcols, x_hw, kernel, dilation, padding, stride, groups, rows):
        ctx.geometry = (kernel, dilation, padding, stride, groups, rows)
        d = dcols._data
        dx = uncolumns(d if d.ndim == 3 else d[None], tuple(x_hw), kernel, dilation, padding, stride, groups, rows)
        return dx if d.ndim == 3 else dx[0]

    @staticmethod
    def backward(ctx, grad):
        return (Im2Col.apply(grad, *ctx.geometry),) + (None,) * 7

    jvp = auto_linear(0)  # (autograd/_functions/tangents.py: the op on the tangent)


def _weights_by_offset(w, groups):
    """Tensor (O, C/G, kh, kw) -> (G, O/G, kh*kw*C/G): the column order of ``im2col``."""
    o, cg, kh, kw = w.shape
    return w.reshape(groups, o // groups, cg, kh, kw).permute(0, 1, 3, 4, 2).reshape(groups, o // groups, -1)


def _weights_from_offset(w_g, w_shape):
    """The inverse of ``_weights_by_offset``: (G, O/G, kh*kw*C/G) -> (O, C/G, kh, kw)."""
    o, cg, kh, kw = w_shape
    groups = w_g.shape[0]
    return w_g.reshape(groups, o // groups, kh, kw, cg).permute(0, 1, 4, 2, 3).reshape(w_shape)


class Convolution(Function):
    """``torch.convolution``: input (N, C, H, W), weight (O, C/groups, kh, kw), bias (O,).

    ``padding`` is ``((top, bottom), (left, right))`` (``'same'`` may need one
    more pixel on one side); ``stride`` and ``dilation`` are pairs.
    """

    _backward_name = "ConvolutionBackward0"
    # its torch.profiler event: F.conv1d's or F.conv2d's (profiler/_names.py lists what it calls beneath)
    _profiler_name = staticmethod(lambda input, *args: f"aten::conv{input.ndim - 2}d")
    _autocast_op = "conv2d"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, dilation, groups):
        one_d = input.ndim == 3  # conv1d: run as conv2d over a height of 1
        x, w = (input.unsqueeze(2), weight.unsqueeze(2)) if one_d else (input, weight)
        n, o = x.shape[0], w.shape[0]
        kernel, rows = tuple(w.shape[2:]), stride == (1, 1)
        ho, wo, width = _plan(x.shape[2:], kernel, stride, padding, dilation, rows)
        cols = columns(x._data, kernel, dilation, padding, stride, groups, rows)  # (N, G*kh*kw*Cg, Ho*width)
        w_g = _weights_by_offset(w, groups)._data                                   # (G, Og, kh*kw*Cg)
        # every output in one product: (G, Og, K) @ (N, G, K, Ho*width)
        out = matmul(w_g, cols.reshape(n, groups, w_g.shape[2], ho * width)).reshape(n, o, ho, width)
        if bias is not None:  # when cropping the padded width, the add also makes the copy
            out = np.add(out[..., :wo], bias._data.reshape(1, -1, 1, 1), out=None if rows else out)
        elif rows:
            out = backend.get_array_module(out).ascontiguousarray(out[..., :wo])
        # what PyTorch saves (not the bias: its gradient is a sum of grad); version-checked,
        # so ``cols``, built from the input, stays valid
        ctx.save_for_backward(input, weight)
        ctx.cols = cols if ctx.needs_input_grad[1] else None
        ctx.stride, ctx.padding, ctx.dilation, ctx.groups = stride, padding, dilation, groups
        return out[:, :, 0, :] if one_d else out

    @staticmethod
    def backward(ctx, grad):
        """The matrix product's gradient (written once, as Tensor ops: ``create_graph`` records it)."""
        input, weight = ctx.saved_tensors
        one_d = input.ndim == 3
        x, w, g = (input.unsqueeze(2), weight.unsqueeze(2), grad.unsqueeze(2)) if one_d else (input, weight, grad)
        n, o, ho, wo = g.shape
        groups, rows = ctx.groups, ctx.stride == (1, 1)
        geometry = (tuple(w.shape[2:]), ctx.dilation, ctx.padding, ctx.stride, groups, rows)
        k = w.shape[2] * w.shape[3]  # kernel offsets
        width = _plan(x.shape[2:], geometry[0], ctx.stride, ctx.padding, ctx.dilation, rows)[2]
        if width > wo:  # the row layout's padded width: the extra columns get zero gradient
            g = Pad.apply(g, ((0, 0), (0, 0), (0, 0), (0, width - wo)), "constant", 0.0)
        g_g = g.reshape(n, groups, o // groups, ho * width)                 # (N, G, Og, Ho*width)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:  # dx = col2im(W.T @ grad)
            dcols = mm_mat2_backward(g_g, _weights_by_offset(w, groups))   # (N, G, kh*kw*Cg, Ho*width)
            gx = Col2Im.apply(dcols.reshape(n, x.shape[1] * k, ho * width), tuple(x.shape[2:]), *geometry)
            gx = gx.squeeze(2) if one_d else gx
        if ctx.needs_input_grad[1]:  # dW = sum over samples of grad[n] @ cols[n].T
            cols = Im2Col.apply(x, *geometry, ctx.cols).reshape(n, groups, w.shape[1] * k, ho * width)
            gw = _weights_from_offset(mm_mat1_backward(g_g, cols).sum(0), w.shape)
            gw = gw.squeeze(2) if one_d else gw
        if ctx.needs_input_grad[2]:
            gb = grad.sum((0, 2) if one_d else (0, 2, 3))
        return gx, gw, gb, None, None, None, None

    @staticmethod
    def jvp(ctx, dx, dw, db, *_):
        """Bilinear in (input, weight), plus the bias: conv(dx, W) + conv(x, dW) + db."""
        x, w, _, *geometry = ctx.primals
        by_input = Convolution.apply(dx, w, None, *geometry) if dx is not None else None
        by_weight = Convolution.apply(x, dw, None, *geometry) if dw is not None else None
        by_bias = db.reshape((-1,) + (1,) * (x.ndim - 2)) if db is not None else None  # per channel
        return sum_tangents(by_input, by_weight, by_bias)
