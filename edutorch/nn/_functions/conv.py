"""Convolution as one matrix product: the *im2col* trick.

A 2-D convolution slides a ``kh x kw`` window over the (padded) input and
takes, at every position, the dot product of the window with each filter.
Instead of looping over positions we

1. ``im2col``: build a *view* ``(N, C, Ho, Wo, kh, kw)`` holding every window
   (``sliding_window_view`` makes it without copying a single number: it only
   sets strides so that neighbouring windows share memory), then copy it once
   into a matrix ``cols`` of shape ``(N*Ho*Wo, C*kh*kw)``: one row per output
   position, one column per weight;
2. multiply ``cols @ W.reshape(O, C*kh*kw).T``: every output at once;
3. in backward, ``dW = grad.T @ cols`` and ``dcols = grad @ W``; ``col2im``
   adds each column of ``dcols`` back onto the input pixel it was read from.

A 1-D convolution is the 2-D one with height 1.
"""
import numpy as np

from ...autograd.function import Function, once_differentiable


def windows(x, kernel, stride, dilation):
    """All ``kh x kw`` windows of ``x`` (N, C, H, W) as a view (N, C, Ho, Wo, kh, kw)."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    # a dilated kernel spans (k-1)*d+1 pixels; take every d-th one of that span
    span = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)
    view = np.lib.stride_tricks.sliding_window_view(x, span, axis=(2, 3))
    return view[:, :, ::sh, ::sw, ::dh, ::dw]


def col2im(dwin, in_shape, stride, dilation):
    """The adjoint of ``windows``: add each window's gradient back onto its pixels.

    ``dwin`` is (N, C, Ho, Wo, kh, kw); the result has ``in_shape`` (N, C, H, W).
    One strided slice-add per kernel offset (kh*kw of them), each vectorised.
    """
    _, _, ho, wo, kh, kw = dwin.shape
    (sh, sw), (dh, dw) = stride, dilation
    dx = np.zeros(in_shape, dtype=dwin.dtype)
    for i in range(kh):
        for j in range(kw):
            dx[:, :, i * dh: i * dh + sh * (ho - 1) + 1: sh,
               j * dw: j * dw + sw * (wo - 1) + 1: sw] += dwin[:, :, :, :, i, j]
    return dx


def pad2d(x, padding, value=0.0):
    """Pad H and W of (N, C, H, W) by ``padding = ((top, bottom), (left, right))``."""
    if not any(padding[0]) and not any(padding[1]):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple(padding), constant_values=value)


def _conv_forward(x, w, stride, dilation, groups):
    """Convolve padded ``x`` (N, C, H, W) with ``w`` (O, C/groups, kh, kw); returns (out, cols)."""
    n, c = x.shape[:2]
    o, cg, kh, kw = w.shape
    win = windows(x, (kh, kw), stride, dilation)  # (N, C, Ho, Wo, kh, kw), a view
    ho, wo = win.shape[2:4]
    og = o // groups
    # rows = output positions (n, ho, wo); columns = (channel, ki, kj) of one group
    cols = win.reshape(n, groups, cg, ho, wo, kh, kw).transpose(1, 0, 3, 4, 2, 5, 6)
    cols = cols.reshape(groups, n * ho * wo, cg * kh * kw)  # the one copy
    w2 = w.reshape(groups, og, cg * kh * kw)
    out = cols @ w2.transpose(0, 2, 1)  # (groups, N*Ho*Wo, O/groups): all outputs at once
    out = out.reshape(groups, n, ho, wo, og).transpose(1, 0, 4, 2, 3).reshape(n, o, ho, wo)
    return np.ascontiguousarray(out), cols


class Convolution(Function):
    """``torch.convolution``: input (N, C, H, W), weight (O, C/groups, kh, kw), bias (O,).

    ``padding`` is ``((top, bottom), (left, right))`` (``'same'`` may need one
    more pixel on one side); ``stride`` and ``dilation`` are pairs.
    """

    _backward_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, dilation, groups):
        x, w = input.data, weight.data
        one_d = x.ndim == 3  # conv1d: run as conv2d over a height of 1
        if one_d:
            x, w = x[:, :, None, :], w[:, :, None, :]
        xp = pad2d(x, padding)
        out, cols = _conv_forward(xp, w, stride, dilation, groups)
        if bias is not None:
            out += bias.data.reshape(1, -1, 1, 1)
        ctx.cols = cols if ctx.needs_input_grad[1] else None
        ctx.w = w if ctx.needs_input_grad[0] else None
        ctx.meta = (x.shape, xp.shape, w.shape, stride, padding, dilation, groups, one_d)
        return out[:, :, 0, :] if one_d else out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        from ..._tensor import Tensor

        x_shape, xp_shape, w_shape, stride, padding, dilation, groups, one_d = ctx.meta
        g = grad.data[:, :, None, :] if one_d else grad.data
        n, o, ho, wo = g.shape
        _, cg, kh, kw = w_shape
        og = o // groups
        # the gradient as a matrix matching ``out`` before the final reshape
        g2 = g.reshape(n, groups, og, ho, wo).transpose(1, 0, 3, 4, 2).reshape(groups, n * ho * wo, og)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            dcols = g2 @ ctx.w.reshape(groups, og, cg * kh * kw)  # (groups, N*Ho*Wo, cg*kh*kw)
            dwin = dcols.reshape(groups, n, ho, wo, cg, kh, kw).transpose(1, 0, 4, 2, 3, 5, 6)
            dwin = dwin.reshape(n, groups * cg, ho, wo, kh, kw)
            dxp = col2im(dwin, xp_shape, stride, dilation)
            (top, _), (left, _) = padding
            dx = dxp[:, :, top: top + x_shape[2], left: left + x_shape[3]]
            gx = Tensor._make(np.ascontiguousarray(dx[:, :, 0, :] if one_d else dx))
        if ctx.needs_input_grad[1]:
            dw = (g2.transpose(0, 2, 1) @ ctx.cols).reshape(w_shape)  # (O, cg, kh, kw)
            gw = Tensor._make(dw[:, :, 0, :] if one_d else dw)
        if ctx.needs_input_grad[2]:
            gb = Tensor._make(g.sum(axis=(0, 2, 3)))
        return gx, gw, gb, None, None, None, None
