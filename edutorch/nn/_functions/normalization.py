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

Double backward (``create_graph=True``): that formula is NumPy code, so the
layers then recompute ``y`` with Tensor ops (``mean``, ``var``, ``rsqrt``)
and let autograd differentiate it (``utils.differentiable_backward``).

What backward reads: the tensors PyTorch saves (input, weight, running
statistics; LayerNorm also bias) go through ``save_for_backward``, so an
in-place change of any of them before backward raises PyTorch's error.
``ctx`` keeps only arrays private to the node: the statistics, and ``x_hat``
when it is not itself the output (without weight and bias the output *is*
``x_hat``, which the user may change in place: backward then recomputes it
from the saved input).
"""
import numpy as np

from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled
from .utils import constant, differentiable_backward
from ...autograd._functions.utils import in_dtype_of


def _normalize_backward(g, x_hat, inv_std, axes):
    """dL/dx of ``x_hat = (x - mean) * inv_std`` over ``axes`` (see module doc)."""
    mean_g = g.mean(axis=axes, keepdims=True)
    mean_gx = (g * x_hat).mean(axis=axes, keepdims=True)
    return (g - mean_g - x_hat * mean_gx) * inv_std


def _wrap(a):
    return None if a is None else constant(a)


def _private_x_hat(x_hat, out):
    """``x_hat`` for backward, unless it is the output itself (then backward recomputes it)."""
    return None if out is x_hat else x_hat


def _normalize_ops(x, axes, eps):
    """``x_hat = (x - mean) / sqrt(var + eps)`` over ``axes``, with differentiable Tensor ops."""
    mean = x.mean(axes, keepdim=True)
    var = x.var(axes, correction=0, keepdim=True)  # biased, as in forward
    return (x - mean) * (var + eps).rsqrt()


def _affine_ops(x_hat, weight, bias, shape=None):
    """``x_hat * weight + bias`` (each optional), weight and bias viewed as ``shape`` if given."""
    out = x_hat
    if weight is not None:
        out = out * (weight if shape is None else weight.reshape(shape))
    if bias is not None:
        out = out + (bias if shape is None else bias.reshape(shape))
    return out


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
        ctx.x_hat, ctx.inv_std, ctx.axes, ctx.shape, ctx.training = \
            _private_x_hat(x_hat, out), inv_std, axes, shape, training
        ctx.save_for_backward(input, weight, running_mean, running_var)  # what PyTorch saves
        ctx.mean, ctx.eps = mean, eps
        return out

    @staticmethod
    def forward_ops(ctx, x, weight, bias):
        """The forward with Tensor ops: batch statistics (train) or the constant running ones (eval)."""
        if ctx.training:
            x_hat = _normalize_ops(x, ctx.axes, ctx.eps)
        else:
            x_hat = (x - constant(ctx.mean)) * constant(ctx.inv_std)
        return _affine_ops(x_hat, weight, bias, ctx.shape)

    @staticmethod
    def backward(ctx, grad):
        input, weight, _, _ = ctx.saved_tensors
        needs, axes = ctx.needs_input_grad, ctx.axes
        if is_grad_enabled():  # create_graph=True: a backward that can be differentiated again
            gx, gw = differentiable_backward(lambda x, w: BatchNorm.forward_ops(ctx, x, w, None),
                                             (input, weight), needs[:2], grad)
            return gx, gw, grad.sum(axes) if needs[2] else None, None, None, None, None, None
        g_out = grad._data
        x_hat = ctx.x_hat if ctx.x_hat is not None else (input._data - ctx.mean) * ctx.inv_std
        g = g_out if weight is None else g_out * weight._data.reshape(ctx.shape)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            if ctx.training:
                gx = _normalize_backward(g, x_hat, ctx.inv_std, axes)
            else:  # eval: mean and var are constants, the map is affine
                gx = g * ctx.inv_std
        if ctx.needs_input_grad[1]:
            gw = (g_out * x_hat).sum(axis=axes)
        if ctx.needs_input_grad[2]:
            gb = g_out.sum(axis=axes)
        return _wrap(gx), _wrap(gw), _wrap(gb), None, None, None, None, None


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
        ctx.x_hat, ctx.inv_std, ctx.axes = _private_x_hat(x_hat, out), inv_std, axes
        ctx.save_for_backward(input, weight, bias)  # what PyTorch saves (bias too, for layer norm)
        ctx.mean, ctx.eps = mean, eps
        return out

    @staticmethod
    def forward_ops(ctx, x, weight, bias):
        """The forward with Tensor ops; weight and bias broadcast over the leading dims."""
        return _affine_ops(_normalize_ops(x, ctx.axes, ctx.eps), weight, bias)

    @staticmethod
    def backward(ctx, grad):
        saved = ctx.saved_tensors
        if is_grad_enabled():  # create_graph=True: a backward that can be differentiated again
            needs = ctx.needs_input_grad
            gx, gw, gb = differentiable_backward(lambda *args: LayerNorm.forward_ops(ctx, *args),
                                                 saved, (needs[0], needs[2], needs[3]), grad)
            return gx, None, gw, gb, None
        input, weight, _ = saved
        g_out = grad._data
        axes = ctx.axes
        x_hat = ctx.x_hat if ctx.x_hat is not None else (input._data - ctx.mean) * ctx.inv_std
        g = g_out if weight is None else g_out * weight._data
        lead = tuple(range(g_out.ndim - len(axes)))  # the batch dims: summed for weight/bias
        gx = _normalize_backward(g, x_hat, ctx.inv_std, axes) if ctx.needs_input_grad[0] else None
        gw = (g_out * x_hat).sum(axis=lead) if ctx.needs_input_grad[2] else None
        gb = g_out.sum(axis=lead) if ctx.needs_input_grad[3] else None
        return _wrap(gx), None, _wrap(gw), _wrap(gb), None


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
        ctx.x_hat, ctx.inv_std, ctx.groups, ctx.shape = _private_x_hat(x_hat, out), inv_std, num_groups, shape
        ctx.save_for_backward(input, weight)  # what PyTorch saves
        ctx.mean, ctx.eps = mean, eps
        return in_dtype_of(out, x)  # bfloat16 input: NumPy widened it to float32

    @staticmethod
    def forward_ops(ctx, x, weight, bias):
        """The forward with Tensor ops: statistics over each (sample, group) row."""
        x_hat = _normalize_ops(x.reshape(x.shape[0], ctx.groups, -1), 2, ctx.eps).reshape(x.shape)
        return _affine_ops(x_hat, weight, bias, ctx.shape)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        axes = (0,) + tuple(range(2, grad.ndim))
        if is_grad_enabled():  # create_graph=True: a backward that can be differentiated again
            gx, gw = differentiable_backward(lambda x, w: GroupNorm.forward_ops(ctx, x, w, None),
                                             (input, weight), (needs[0], needs[2]), grad)
            return gx, None, gw, grad.sum(axes) if needs[3] else None, None
        g_out = grad._data
        n = g_out.shape[0]
        x_hat = ctx.x_hat
        if x_hat is None:  # recomputed per (sample, group) row, as in forward
            x_hat = ((input._data.reshape(n, ctx.groups, -1) - ctx.mean) * ctx.inv_std).reshape(g_out.shape)
        g = g_out if weight is None else g_out * weight._data.reshape(ctx.shape)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            grouped = _normalize_backward(g.reshape(n, ctx.groups, -1),
                                          x_hat.reshape(n, ctx.groups, -1), ctx.inv_std, 2)
            gx = grouped.reshape(g_out.shape)
        if ctx.needs_input_grad[2]:
            gw = (g_out * x_hat).sum(axis=axes)
        if ctx.needs_input_grad[3]:
            gb = g_out.sum(axis=axes)
        return _wrap(gx), None, _wrap(gw), _wrap(gb), None
