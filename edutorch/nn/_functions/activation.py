"""Activation functions not already in the engine (ReLU, sigmoid and tanh are).

Each backward returns ``grad * f'(x)``.  Where ``f'`` is piecewise constant
(LeakyReLU's 1 or slope) it is a constant mask; otherwise it is written with
Tensor ops (``exp``, ``sigmoid``, ``tanh``...) so that ``create_graph=True``
can differentiate it again.  GELU's derivative needs the error function,
which has no Tensor op: it is its own small Function (``GeluGrad``).
"""
import math

import numpy as np

from ...autograd.function import Function
from ...autograd._saved_attrs import Saved, int64
from .utils import constant
from ...autograd._functions.utils import in_dtype_of


def _leaky_relu_grad(grad, t, slope):
    """``grad * f'``: 1 where ``t > 0``, ``slope`` elsewhere (``t``: the input, or the result,
    which has the input's sign when ``slope >= 0``)."""
    x = t._data
    return grad * constant(np.where(x > 0, 1, slope).astype(x.dtype))


class LeakyRelu(Function):
    """``x if x > 0 else negative_slope * x``."""

    _backward_name = "LeakyReluBackward0"
    _saved_attrs = {"negative_slope": lambda ctx: ctx.slope, "self": Saved(0)}  # grad_fn._saved_*

    @staticmethod
    def forward(ctx, input, negative_slope):
        x = input._data
        ctx.save_for_backward(input)
        ctx.slope = negative_slope
        return np.where(x > 0, x, x * x.dtype.type(negative_slope))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        return _leaky_relu_grad(grad, input, ctx.slope), None


class LeakyReluInplace(Function):
    """``leaky_relu_`` (``inplace=True``): the input is overwritten, so backward reads the
    *result* (PyTorch's ``LeakyReluBackward1``): with a slope >= 0 it is positive where x is."""

    _backward_name = "LeakyReluBackward1"

    @staticmethod
    def forward(ctx, input, negative_slope):
        out = constant(LeakyRelu.forward(ctx, input, negative_slope))
        ctx.save_for_backward(out)  # the result, in place of the input saved above
        return out

    @staticmethod
    def backward(ctx, grad):
        if ctx.slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                "supported. This is caused by calling in-place forward function with a negative slope, "
                "please call out-of-place version instead. File an issue at "
                "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
                "backward calculation with negative slope"
            )
        (result,) = ctx.saved_tensors
        return _leaky_relu_grad(grad, result, ctx.slope), None


class Elu(Function):
    """``x if x > 0 else alpha * (exp(x) - 1)``."""

    _backward_name = "EluBackward0"
    # F.elu is PyTorch's elu(x, alpha, scale=1, input_scale=1)
    _saved_attrs = {"alpha": lambda ctx: ctx.alpha, "input_scale": lambda ctx: 1, "scale": lambda ctx: 1,
                    "self": Saved(0)}

    @staticmethod
    def forward(ctx, input, alpha):
        x = input._data
        ctx.save_for_backward(input)
        ctx.alpha = alpha
        return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        # f'(x) = 1 for x > 0, alpha * exp(x) otherwise
        (input,) = ctx.saved_tensors
        negative = constant(input._data <= 0)  # PyTorch's test: a NaN counts as positive
        pos = 1 - negative.to(input.dtype)
        neg_part = input.masked_fill(~negative, 0).exp() * ctx.alpha  # exp(min(x, 0)) * alpha
        return grad * (pos + (1 - pos) * neg_part), None


class EluInplace(Function):
    """``elu_`` (``inplace=True``): backward reads the *result* (PyTorch's ``EluBackward1``):
    f'(x) = 1 where the result is positive, result + alpha elsewhere."""

    _backward_name = "EluBackward1"

    @staticmethod
    def forward(ctx, input, alpha):
        out = constant(Elu.forward(ctx, input, alpha))
        ctx.save_for_backward(out)  # the result, in place of the input saved above
        return out

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        positive = constant(result._data > 0).to(result.dtype)
        return grad * (positive + (1 - positive) * (result + ctx.alpha)), None


def _erf(x):
    """The error function, vectorised (NumPy has none; ``math.erf`` is scalar)."""
    return np.frompyfunc(math.erf, 1, 1)(x).astype(x.dtype)


class Gelu(Function):
    """``x * Phi(x)`` (Phi = standard normal CDF), or its tanh approximation."""

    _backward_name = "GeluBackward0"
    _saved_attrs = {"approximate": lambda ctx: ctx.approximate, "self": Saved(0)}

    @staticmethod
    def forward(ctx, input, approximate):
        x = input._data
        ctx.save_for_backward(input)
        ctx.approximate = approximate
        if approximate == "tanh":
            inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
            return in_dtype_of(0.5 * x * (1 + np.tanh(inner)), x)
        return in_dtype_of(0.5 * x * (1 + _erf(x / math.sqrt(2))), x)  # bfloat16 * 0.5 is float32 in NumPy

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if ctx.approximate == "tanh":
            k = math.sqrt(2 / math.pi)
            t = (k * (x + 0.044715 * x ** 3)).tanh()
            d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
            return grad * d, None
        return grad * GeluGrad.apply(x), None


