"""Loss functions with their own graph nodes, as PyTorch has them.

``reduction`` turns the per-element loss into the result: ``'none'`` keeps it,
``'sum'`` adds it up, ``'mean'`` averages it.  Backward therefore scales the
local derivative by the incoming gradient (a scalar for sum/mean, one value
per element for none) and, for mean, divides by the count.

Backwards are written with Tensor ops (masks of piecewise definitions are
constants), so ``create_graph=True`` gives correct second derivatives.
"""
import numpy as np

from ... import backend

from ...autograd.function import Function
from ...autograd._saved_attrs import Saved
from ...autograd._functions.tangents import auto_linear, auto_reduction, auto_reduction_in
from ...autograd._functions.utils import quiet_fp, sign
from .utils import constant
from ..._dtype import is_floating as _is_floating
from ... import _dtype



_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}  # PyTorch's at::Reduction, as its nodes save it


def reduce_array(loss, reduction):
    """Apply ``reduction`` to a NumPy loss array."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def reduction_scale(grad, reduction, count):
    """The incoming gradient as a factor for the per-element derivative."""
    if reduction == "mean":
        return grad / count
    return grad


def _not_implemented(kernel, dtype):
    """PyTorch's error for a loss kernel given a dtype it has no implementation for."""
    name = _dtype.scalar_type_name(_dtype.from_numpy_dtype(dtype))
    raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


class _PointwiseLoss(Function):
    """A loss ``l(x, t)`` per element, then reduced.  Subclasses give ``loss`` and ``dloss``."""

    @classmethod
    def forward(cls, ctx, input, target, reduction, *params):
        x, t = np.broadcast_arrays(input._data, target._data)
        if not _is_floating(np.result_type(x, t)):  # integer or bool operands: PyTorch has no kernel
            _not_implemented(cls._kernel, x.dtype if x.dtype.kind != "b" else t.dtype)
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.params = reduction, params
        return reduce_array(cls.loss(x - t, *params), reduction)

    @classmethod
    def backward(cls, ctx, grad):
        input, target = ctx.saved_tensors
        diff = input - target  # broadcast, as in forward
        local = cls.dloss(diff, *ctx.params)
        g = reduction_scale(grad, ctx.reduction, diff.numel()) * local  # dl/dx; dl/dt = -dl/dx
        gx = g.sum_to_size(input.shape) if ctx.needs_input_grad[0] else None
        gt = (-g).sum_to_size(target.shape) if ctx.needs_input_grad[1] else None
        return (gx, gt, None) + (None,) * len(ctx.params)

    jvp = auto_reduction  # Σ backward(ones) · tangent (autograd/_functions/tangents.py)


def _masks(d, limit):
    """Constant masks of a piecewise loss: inside ``|d| <= limit`` and the sign of ``d``.

    As PyTorch's kernels test ``d < -limit`` and ``d > limit``, a NaN counts as inside.
    """
    inside = ~(np.abs(d._data) > limit)
    return constant(inside.astype(d._data.dtype)), constant(sign(d._data))


class MseLoss(_PointwiseLoss):
    """``(x - t)**2``."""

    _backward_name = "MseLossBackward0"
    _autocast_op = "mse_loss"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    # grad_fn._saved_<name> (autograd/_saved_attrs.py); reduction as PyTorch's enum: none 0, mean 1, sum 2
    _saved_attrs = {"reduction": lambda ctx: _REDUCTION_ENUM[ctx.reduction], "self": Saved(0), "target": Saved(1)}
    _kernel = "mse_cpu"

    @staticmethod
    def loss(d):
        return d * d

    @staticmethod
    def dloss(d):
        return d * 2


class SmoothL1Loss(_PointwiseLoss):
    """``0.5 d**2 / beta`` if ``|d| < beta`` else ``|d| - 0.5 beta``."""

    _backward_name = "SmoothL1LossBackward0"
    _autocast_op = "smooth_l1_loss"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = dict(MseLoss._saved_attrs, beta=lambda ctx: ctx.params[0])
    _kernel = "smooth_l1_cpu"

    @staticmethod
    def loss(d, beta):
        a = np.abs(d)
        if beta == 0:
            return a
        return np.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)

    @staticmethod
    def dloss(d, beta):
        inside, sign = _masks(d, beta)
        if beta == 0:
            return sign
        # the quadratic part only where |d| < beta (masked, not multiplied: inf * 0 would be nan)
        return d.masked_fill(inside == 0, 0) / beta + (1 - inside) * sign


