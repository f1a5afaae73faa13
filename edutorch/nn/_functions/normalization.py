"""Normalization layers: batch norm, layer norm, group norm.

All three compute ``x_hat = (x - mean) / sqrt(var + eps)`` over some axes and
then ``y = x_hat * weight + bias``.  They differ only in *which* axes:
batch norm over (N, H, W) per channel, layer norm over the last dims per
sample, group norm over (channels of a group, H, W) per sample.

The backward of normalising over ``m`` values (per group of statistics) is
the classic formula
``dx = (g - mean(g) - x_hat * mean(g * x_hat)) / sqrt(var + eps)``
where ``g = dy * weight``: the two means remove the parts of the gradient
that only shift or scale the group, which normalisation cancels anyway.

That backward is written once, with Tensor ops (``_normalize_backward``), so
the same lines serve a plain backward and ``create_graph=True`` (double
backward: gradient penalties, Hessian-vector products).  Its ``x_hat`` and
``1 / sqrt(var + eps)`` are recomputed from the saved input with Tensor ops
(``_standardize``): under ``create_graph`` they are then differentiable
functions of the input, as the second derivative needs.

What backward reads: the tensors PyTorch saves (input, weight, running
statistics; LayerNorm also bias) go through ``save_for_backward``, so an
in-place change of any of them before backward raises PyTorch's error.
"""
import numpy as np

from ...autograd.function import Function
from .utils import constant
from ...autograd._functions.utils import in_dtype_of


def _standardize(x, axes, eps):
    """``(x_hat, rstd)``: ``x_hat = (x - mean) * rstd`` over ``axes``, ``rstd = 1 / sqrt(var + eps)``.

    Tensor ops (PyTorch's ``save_mean`` / ``save_invstd`` recomputed from the
    saved input): under ``create_graph`` both are differentiable in ``x``.
    """
    mean = x.mean(axes, keepdim=True)
    rstd = (x.var(axes, correction=0, keepdim=True) + eps).rsqrt()  # biased, as in forward
    return (x - mean) * rstd, rstd


def _normalize_backward(g, x_hat, rstd, axes):
    """dL/dx of ``x_hat = (x - mean) * rstd`` over ``axes`` (see module doc), in Tensor ops."""
    mean_g = g.mean(axes, keepdim=True)
    mean_gx = (g * x_hat).mean(axes, keepdim=True)
    return (g - mean_g - x_hat * mean_gx) * rstd


def _sum_over(t, dims):
    """``t.sum(dims)``, where no dims means no sum (PyTorch's ``sum(())`` would sum everything)."""
    return t.sum(dims) if dims else t


class BatchNorm(Function):
    """``F.batch_norm``: per-channel statistics of the batch (train) or running ones (eval)."""

    _backward_name = "NativeBatchNormBackward0"

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, training, momentum, eps):
        x = input._data
        axes = (0,) + tuple(range(2, x.ndim))       # all but the channel axis
        shape = (1, -1) + (1,) * (x.ndim - 2)       # to broadcast a (C,) vector
        if training:
            mean = x.mean(axis=axes)
            var = x.var(axis=axes)                   # biased: used to normalise
            if running_mean is not None:
                # the running variance is the *unbiased* estimate, as PyTorch stores it
                m = x.size // x.shape[1]
                unbiased = var * (m / max(m - 1, 1))
                running_mean._data *= 1 - momentum
                running_mean._data += momentum * mean
                running_var._data *= 1 - momentum
                running_var._data += momentum * unbiased
                # no version bump: PyTorch's kernel updates the running statistics silently
        else:
            mean, var = running_mean._data, running_var._data
        inv_std = (1.0 / np.sqrt(var + eps)).astype(x.dtype).reshape(shape)
        mean = mean.reshape(shape).astype(x.dtype)  # a copy: later running-stat updates leave it alone
        x_hat = (x - mean) * inv_std
        out = x_hat
        if weight is not None:
            out = out * weight._data.reshape(shape)
        if bias is not None:
            out = out + bias._data.reshape(shape)
        ctx.inv_std, ctx.axes, ctx.shape, ctx.training = inv_std, axes, shape, training
        ctx.save_for_backward(input, weight, running_mean, running_var)  # what PyTorch saves
        ctx.mean, ctx.eps = mean, eps
        return out

    @staticmethod
    def backward(ctx, grad):
        input, weight, _, _ = ctx.saved_tensors
        axes = ctx.axes
        if ctx.training:
            x_hat, rstd = _standardize(input, axes, ctx.eps)
        else:  # eval: mean and var are the running constants, the map is affine
            rstd = constant(ctx.inv_std)
            x_hat = (input - constant(ctx.mean)) * rstd
        g = grad if weight is None else grad * weight.reshape(ctx.shape)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = _normalize_backward(g, x_hat, rstd, axes) if ctx.training else g * rstd
        if ctx.needs_input_grad[1]:
            gw = (grad * x_hat).sum(axes)
        if ctx.needs_input_grad[2]:
            gb = grad.sum(axes)
        return gx, gw, gb, None, None, None, None, None


