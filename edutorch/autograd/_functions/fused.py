"""Fused gradient formulas: PyTorch's ``tanh_backward``, ``sigmoid_backward``, ``threshold_backward``, ``pow_backward``.

``TanhBackward0`` could compute ``grad * (1 - y * y)`` with three Tensor ops.
PyTorch instead calls one kernel, ``tanh_backward(grad, y)``; so do we: each
formula below is one ``Function`` whose ``forward`` is the formula on the
arrays, with a ``backward`` of its own so that ``create_graph=True`` (second
derivatives) still works through it.  The ops call them by PyTorch's names,
e.g. ``tanh_backward(grad, y)`` in ``Tanh.backward``.
"""
import numpy as np

from ..function import Function
from .tangents import auto_element_wise
from .utils import quiet_fp


class TanhBackward(Function):
    """``tanh_backward(grad, y) = grad * (1 - y²)`` where ``y = tanh(x)``."""

    _backward_name = "TanhBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, y):
        ctx.save_for_backward(grad, y)
        g, t = grad._data, y._data
        return g * (1 - t * t)

    @staticmethod
    def backward(ctx, gg):
        grad, y = ctx.saved_tensors
        # d/dgrad = 1 - y²;  d/dy = -2 grad y
        g_grad = tanh_backward(gg, y) if ctx.needs_input_grad[0] else None
        g_y = gg * grad * y * -2 if ctx.needs_input_grad[1] else None
        return g_grad, g_y

    jvp = auto_element_wise  # each input's term is element-wise (tangents.py)


class SigmoidBackward(Function):
    """``sigmoid_backward(grad, y) = grad * y * (1 - y)`` where ``y = sigmoid(x)``."""

    _backward_name = "SigmoidBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, y):
        ctx.save_for_backward(grad, y)
        g, s = grad._data, y._data
        return g * (s * (1 - s))

    @staticmethod
    def backward(ctx, gg):
        grad, y = ctx.saved_tensors
        # d/dgrad = y (1 - y);  d/dy = grad (1 - 2y)
        g_grad = sigmoid_backward(gg, y) if ctx.needs_input_grad[0] else None
        g_y = gg * grad * (1 - 2 * y) if ctx.needs_input_grad[1] else None
        return g_grad, g_y

    jvp = auto_element_wise


class ThresholdBackward(Function):
    """``threshold_backward(grad, y, threshold) = grad where y > threshold, else 0`` (ReLU's gradient).

    Exactly PyTorch's ``y <= threshold ? 0 : grad``: a NaN ``y`` passes its
    gradient (the comparison is False), and a blocked position is +0.0 whatever
    the gradient was (multiplying by a 0/1 mask would give -0.0 for a negative
    gradient and NaN for an infinite one).
    """

    _backward_name = "ThresholdBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, y, threshold=0):
        ctx.save_for_backward(y)
        ctx.threshold = threshold
        return np.where(y._data <= threshold, 0, grad._data)

    @staticmethod
    def backward(ctx, gg):
        (y,) = ctx.saved_tensors
        # linear in grad; the mask is piecewise constant in y, so y gets no gradient
        return threshold_backward(gg, y, ctx.threshold), None, None

    jvp = auto_element_wise


class PowBackward(Function):
    """``pow_backward(grad, x, e) = grad * e * x^(e-1)`` for a number exponent ``e``."""

    # PyTorch computes this as ``grad * (e * x.pow(e - 1))``: its node is a Mul
    _backward_name = "MulBackward0"

    @staticmethod
    def forward(ctx, grad, x, exponent):
        ctx.save_for_backward(grad, x)
        ctx.exponent = exponent
        g, a = grad._data, x._data
        if exponent == 2:
            return g * (a * 2)  # the common square: no power computed
        with quiet_fp():  # 0 ** -0.5 is inf, silently
            return g * (exponent * a ** (exponent - 1))

    @staticmethod
    def backward(ctx, gg):
        grad, x = ctx.saved_tensors
        e = ctx.exponent
        # d/dgrad = e x^(e-1) (the same formula);  d/dx = grad e (e-1) x^(e-2)
        g_grad = pow_backward(gg, x, e) if ctx.needs_input_grad[0] else None
        g_x = None
        if ctx.needs_input_grad[1]:
            g_x = gg * grad * (e * (e - 1)) * x ** (e - 2) if e != 1 else gg * grad * 0
        return g_grad, g_x, None

    jvp = auto_element_wise


# PyTorch's names for these kernels, as the ops' backward formulas call them
tanh_backward = TanhBackward.apply
sigmoid_backward = SigmoidBackward.apply
threshold_backward = ThresholdBackward.apply
pow_backward = PowBackward.apply
