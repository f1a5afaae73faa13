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
backward: gradient penalties, Hessian-vector products).  It reads ``x_hat``
and ``rstd = 1 / sqrt(var + eps)`` through ``Standardize``, the normalisation
step as a Function of the input: a plain backward gets the arrays the forward
already computed, and under ``create_graph`` the same call records a node, so
``x_hat`` and ``rstd`` are then differentiable functions of the input (whose
gradient is ``_normalize_backward`` again), as the second derivative needs.

What backward reads: the tensors PyTorch saves (input, weight, running
statistics; LayerNorm also bias) go through ``save_for_backward``, so an
in-place change of any of them before backward raises PyTorch's error.
``ctx`` keeps only arrays private to the node: the statistics, and ``x_hat``
when it is not itself the output (without weight and bias the output *is*
``x_hat``, which the user may change in place: it is then recomputed from
the saved input).
"""
import warnings

import numpy as np

from ...autograd.function import Function
from .utils import constant
from ...autograd._functions.tangents import sum_tangents
from ...autograd._functions.utils import in_dtype_of


def _normalize_backward(g, x_hat, rstd, axes, g_rstd=None):
    """dL/dx of ``x_hat = (x - mean) * rstd`` over ``axes`` (see module doc), in Tensor ops.

    ``g_rstd``, when given, is a gradient reaching ``rstd`` itself (only in a
    double backward): ``d rstd / dx = -rstd² x_hat / m`` adds to the second mean.
    """
    mean_g = g.mean(axes, keepdim=True)
    mean_gx = (g * x_hat).mean(axes, keepdim=True)
    if g_rstd is not None:
        mean_gx = mean_gx + g_rstd * rstd * (rstd.numel() / max(x_hat.numel(), 1))
    return (g - mean_g - x_hat * mean_gx) * rstd


class Standardize(Function):
    """``x -> (x_hat, rstd)`` over ``axes``: the normalisation step shared by the three layers.

    Called by the layers' backwards on their saved input, with ``stats`` =
    (x_hat or None, mean, rstd), the arrays their forward computed: the forward
    returns them (x_hat recomputed from mean and rstd when None).  Its gradient
    is ``_normalize_backward``.  PyTorch has no such op (its layers' double
    backward is one hand-written kernel), so it is named like a custom
    Function: node ``StandardizeBackward``, profiler event ``Standardize``.
    """

    @staticmethod
    def forward(ctx, input, axes, stats):
        x_hat, mean, rstd = stats
        ctx.save_for_backward(input)
        ctx.axes, ctx.stats = axes, stats
        return (input._data - mean) * rstd if x_hat is None else x_hat, rstd

    @staticmethod
    def backward(ctx, g_x_hat, g_rstd):
        (input,) = ctx.saved_tensors
        x_hat, rstd = Standardize.apply(input, ctx.axes, ctx.stats)
        return _normalize_backward(g_x_hat, x_hat, rstd, ctx.axes, g_rstd), None, None


def _affine_tangent(d_x_hat, x_hat, weight, dw, db, shape):
    """The tangent of ``x_hat * weight + bias`` (weight and bias reshaped to ``shape``), given
    ``d_x_hat``, the tangent of ``x_hat``.  That one is ``_normalize_backward`` of the input's
    tangent: the normalisation's Jacobian, ``rstd (I - 1 1ᵀ/m - x_hat x_hat ᵀ/m)``, is symmetric."""
    if d_x_hat is not None and weight is not None:
        d_x_hat = d_x_hat * weight.reshape(shape)
    return sum_tangents(d_x_hat, x_hat * dw.reshape(shape) if dw is not None else None,
                        db.reshape(shape) if db is not None else None)


def _private_x_hat(x_hat, out):
    """``x_hat`` for backward, unless it is the output itself (then backward recomputes it)."""
    return None if out is x_hat else x_hat


def _sum_over(t, dims):
    """``t.sum(dims)``, where no dims means no sum (PyTorch's ``sum(())`` would sum everything)."""
    return t.sum(dims) if dims else t


class BatchNorm(Function):
    """``F.batch_norm``: per-channel statistics of the batch (train) or running ones (eval)."""

    _backward_name = "NativeBatchNormBackward0"
    _profiler_name = "aten::batch_norm"  # its torch.profiler event (not derived from the node name)

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
        ctx.axes, ctx.shape, ctx.training = axes, shape, training
        ctx.stats = (_private_x_hat(x_hat, out), mean, inv_std)
        ctx.save_for_backward(input, weight, running_mean, running_var)  # what PyTorch saves
        return out

    @staticmethod
    def x_hat(ctx, input):
        """``(x_hat, rstd)`` as Tensors of the input (differentiable under ``create_graph``)."""
        if ctx.training:
            return Standardize.apply(input, ctx.axes, ctx.stats)
        _, mean, inv_std = ctx.stats  # eval: mean and var are the running constants, the map is affine
        rstd = constant(inv_std)
        return (input - constant(mean)) * rstd, rstd

    @staticmethod
    def backward(ctx, grad):
        input, weight, _, _ = ctx.saved_tensors
        axes = ctx.axes
        x_hat, rstd = BatchNorm.x_hat(ctx, input)
        g = grad if weight is None else grad * weight.reshape(ctx.shape)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = _normalize_backward(g, x_hat, rstd, axes) if ctx.training else g * rstd
        if ctx.needs_input_grad[1]:
            gw = (grad * x_hat).sum(axes)
        if ctx.needs_input_grad[2]:
            gb = grad.sum(axes)
        return gx, gw, gb, None, None, None, None, None

    @staticmethod
    def jvp(ctx, dx, dw, db, *_):
        input, weight = ctx.primals[:2]
        x_hat, rstd = BatchNorm.x_hat(ctx, input)
        d_x_hat = None
        if dx is not None:
            d_x_hat = _normalize_backward(dx, x_hat, rstd, ctx.axes) if ctx.training else dx * rstd
        return _affine_tangent(d_x_hat, x_hat, weight, dw, db, ctx.shape)


