"""Fused gradient formulas: PyTorch's ``tanh_backward``, ``sigmoid_backward``, ``threshold_backward``, ``pow_backward``.

``TanhBackward0`` could compute ``grad * (1 - y * y)`` with three Tensor ops,
each paying the per-op bookkeeping of ``Function.apply``.  PyTorch instead
calls one kernel, ``tanh_backward(grad, y)``; so do we: each formula below is
one ``Function`` with a NumPy forward, and a backward of its own so that
``create_graph=True`` (second derivatives) still works through it.
"""
import numpy as np

from ..function import Function
from ..grad_mode import _state
from . import utils as _utils  # _utils._Tensor: edutorch.Tensor, without an import cycle


class TanhBackward(Function):
    """``tanh_backward(grad, y) = grad * (1 - y²)`` where ``y = tanh(x)``."""

    _backward_name = "TanhBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, y):
        ctx.save_for_backward(grad, y)
        return _tanh_grad(grad._data, y._data)

    @staticmethod
    def backward(ctx, gg):
        grad, y = ctx.saved_tensors
        # d/dgrad = 1 - y²;  d/dy = -2 grad y
        g_grad = TanhBackward.apply(gg, y) if ctx.needs_input_grad[0] else None
        g_y = gg * grad * y * -2 if ctx.needs_input_grad[1] else None
        return g_grad, g_y


class SigmoidBackward(Function):
    """``sigmoid_backward(grad, y) = grad * y * (1 - y)`` where ``y = sigmoid(x)``."""

    _backward_name = "SigmoidBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, y):
        ctx.save_for_backward(grad, y)
        return _sigmoid_grad(grad._data, y._data)

    @staticmethod
    def backward(ctx, gg):
        grad, y = ctx.saved_tensors
        # d/dgrad = y (1 - y);  d/dy = grad (1 - 2y)
        g_grad = SigmoidBackward.apply(gg, y) if ctx.needs_input_grad[0] else None
        g_y = gg * grad * (1 - 2 * y) if ctx.needs_input_grad[1] else None
        return g_grad, g_y


class ThresholdBackward(Function):
    """``threshold_backward(grad, y, threshold) = grad where y > threshold, else 0`` (ReLU's gradient)."""

    _backward_name = "ThresholdBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, y, threshold=0):
        ctx.save_for_backward(y)
        ctx.threshold = threshold
        return _threshold_grad(grad._data, y._data, threshold)

    @staticmethod
    def backward(ctx, gg):
        (y,) = ctx.saved_tensors
        # linear in grad; the mask is piecewise constant in y, so y gets no gradient
        return ThresholdBackward.apply(gg, y, ctx.threshold), None, None


class PowBackward(Function):
    """``pow_backward(grad, x, e) = grad * e * x^(e-1)`` for a number exponent ``e``."""

    # PyTorch computes this as ``grad * (e * x.pow(e - 1))``: its node is a Mul
    _backward_name = "MulBackward0"

    @staticmethod
    def forward(ctx, grad, x, exponent):
        ctx.save_for_backward(grad, x)
        ctx.exponent = exponent
        return _pow_grad(grad._data, x._data, exponent)

    @staticmethod
    def backward(ctx, gg):
        grad, x = ctx.saved_tensors
        e = ctx.exponent
        # d/dgrad = e x^(e-1) (the same formula);  d/dx = grad e (e-1) x^(e-2)
        g_grad = PowBackward.apply(gg, x, e) if ctx.needs_input_grad[0] else None
        g_x = None
        if ctx.needs_input_grad[1]:
            g_x = gg * grad * (e * (e - 1)) * x ** (e - 2) if e != 1 else gg * grad * 0
        return g_grad, g_x, None


# The formulas on arrays, shared by the Functions above and by the helpers below.
def _tanh_grad(g, t):
    return g * (1 - t * t)


def _sigmoid_grad(g, s):
    return g * (s * (1 - s))


_SAME_SIZE_UINT = {np.dtype(np.float16): np.uint16, np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}


def _threshold_grad(g, y, threshold):
    """PyTorch's ``y <= threshold ? 0 : grad``, exactly.

    A NaN ``y`` passes its gradient (the comparison is False), and a blocked
    position is +0.0 whatever the gradient was: multiplying by a 0/1 mask would
    give -0.0 for a negative gradient and NaN for an infinite one.  ``np.where``
    says it directly but is ~8x slower on a large random mask, so for large
    NumPy float arrays the select is done on the bits: AND with all-ones keeps
    the gradient, AND with zero gives the bits of +0.0.  (Small arrays keep
    ``np.where``: two NumPy calls instead of four.)
    """
    uint = _SAME_SIZE_UINT.get(g.dtype) if type(g) is np.ndarray and g.shape == y.shape else None
    if uint is None or g.size < 4096:  # small, or another array type (CuPy), dtype or shape
        return np.where(y <= threshold, 0, g)
    keep = np.asarray(y <= threshold).astype(uint)  # asarray: a 0-d comparison is a NumPy scalar
    keep -= 1  # blocked: 1 - 1 = 0; kept: 0 - 1 wraps to all ones
    return np.bitwise_and(g.view(uint), keep, out=keep).view(g.dtype)


def _pow_grad(g, a, exponent):
    if exponent == 2:
        return g * (a * 2)  # the common square: no power computed
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 ** -0.5 is inf, silently
        return g * (exponent * a ** (exponent - 1))


# What the backward formulas call.  In a plain backward (grad mode off) nothing
# is recorded, so the formula runs straight on the arrays; with
# ``create_graph=True`` it is a Function, so it can be differentiated again.
def pow_backward(grad, x, exponent):
    if _state["enabled"]:
        return PowBackward.apply(grad, x, exponent)
    return _utils._Tensor._make(_pow_grad(grad._data, x._data, exponent))


def tanh_backward(grad, y):
    if _state["enabled"]:
        return TanhBackward.apply(grad, y)
    return _utils._Tensor._make(_tanh_grad(grad._data, y._data))


def sigmoid_backward(grad, y):
    if _state["enabled"]:
        return SigmoidBackward.apply(grad, y)
    return _utils._Tensor._make(_sigmoid_grad(grad._data, y._data))


def threshold_backward(grad, y, threshold=0):
    if _state["enabled"]:
        return ThresholdBackward.apply(grad, y, threshold)
    return _utils._Tensor._make(_threshold_grad(grad._data, y._data, threshold))