class LayerNorm(Function):
    """``F.layer_norm``: statistics over the last ``len(normalized_shape)`` dims of each sample."""

    _backward_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, input, normalized_ndim, weight, bias, eps):
        x = input._data
        axes = tuple(range(x.ndim - normalized_ndim, x.ndim))
        mean = x.mean(axis=axes, keepdims=True)
        inv_std = 1.0 / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
        x_hat = (x - mean) * inv_std
        out = x_hat
        if weight is not None:
            out = out * weight._data
        if bias is not None:
            out = out + bias._data
        out = in_dtype_of(out, x)  # bfloat16 input: NumPy's 1.0 / sqrt(...) widened it to float32
        ctx.axes, ctx.eps = axes, eps
        ctx.save_for_backward(input, weight, bias)  # what PyTorch saves (bias too, for layer norm)
        return out

    @staticmethod
    def backward(ctx, grad):
        input, weight, _ = ctx.saved_tensors
        axes = ctx.axes
        x_hat, rstd = _standardize(input, axes, ctx.eps)
        g = grad if weight is None else grad * weight
        lead = tuple(range(grad.ndim - len(axes)))  # the batch dims: summed for weight/bias
        gx = _normalize_backward(g, x_hat, rstd, axes) if ctx.needs_input_grad[0] else None
        gw = _sum_over(grad * x_hat, lead) if ctx.needs_input_grad[2] else None
        gb = _sum_over(grad, lead) if ctx.needs_input_grad[3] else None
        return gx, None, gw, gb, None


class GroupNorm(Function):
    """``F.group_norm``: statistics over each group of channels (and H, W) of each sample."""

    _backward_name = "NativeGroupNormBackward0"

    @staticmethod
    def forward(ctx, input, num_groups, weight, bias, eps):
        x = input._data
        n, c = x.shape[:2]
        xg = x.reshape(n, num_groups, -1)  # one row of statistics per (sample, group)
        mean = xg.mean(axis=2, keepdims=True)
        inv_std = 1.0 / np.sqrt(xg.var(axis=2, keepdims=True) + eps)
        x_hat = ((xg - mean) * inv_std).reshape(x.shape)
        shape = (1, c) + (1,) * (x.ndim - 2)
        out = x_hat
        if weight is not None:
            out = out * weight._data.reshape(shape)
        if bias is not None:
            out = out + bias._data.reshape(shape)
        ctx.groups, ctx.shape, ctx.eps = num_groups, shape, eps
        ctx.save_for_backward(input, weight)  # what PyTorch saves
        return in_dtype_of(out, x)  # bfloat16 input: NumPy widened it to float32

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        n, groups = input.shape[0], ctx.groups
        rows = (n, groups, input.numel() // max(n * groups, 1))  # one row of statistics per (sample, group)
        x_hat, rstd = _standardize(input.reshape(rows), 2, ctx.eps)
        x_hat = x_hat.reshape(input.shape)
        axes = (0,) + tuple(range(2, grad.ndim))
        g = grad if weight is None else grad * weight.reshape(ctx.shape)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = _normalize_backward(g.reshape(rows), x_hat.reshape(rows), rstd, 2).reshape(input.shape)
        if ctx.needs_input_grad[2]:
            gw = (grad * x_hat).sum(axes)
        if ctx.needs_input_grad[3]:
            gb = grad.sum(axes)
        return gx, None, gw, gb, None