class HuberLoss(_PointwiseLoss):
    """``0.5 d**2`` if ``|d| < delta`` else ``delta (|d| - 0.5 delta)`` (= delta * SmoothL1)."""

    _backward_name = "HuberLossBackward0"
    _autocast_op = "huber_loss"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = dict(MseLoss._saved_attrs, delta=lambda ctx: ctx.params[0])
    _kernel = "huber_cpu"

    @staticmethod
    def loss(d, delta):
        a = np.abs(d)
        return np.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))

    @staticmethod
    def dloss(d, delta):
        inside, sign = _masks(d, delta)
        return d.masked_fill(inside == 0, 0) + (1 - inside) * sign * delta


def _target_weights(t, weight, ignore_index, n_classes, dtype):
    """Each sample's target, made safe to index with, and its weight: ``weight[t]``, 0 where
    the target is ``ignore_index`` (an ignored target may be out of range; others may not)."""
    keep = t != ignore_index
    safe_t = np.where(keep, t, 0).astype(np.int64, copy=False)
    if safe_t.size and (safe_t.min() < 0 or safe_t.max() >= n_classes):
        raise IndexError(f"Target {int(safe_t[(safe_t < 0) | (safe_t >= n_classes)].flat[0])} is out of bounds.")
    if weight is None:
        return safe_t, keep.astype(dtype)
    return safe_t, np.where(keep, weight[safe_t], 0).astype(dtype)


def _check_some_classes(x, target):
    """PyTorch views a K-d input (K != 4) as (N, C, 1, -1) for its 2-d kernel: with no classes (C = 0)
    that view is (N, 0, 0, 0), and a target with elements does not fit it."""
    if x.ndim not in (2, 4) and x.shape[1] == 0 and target.size:
        n = x.shape[0]
        raise RuntimeError(f"size mismatch (got input: [{n}, 0, 0, 0] , target: [{n}, 1, {target.size // n}]")


def _at_targets(t):
    """The index of ``input[n, t[n, ...], ...]`` for every sample n (and position): ``t`` on
    the class axis (1), and on the others an ``arange`` that broadcasts against ``t``."""
    xp = backend.get_array_module(t)
    axes = [xp.arange(size).reshape((-1,) + (1,) * (t.ndim - 1 - i)) for i, size in enumerate(t.shape)]
    return (axes[0], t, *axes[1:])


class NllLoss(Function):
    """``-weight[t] * input[n, t]`` for each sample (input holds log-probabilities).

    ``input`` is (N, C) or (N, C, d1, ...); ``target`` holds class indices.
    The mean is *weighted*: divided by the sum of the weights of the targets
    (PyTorch's ``total_weight``), and samples whose target is ``ignore_index``
    count for nothing.  ``F.nll_loss`` and ``F.cross_entropy`` both end here.
    """

    _backward_name = "NllLossBackward0"
    _autocast_op = "nll_loss"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, input, target, weight, reduction, ignore_index, *, saved=()):
        # target and weight come as arrays: like PyTorch's node, this one has an
        # edge for ``input`` only (class indices have no gradient); their tensors
        # come in ``saved``, kept (as PyTorch does) so that changing them in place
        # before backward raises PyTorch's error
        ctx.save_for_backward(input, *saved)
        x = input._data
        if not _is_floating(x.dtype):
            _not_implemented("nll_loss_out_frame", x.dtype)
        target = backend.get_array_module(x).asarray(target)  # on the input's device
        _check_some_classes(x, target)
        t, w_t = _target_weights(target, weight, ignore_index, x.shape[1], x.dtype)
        losses = -w_t * x[_at_targets(t)]  # input[n, t[n], ...] for every sample (and position) at once
        ctx.shape, ctx.target, ctx.reduction = x.shape, t, reduction
        # d loss / d input[n, t[n]]: -weight[t[n]], divided by the total weight for the mean
        if reduction != "mean":
            ctx.slope = -w_t
            return losses if reduction == "none" else losses.sum()
        total = w_t.sum()
        with quiet_fp():  # no samples: 0 / 0, NaN as in PyTorch
            ctx.slope = -w_t / total
            return losses.sum() / total

    @staticmethod
    def backward(ctx, grad):
        return NllLossBackward.apply(grad, ctx.target, ctx.slope, ctx.shape, ctx.reduction), None, None, None, None

    @staticmethod
    def jvp(ctx, d_input, *_):
        """Picking ``input[n, t[n]]`` (times the slope) is linear: the tangent picks ``d_input`` the
        same way, which is what ``NllLossBackward``'s own backward computes (ctx has its fields)."""
        return NllLossBackward.backward(ctx, d_input)[0]


