"""Reductions (sum, mean) and their gradients: broadcast the gradient back."""
import numpy as np

from ..function import Function


def normalize_dims(dim, ndim):
    """``dim`` (None, int or tuple, maybe negative) as a sorted tuple of axes."""
    from ..._tensor import _wrap_dim

    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted(_wrap_dim(d, ndim) for d in dim))


def expand_grad(grad, in_shape, axes, keepdim):
    """Undo a reduction's shape: re-insert reduced axes, then broadcast to ``in_shape``."""
    if not keepdim:
        shape = list(in_shape)
        for ax in axes:
            shape[ax] = 1
        grad = grad.reshape(shape)
    return grad.expand(in_shape)


class Sum(Function):
    _backward_name = "SumBackward1"

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False, dtype=None):
        x = a.data
        ctx.in_shape, ctx.axes, ctx.keepdim = x.shape, normalize_dims(dim, x.ndim), keepdim
        if dtype is None and x.dtype.kind in "biu":
            dtype = np.int64  # PyTorch sums integers and bools into int64
        elif dtype is not None:
            dtype = getattr(dtype, "np", dtype)
        return x.sum(axis=ctx.axes, keepdims=keepdim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        return expand_grad(grad, ctx.in_shape, ctx.axes, ctx.keepdim), None, None, None


class SumAll(Sum):
    """``x.sum()`` with no dim: PyTorch names its node ``SumBackward0``."""

    _backward_name = "SumBackward0"


class Mean(Function):
    _backward_name = "MeanBackward1"

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False, dtype=None):
        x = a.data
        if dtype is None and x.dtype.kind != "f":
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {a.dtype.name.capitalize()}"
            )
        axes = normalize_dims(dim, x.ndim)
        ctx.in_shape, ctx.axes, ctx.keepdim = x.shape, axes, keepdim
        ctx.count = int(np.prod([x.shape[ax] for ax in axes])) if x.ndim else 1
        return x.mean(axis=axes, keepdims=keepdim, dtype=getattr(dtype, "np", dtype))

    @staticmethod
    def backward(ctx, grad):
        return expand_grad(grad / ctx.count, ctx.in_shape, ctx.axes, ctx.keepdim), None, None, None


class MeanAll(Mean):
    _backward_name = "MeanBackward0"


class SumToSize(Function):
    """Sum a broadcast tensor back down to ``shape``: the backward of broadcasting."""

    _backward_name = "SumToSizeBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        from .utils import sum_to_shape_axes

        x = a.data
        ctx.in_shape = x.shape
        lead, kept = sum_to_shape_axes(x.shape, tuple(shape))
        if kept:
            x = x.sum(axis=kept, keepdims=True)
        if lead:
            x = x.sum(axis=lead)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(ctx.in_shape), None
