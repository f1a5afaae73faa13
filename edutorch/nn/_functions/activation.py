"""Activation functions not already in the engine (ReLU, sigmoid and tanh are).

Each backward multiplies the incoming gradient by the local derivative
``f'(x)``, computed in NumPy during forward's inputs and held as a constant
tensor: ``grad * f'(x)``.  Softmax and log-softmax are written with Tensor ops.
"""
import math

import numpy as np

from ...autograd.function import Function


def _const(array):
    from ..._tensor import Tensor

    return Tensor._make(array)


class LeakyRelu(Function):
    """``x if x > 0 else negative_slope * x``."""

    _backward_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx, input, negative_slope):
        x = input.data
        ctx.save_for_backward(input)
        ctx.slope = negative_slope
        return np.where(x > 0, x, x * x.dtype.type(negative_slope))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        x = input.data
        return grad * _const(np.where(x > 0, 1, ctx.slope).astype(x.dtype)), None


class Elu(Function):
    """``x if x > 0 else alpha * (exp(x) - 1)``."""

    _backward_name = "EluBackward0"

    @staticmethod
    def forward(ctx, input, alpha):
        x = input.data
        ctx.save_for_backward(input)
        ctx.alpha = alpha
        return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        x = input.data
        return grad * _const(np.where(x > 0, 1, ctx.alpha * np.exp(np.minimum(x, 0))).astype(x.dtype)), None


def _erf(x):
    """The error function, vectorised (NumPy has none; ``math.erf`` is scalar)."""
    return np.frompyfunc(math.erf, 1, 1)(x).astype(x.dtype)


class Gelu(Function):
    """``x * Phi(x)`` (Phi = standard normal CDF), or its tanh approximation."""

    _backward_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, input, approximate):
        x = input.data
        ctx.save_for_backward(input)
        ctx.approximate = approximate
        if approximate == "tanh":
            inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
            return 0.5 * x * (1 + np.tanh(inner))
        return 0.5 * x * (1 + _erf(x / math.sqrt(2)))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        x = input.data
        if ctx.approximate == "tanh":
            k = math.sqrt(2 / math.pi)
            t = np.tanh(k * (x + 0.044715 * x ** 3))
            d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
        else:  # d/dx [x Phi(x)] = Phi(x) + x * phi(x)
            cdf = 0.5 * (1 + _erf(x / math.sqrt(2)))
            d = cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        return grad * _const(d.astype(x.dtype)), None


class Silu(Function):
    """``x * sigmoid(x)`` (a.k.a. swish)."""

    _backward_name = "SiluBackward0"

    @staticmethod
    def forward(ctx, input):
        x = input.data
        ctx.save_for_backward(input)
        return x * _sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        x = input.data
        s = _sigmoid(x)
        return grad * _const(s * (1 + x * (1 - s)))


def _sigmoid(x):
    return np.exp(-np.logaddexp(0, -x)).astype(x.dtype, copy=False)


class Softplus(Function):
    """``log(1 + exp(beta * x)) / beta``; linear (``x``) where ``beta * x > threshold``."""

    _backward_name = "SoftplusBackward0"

    @staticmethod
    def forward(ctx, input, beta, threshold):
        x = input.data
        ctx.save_for_backward(input)
        ctx.beta, ctx.threshold = beta, threshold
        bx = x * beta
        return np.where(bx > threshold, x, np.logaddexp(0, bx) / beta).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        bx = input.data * ctx.beta
        d = np.where(bx > ctx.threshold, 1, _sigmoid(bx))
        return grad * _const(d.astype(input.data.dtype)), None, None


class Softmax(Function):
    """``exp(x) / sum(exp(x))`` along ``dim``, shifted by the max so exp cannot overflow."""

    _backward_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, input, dim):
        x = input.data
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        out = _const(e / e.sum(axis=dim, keepdims=True))
        ctx.save_for_backward(out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, grad):
        # dL/dx = y * (g - sum(g * y)): the Jacobian of softmax applied to g
        (y,) = ctx.saved_tensors
        return y * (grad - (grad * y).sum(ctx.dim, keepdim=True)), None


def log_softmax_array(x, dim):
    """``x - logsumexp(x)`` in NumPy, stable for large values."""
    shifted = x - x.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


class LogSoftmax(Function):
    """``x - log(sum(exp(x)))`` along ``dim``."""

    _backward_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, input, dim):
        out = _const(log_softmax_array(input.data, dim))
        ctx.save_for_backward(out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, grad):
        # dL/dx = g - softmax(x) * sum(g), and softmax(x) = exp(log_softmax(x))
        (y,) = ctx.saved_tensors
        return grad - y.exp() * grad.sum(ctx.dim, keepdim=True), None