class GeluGrad(Function):
    """``Phi(x) + x * phi(x)``, the derivative of exact GELU; its own derivative is ``phi(x) (2 - x**2)``."""

    _backward_name = "GeluBackwardBackward0"

    @staticmethod
    def forward(ctx, input):
        x = input._data
        ctx.save_for_backward(input)
        cdf = 0.5 * (1 + _erf(x / math.sqrt(2)))
        return (cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        x = input
        pdf = (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
        return grad * pdf * (2 - x * x)


class Silu(Function):
    """``x * sigmoid(x)`` (a.k.a. swish)."""

    _backward_name = "SiluBackward0"
    _saved_attrs = {"self": Saved(0)}

    @staticmethod
    def forward(ctx, input):
        x = input._data
        ctx.save_for_backward(input)
        return x * _sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        # d/dx [x s(x)] = s + x s (1 - s) = s (1 + x (1 - s))
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return grad * (s * (1 + x * (1 - s)))


def _sigmoid(x):
    return np.exp(-np.logaddexp(0, -x)).astype(x.dtype, copy=False)


class Softplus(Function):
    """``log(1 + exp(beta * x)) / beta``; linear (``x``) where ``beta * x > threshold``."""

    _backward_name = "SoftplusBackward0"
    _saved_attrs = {"beta": lambda ctx: ctx.beta, "self": Saved(0), "threshold": lambda ctx: ctx.threshold}

    @staticmethod
    def forward(ctx, input, beta, threshold):
        x = input._data
        ctx.save_for_backward(input)
        ctx.beta, ctx.threshold = beta, threshold
        bx = x * beta
        return np.where(bx > threshold, x, np.logaddexp(0, bx) / beta).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        # sigmoid(beta x) where the softplus is active, 1 where it is linear
        (input,) = ctx.saved_tensors
        linear = constant((input._data * ctx.beta > ctx.threshold).astype(input._data.dtype))
        return grad * (linear + (1 - linear) * (input * ctx.beta).sigmoid()), None, None


class Softmax(Function):
    """``exp(x) / sum(exp(x))`` along ``dim``, shifted by the max so exp cannot overflow."""

    _backward_name = "SoftmaxBackward0"
    # grad_fn._saved_<name> (autograd/_saved_attrs.py): dim as the caller gave it
    _saved_attrs = {"dim": lambda ctx: int64(ctx.dim), "result": Saved(0)}

    @staticmethod
    def forward(ctx, input, dim):
        x = input._data
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        out = constant(e / e.sum(axis=dim, keepdims=True))
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
    shifted -= np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
    return shifted


class LogSoftmax(Function):
    """``x - log(sum(exp(x)))`` along ``dim``."""

    _backward_name = "LogSoftmaxBackward0"
    _saved_attrs = Softmax._saved_attrs

    @staticmethod
    def forward(ctx, input, dim):
        out = constant(log_softmax_array(input._data, dim))
        ctx.save_for_backward(out)  # PyTorch saves the result (a Tensor: create_graph needs its graph)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, grad):
        # dL/dx = g - softmax(x) * sum(g), and softmax(x) = exp(log_softmax(x))
        (y,) = ctx.saved_tensors
        return LogSoftmaxBackward.apply(grad, y, ctx.dim), None


class LogSoftmaxBackward(Function):
    """PyTorch's ``_log_softmax_backward_data``: ``grad - exp(y) * grad.sum(dim)``, one op.

    ``y`` is the log-softmax output, so ``exp(y)`` is the softmax.  Its own
    backward (for ``create_graph=True``), with ``p = exp(y)``:
    d/dgrad = ``gg - (gg * p).sum(dim)``;  d/dy = ``-gg * p * grad.sum(dim)``.
    """

    _backward_name = "LogSoftmaxBackwardDataBackward0"

    @staticmethod
    def forward(ctx, grad, y, dim):
        ctx.save_for_backward(grad, y)
        ctx.dim = dim
        g = grad._data
        dx = np.exp(y._data)
        dx *= g.sum(axis=dim, keepdims=True)
        return np.subtract(g, dx, out=dx)

    @staticmethod
    def backward(ctx, gg):
        grad, y = ctx.saved_tensors
        p, dim = y.exp(), ctx.dim
        g_grad = gg - (gg * p).sum(dim, keepdim=True) if ctx.needs_input_grad[0] else None
        g_y = -gg * p * grad.sum(dim, keepdim=True) if ctx.needs_input_grad[1] else None
        return g_grad, g_y, None