class LayerNorm(Function):
    """``F.layer_norm``: statistics over the last ``len(normalized_shape)`` dims of each sample."""

    _backward_name = "NativeLayerNormBackward0"
    _profiler_name = "aten::layer_norm"  # its torch.profiler event (not derived from the node name)
    _autocast_op = "layer_norm"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

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
        ctx.axes, ctx.stats = axes, (_private_x_hat(x_hat, out), mean, inv_std)
        ctx.save_for_backward(input, weight, bias)  # what PyTorch saves (bias too, for layer norm)
        return out

    @staticmethod
    def backward(ctx, grad):
        input, weight, _ = ctx.saved_tensors
        axes = ctx.axes
        x_hat, rstd = Standardize.apply(input, axes, ctx.stats)
        g = grad if weight is None else grad * weight
        lead = tuple(range(grad.ndim - len(axes)))  # the batch dims: summed for weight/bias
        gx = _normalize_backward(g, x_hat, rstd, axes) if ctx.needs_input_grad[0] else None
        gw = _sum_over(grad * x_hat, lead) if ctx.needs_input_grad[2] else None
        gb = _sum_over(grad, lead) if ctx.needs_input_grad[3] else None
        return gx, None, gw, gb, None

    @staticmethod
    def jvp(ctx, dx, _, dw, db, *__):
        input, weight = ctx.primals[0], ctx.primals[2]
        x_hat, rstd = Standardize.apply(input, ctx.axes, ctx.stats)
        d_x_hat = _normalize_backward(dx, x_hat, rstd, ctx.axes) if dx is not None else None
        return _affine_tangent(d_x_hat, x_hat, weight, dw, db, x_hat.shape[-len(ctx.axes):])


class GroupNorm(Function):
    """``F.group_norm``: statistics over each group of channels (and H, W) of each sample."""

    _backward_name = "NativeGroupNormBackward0"
    _profiler_name = "aten::group_norm"  # its torch.profiler event (not derived from the node name)
    _autocast_op = "group_norm"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, input, num_groups, weight, bias, eps):
        x = input._data
        n, c = x.shape[:2]
        xg = x.reshape(n, num_groups, x.size // max(n * num_groups, 1))  # one row per (sample, group), N may be 0
        with warnings.catch_warnings():  # a group without elements (H or W is 0): NaN, silently as PyTorch
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = xg.mean(axis=2, keepdims=True)
            inv_std = 1.0 / np.sqrt(xg.var(axis=2, keepdims=True) + eps)
        x_hat_g = (xg - mean) * inv_std
        x_hat = x_hat_g.reshape(x.shape)
        shape = (1, c) + (1,) * (x.ndim - 2)
        out = x_hat
        if weight is not None:
            out = out * weight._data.reshape(shape)
        if bias is not None:
            out = out + bias._data.reshape(shape)
        out = in_dtype_of(out, x)  # bfloat16 input: NumPy widened it to float32
        ctx.groups, ctx.shape = num_groups, shape
        ctx.stats = (None if out is x_hat else x_hat_g, mean, inv_std)  # per (sample, group) row
        ctx.save_for_backward(input, weight)  # what PyTorch saves
        return out

    @staticmethod
    def rows(ctx, input):
        """The shape with one row of statistics per (sample, group)."""
        n, groups = input.shape[0], ctx.groups
        return (n, groups, input.numel() // max(n * groups, 1))

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        rows = GroupNorm.rows(ctx, input)
        x_hat, rstd = Standardize.apply(input.reshape(rows), 2, ctx.stats)
        x_hat = x_hat.reshape(input.shape)
        axes = (0,) + tuple(range(2, grad.ndim))
        g = grad if weight is None else grad * weight.reshape(ctx.shape)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = _normalize_backward(g.reshape(rows), x_hat.reshape(rows), rstd, 2).reshape(input.shape)
        if ctx.needs_input_grad[2]:
            gw = (grad * x_hat).sum(axes)
            if rows[2] == 0 and rows[0]:  # groups without elements: PyTorch's formula reads their NaN mean
                gw = gw + float("nan")
        if ctx.needs_input_grad[3]:
            gb = grad.sum(axes)
        return gx, None, gw, gb, None

    @staticmethod
    def jvp(ctx, dx, _, dw, db, *__):
        input, weight = ctx.primals[0], ctx.primals[2]
        rows = GroupNorm.rows(ctx, input)
        x_hat, rstd = Standardize.apply(input.reshape(rows), 2, ctx.stats)
        d_x_hat = None
        if dx is not None:
            d_x_hat = _normalize_backward(dx.reshape(rows), x_hat, rstd, 2).reshape(input.shape)
        return _affine_tangent(d_x_hat, x_hat.reshape(input.shape), weight, dw, db, ctx.shape)
