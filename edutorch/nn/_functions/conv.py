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
   batched matrix product, landing directly in the (N, O, Ho, Wo) layout;
3. in backward, ``dW = sum_n grad[n] @ cols[n].T`` and ``dcols = W.T @ grad``;
   ``col2im`` adds each shifted plane of ``dcols`` back where it was read from.

``groups`` splits the channels into independent convolutions (the G axis).
A 1-D convolution is the 2-D one with height 1.  With stride 1 (the common
case) ``im2col_rows`` below copies whole rows at a time: same idea, faster.

Double backward (``create_graph=True``): the NumPy backward cannot be
differentiated, so ``conv_ops`` writes the same im2col with Tensor ops and
``utils.differentiable_backward`` lets autograd differentiate it.
"""
import numpy as np

from ... import backend

from ... import _functional
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled
from .utils import constant, differentiable_backward
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
    (top, bottom), (left, right) = padding
    if not (top or bottom or left or right):
        return x
    n, c, h, w = x.shape
    xp = backend.get_array_module(x).full((n, c, h + top + bottom, w + left + right), value, dtype=x.dtype)
    xp[:, :, top:top + h, left:left + w] = x
    return xp


def pad2d_ops(x, padding):
    """``pad2d`` (zeros) with differentiable Tensor ops: concatenate zero blocks around H and W."""
    (top, bottom), (left, right) = padding
    n, c, h, w = x.shape
    if top or bottom:
        x = _functional.cat([x.new_zeros((n, c, top, w)), x, x.new_zeros((n, c, bottom, w))], 2)
    if left or right:
        hp = x.shape[2]
        x = _functional.cat([x.new_zeros((n, c, hp, left)), x, x.new_zeros((n, c, hp, right))], 3)
    return x


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


def _weights_by_offset(w, groups):
    """(O, C/G, kh, kw) -> (G, O/G, kh*kw*C/G): the column order of ``im2col``."""
    o, cg, kh, kw = w.shape
    return w.reshape(groups, o // groups, cg, kh, kw).transpose(0, 1, 3, 4, 2).reshape(groups, o // groups, -1)


def conv_ops(input, weight, bias, stride, padding, dilation, groups):
    """``Convolution``'s forward with differentiable Tensor ops (for double backward).

    The same im2col + matmul as the NumPy forward, step by step on Tensors:
    pad, one strided slice per kernel offset, stack, one batched matmul.
    """
    one_d = input.ndim == 3
    x, w = (input.unsqueeze(2), weight.unsqueeze(2)) if one_d else (input, weight)
    n = x.shape[0]
    o, cg, kh, kw = w.shape
    xp = pad2d_ops(x, padding)
    ho, wo = out_hw(xp.shape[2:], (kh, kw), stride, dilation)
    x5 = xp.reshape(n, groups, cg, *xp.shape[2:])
    shifted = [x5[_offset_slices(i, j, (ho, wo), stride, dilation)] for i in range(kh) for j in range(kw)]
    cols = _functional.stack(shifted, 2).reshape(n, groups, kh * kw * cg, ho * wo)
    w_g = w.reshape(groups, o // groups, cg, kh, kw).permute(0, 1, 3, 4, 2).reshape(groups, o // groups, -1)
    out = (w_g @ cols).reshape(n, o, ho, wo)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out.squeeze(2) if one_d else out


class Convolution(Function):
    """``torch.convolution``: input (N, C, H, W), weight (O, C/groups, kh, kw), bias (O,).

    ``padding`` is ``((top, bottom), (left, right))`` (``'same'`` may need one
    more pixel on one side); ``stride`` and ``dilation`` are pairs.
    """

    _backward_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, dilation, groups):
        x, w = input._data, weight._data
        one_d = x.ndim == 3  # conv1d: run as conv2d over a height of 1
        if one_d:
            x, w = x[:, :, None, :], w[:, :, None, :]
        n = x.shape[0]
        o, cg, kh, kw = w.shape
        rows = stride == (1, 1)
        if rows:  # output computed on the padded width Wp, extra columns dropped below
            flat, (hp, wp) = flat_padded(x, padding, dilation, (kh, kw))
            cols = im2col_rows(flat, (hp, wp), (kh, kw), dilation, groups)
            ho, wo, width = hp - dilation[0] * (kh - 1), wp - dilation[1] * (kw - 1), wp
            pad_shape = flat.shape
        else:
            xp = pad2d(x, padding)
            cols = im2col(xp, (kh, kw), stride, dilation, groups)   # (N, G, kh, kw, Cg, Ho, Wo)
            ho, wo = cols.shape[-2:]
            width, pad_shape = wo, xp.shape
        cols_g = cols.reshape(n, groups, kh * kw * cg, ho * width)
        w_g = _weights_by_offset(w, groups)                          # (G, Og, kh*kw*Cg)
        out = matmul(w_g, cols_g).reshape(n, o, ho, width)  # every output in one product
        if bias is not None:  # when cropping the padded width, the add also makes the copy
            out = np.add(out[..., :wo], bias._data.reshape(1, -1, 1, 1), out=None if rows else out)
        elif rows:
            out = backend.get_array_module(out).ascontiguousarray(out[..., :wo])
        # what PyTorch saves (not the bias: its gradient is a sum of grad); version-checked,
        # so ``cols`` and ``w_g``, which may be views of them, stay valid
        ctx.save_for_backward(input, weight)
        ctx.cols = cols_g if ctx.needs_input_grad[1] else None
        ctx.w_g = w_g if ctx.needs_input_grad[0] else None
        ctx.x_shape, ctx.pad_shape, ctx.w_shape = x.shape, pad_shape, w.shape  # x, w as 2-D convolution sees them
        ctx.stride, ctx.padding, ctx.dilation, ctx.groups = stride, padding, dilation, groups
        ctx.one_d, ctx.rows, ctx.width = one_d, rows, width  # conv1d?  stride 1 (the row layout)?  its width
        return out[:, :, 0, :] if one_d else out

    @staticmethod
    def backward(ctx, grad):
        if is_grad_enabled():  # create_graph=True: a backward that can be differentiated again
            gx, gw = differentiable_backward(
                lambda x, w: conv_ops(x, w, None, ctx.stride, ctx.padding, ctx.dilation, ctx.groups),
                ctx.saved_tensors, ctx.needs_input_grad[:2], grad)
            gb = grad.sum((0, 2) if ctx.one_d else (0, 2, 3)) if ctx.needs_input_grad[2] else None
            return gx, gw, gb, None, None, None, None
        g = grad._data[:, :, None, :] if ctx.one_d else grad._data
        n, o, ho, wo = g.shape
        _, cg, kh, kw = ctx.w_shape
        if ctx.rows:  # back to the padded width: the extra columns get zero gradient
            wide = backend.get_array_module(g).zeros((n, o, ho, ctx.width), dtype=g.dtype)
            wide[..., :wo] = g
            g = wide
        g_g = g.reshape(n, ctx.groups, o // ctx.groups, ho * g.shape[3])    # (N, G, Og, Ho*width)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            dcols = matmul(np.swapaxes(ctx.w_g, 1, 2), g_g) # (N, G, kh*kw*Cg, Ho*width)
            (top, _), (left, _) = ctx.padding
            if ctx.rows:
                dflat = col2im_rows(dcols.reshape(n, ctx.groups, kh, kw, cg, ho * ctx.width), ctx.pad_shape,
                                    ctx.width, ctx.dilation)
                hp = ctx.x_shape[2] + sum(ctx.padding[0])
                dxp = dflat[:, :, :hp * ctx.width].reshape(n, ctx.pad_shape[1], hp, ctx.width)
            else:
                dxp = col2im(dcols.reshape(n, ctx.groups, kh, kw, cg, ho, wo), ctx.pad_shape, ctx.stride, ctx.dilation)
            dx = dxp[:, :, top: top + ctx.x_shape[2], left: left + ctx.x_shape[3]]
            gx = constant(backend.get_array_module(dx).ascontiguousarray(dx[:, :, 0, :] if ctx.one_d else dx))
        if ctx.needs_input_grad[1]:
            # sum over samples of grad[n] @ cols[n].T, then back to (O, Cg, kh, kw)
            dw = matmul(g_g, np.swapaxes(ctx.cols, 2, 3)).sum(axis=0)  # (G, Og, kh*kw*Cg)
            dw = dw.reshape(ctx.groups, o // ctx.groups, kh, kw, cg).transpose(0, 1, 4, 2, 3).reshape(ctx.w_shape)
            gw = constant(dw[:, :, 0, :] if ctx.one_d else dw)
        if ctx.needs_input_grad[2]:
            gb = constant(grad._data.sum(axis=(0, 2)) if ctx.one_d else grad._data.sum(axis=(0, 2, 3)))
        return gx, gw, gb, None, None, None, None