class NllLossBackward(Function):
    """PyTorch's ``nll_loss_backward``, one op (as ``autograd/_functions/fused.py``).

    The gradient is zero except at each picked ``[n, t[n]]``, where it is
    ``grad * slope[n]`` (``grad[n]`` for ``"none"``; ``slope = -weight[t[n]]``,
    over the total weight for ``"mean"``).  Its own backward, for
    ``create_graph=True``, gathers those entries back.
    """

    _backward_name = "NllLossBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, target, slope, shape, reduction):
        g = grad._data
        ctx.target, ctx.slope, ctx.reduction = target, slope, reduction
        out = backend.get_array_module(g).zeros(shape, dtype=g.dtype)
        out[_at_targets(target)] = g * slope  # one value per sample (and position), at its target class
        return out

    @staticmethod
    def backward(ctx, gg):
        index = constant(np.expand_dims(ctx.target, 1))
        picked = gg.gather(1, index).squeeze(1) * constant(ctx.slope)  # one value per sample
        return (picked if ctx.reduction == "none" else picked.sum()), None, None, None, None

    jvp = auto_linear(0)  # linear in grad


class BinaryCrossEntropy(Function):
    """``-w (t log x + (1 - t) log(1 - x))``, each log clamped at -100 as in PyTorch."""

    _backward_name = "BinaryCrossEntropyBackward0"
    _autocast_op = "binary_cross_entropy"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, input, target, weight, reduction):
        x, t = input._data, target._data
        if not _is_floating(x.dtype) and not _is_floating(t.dtype):
            _not_implemented("binary_cross_entropy", x.dtype)
        if ((x < 0) | (x > 1)).any():
            raise RuntimeError("all elements of input should be between 0 and 1")
        with np.errstate(divide="ignore"):
            loss = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x), -100))
        if weight is not None:
            loss = loss * weight._data
        ctx.save_for_backward(input, target, weight)
        ctx.reduction = reduction
        return reduce_array(loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        x, t, weight = ctx.saved_tensors
        scale = reduction_scale(grad, ctx.reduction, x.numel())
        if weight is not None:
            scale = scale * weight
        gx = gt = None
        if ctx.needs_input_grad[0]:
            eps = 1e-12  # PyTorch's guard against dividing by zero at x = 0 or 1
            gx = scale * (x - t) / ((1 - x) * x).clamp_min(eps)
        if ctx.needs_input_grad[1]:  # d/dt = log(1 - x) - log(x) = -logit(x)
            gt = scale * ((1 - x).log() - x.log())
        return gx, gt, None, None

    # weight's tangent adds no term, as in PyTorch (a dual weight with a dual input or target
    # gives the tangent a tangent: refused, RuntimeError, as there)
    jvp = auto_reduction_in(0, 1)


class BinaryCrossEntropyWithLogits(Function):
    """BCE of ``sigmoid(x)``, computed from the logits without overflow.

    ``loss = (1 - t) x + (1 + (p - 1) t) log(1 + exp(-x))`` with ``p = pos_weight``;
    ``log(1 + exp(-x))`` is ``logaddexp(0, -x)``, which never overflows.
    """

    _backward_name = "BinaryCrossEntropyWithLogitsBackward0"
    _autocast_op = "binary_cross_entropy_with_logits"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, input, target, weight, pos_weight, reduction):
        x, t = input._data, target._data
        softplus_neg = np.logaddexp(0, -x)
        if pos_weight is None:
            loss = (1 - t) * x + softplus_neg
        else:
            loss = (1 - t) * x + (1 + (pos_weight._data - 1) * t) * softplus_neg
        if weight is not None:
            loss = loss * weight._data
        ctx.save_for_backward(input, target, weight, pos_weight)
        ctx.reduction = reduction
        return reduce_array(loss.astype(x.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, grad):
        x, t, weight, p = ctx.saved_tensors
        scale = reduction_scale(grad, ctx.reduction, x.numel())
        if weight is not None:
            scale = scale * weight
        gx = gt = None
        if ctx.needs_input_grad[0]:
            s = x.sigmoid()
            # d/dx: s - t, or with pos_weight (1 + (p-1) t) s - p t
            gx = scale * (s - t if p is None else (1 + (p - 1) * t) * s - p * t)
        if ctx.needs_input_grad[1]:  # d/dt: -x, or with pos_weight -x + (p-1) log(1 + exp(-x))
            gt = scale * (-x if p is None else (p - 1) * (-x).exp().log1p() - x)
        return gx, gt, None, None, None

    jvp = auto_reduction_in(0, 1)  # as BinaryCrossEntropy's: weight and pos_weight are constants
