"""Activation functions not already in the engine (ReLU, sigmoid and tanh are).

Each backward returns ``grad * f'(x)``.  Where ``f'`` is piecewise constant
(LeakyReLU's 1 or slope) it is a constant mask; otherwise it is written with
Tensor ops (``exp``, ``sigmoid``, ``tanh``...) so that ``create_graph=True``
can differentiate it again.  GELU's derivative needs the error function,
computed by ``special.erf_array`` (the one ``erf`` of the engine): the derivative
is its own small Function (``GeluGrad``).
"""
import math

import numpy as np

from ... import _dtype
from ...autograd.function import Function
from ...autograd._saved_attrs import Saved
from .utils import constant, floating_only
from ...autograd._functions.fused import threshold_backward
from ...autograd._functions.tangents import auto_element_wise
from ...autograd._functions.special import erf_array
from ...autograd._functions.utils import in_dtype_of, refuse_bool


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
        x = floating_only(input, "leaky_relu_cpu")
        ctx.save_for_backward(input)
        ctx.slope = negative_slope
        return np.where(x > 0, x, x * x.dtype.type(negative_slope))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        return _leaky_relu_grad(grad, input, ctx.slope), None

    jvp = auto_element_wise  # (autograd/_functions/tangents.py: backward on the tangent)


class LeakyReluInplace(Function):
    """``leaky_relu_`` (``inplace=True``): the input is overwritten, so backward reads the
    *result* (PyTorch's ``LeakyReluBackward1``): with a slope >= 0 it is positive where x is."""

    _backward_name = "LeakyReluBackward1"
    _profiler_name = "aten::leaky_relu_"  # its torch.profiler event (not derived from the node name)
    _saved_attrs = {"negative_slope": lambda ctx: ctx.slope, "result": Saved(0)}

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

    jvp = auto_element_wise


class Elu(Function):
    """``scale * (x if x > 0 else alpha * (exp(input_scale * x) - 1))``: PyTorch's ``elu``,
    which is also ``F.selu`` (its two constants) and, as :class:`Celu`, ``F.celu``."""

    _backward_name = "EluBackward0"
    _saved_attrs = {"alpha": lambda ctx: ctx.alpha, "input_scale": lambda ctx: ctx.input_scale,
                    "scale": lambda ctx: ctx.scale, "self": Saved(0)}

    @staticmethod
    def forward(ctx, input, alpha, scale=1, input_scale=1):
        x = floating_only(input, "elu_cpu")
        ctx.save_for_backward(input)
        ctx.alpha, ctx.scale, ctx.input_scale = alpha, scale, input_scale
        negative = alpha * np.expm1(np.minimum(x, 0) * input_scale)
        return (scale * np.where(x > 0, x, negative)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        # f'(x) = scale for x > 0, scale * alpha * input_scale * exp(input_scale * x) otherwise
        (input,) = ctx.saved_tensors
        negative = constant(input._data <= 0)  # PyTorch's test: a NaN counts as positive
        pos = 1 - negative.to(input.dtype)
        neg_part = (input.masked_fill(~negative, 0) * ctx.input_scale).exp() * (
            ctx.alpha * ctx.scale * ctx.input_scale)
        return grad * (pos * ctx.scale + (1 - pos) * neg_part), None, None, None

    jvp = auto_element_wise


def _as_celu(elu_forward, ctx, input, alpha):
    """Run an elu ``forward`` as celu's: ``input_scale = 1 / alpha``.  The derivative reads it as
    PyTorch's formula does, ``1.0 / alpha.toFloat()`` (alpha rounded to float32 first), while the
    forward divides in double precision."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    out = elu_forward(ctx, input, alpha, 1, 1.0 / alpha)
    ctx.input_scale = 1.0 / float(np.float32(alpha))
    return out


class Celu(Elu):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``: ``elu`` with ``input_scale = 1 / alpha``."""

    _backward_name = "CeluBackward0"
    _saved_attrs = {"alpha": lambda ctx: ctx.alpha, "self": Saved(0)}

    @staticmethod
    def forward(ctx, input, alpha):
        return _as_celu(Elu.forward, ctx, input, alpha)


class EluInplace(Function):
    """``elu_`` (also ``selu_``): the input is overwritten, so backward reads the *result*
    (PyTorch's ``EluBackward1``): f' = scale where the result is positive,
    ``input_scale * (result + scale * alpha)`` elsewhere."""

    _backward_name = "EluBackward1"
    _profiler_name = "aten::elu_"  # its torch.profiler event (not derived from the node name)
    _saved_attrs = {"alpha": lambda ctx: ctx.alpha, "input_scale": lambda ctx: ctx.input_scale,
                    "result": Saved(0), "scale": lambda ctx: ctx.scale}

    @staticmethod
    def forward(ctx, input, alpha, scale=1, input_scale=1):
        out = constant(Elu.forward(ctx, input, alpha, scale, input_scale))
        ctx.save_for_backward(out)  # the result, in place of the input saved above
        return out

    @staticmethod
    def backward(ctx, grad):
        if ctx.alpha < 0:
            raise RuntimeError(
                "In-place elu backward calculation is triggered with a negative slope which is not supported. "
                "This is caused by calling in-place forward function with a negative slope, please call "
                "out-of-place version instead.")
        (result,) = ctx.saved_tensors
        positive = constant(result._data > 0).to(result.dtype)
        negative = (result + ctx.scale * ctx.alpha) * ctx.input_scale
        return grad * (positive * ctx.scale + (1 - positive) * negative), None, None, None

    jvp = auto_element_wise


class CeluInplace(EluInplace):
    """``celu_``: backward reads the result (PyTorch's ``CeluBackward1``)."""

    _backward_name = "CeluBackward1"
    _saved_attrs = {"alpha": lambda ctx: ctx.alpha, "result": Saved(0)}

    @staticmethod
    def forward(ctx, input, alpha):
        return _as_celu(EluInplace.forward, ctx, input, alpha)


class Hardtanh(Function):
    """``clamp(x, min_val, max_val)``; the gradient passes strictly inside (a NaN passes it too)."""

    _backward_name = "HardtanhBackward0"
    _saved_attrs = {"max_val": lambda ctx: ctx.max_val, "min_val": lambda ctx: ctx.min_val, "self": Saved(0)}

    @staticmethod
    def forward(ctx, input, min_val, max_val):
        x = input._data
        if x.dtype.kind == "b":
            raise RuntimeError("Bool inputs not supported for hardtanh")
        ctx.save_for_backward(input)
        ctx.min_val, ctx.max_val = min_val, max_val
        return np.clip(x, min_val, max_val).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        # PyTorch's hardtanh_backward: 0 where x <= min_val or x >= max_val, grad elsewhere
        (input,) = ctx.saved_tensors
        x = input._data
        return grad.masked_fill(constant((x <= ctx.min_val) | (x >= ctx.max_val)), 0), None, None

    jvp = auto_element_wise


class Hardsigmoid(Function):
    """``relu6(x + 3) / 6``; the gradient ``1/6`` strictly inside (-3, 3)."""

    _backward_name = "HardsigmoidBackward0"
    _saved_attrs = {"self": Saved(0)}

    @staticmethod
    def forward(ctx, input):
        x = floating_only(input, "hardsigmoid_cpu")
        ctx.save_for_backward(input)
        return (np.clip(x + 3, 0, 6) / 6).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        x = input._data
        # PyTorch's kernel multiplies by the float32 constant ``1.0f / 6.0f`` whatever the dtype
        one_sixth = float(np.float32(1 / 6))
        return grad.masked_fill(constant(~((x > -3) & (x < 3))), 0) * one_sixth  # a NaN gets 0

    jvp = auto_element_wise


class Hardswish(Function):
    """``x * relu6(x + 3) / 6`` (MobileNetV3)."""

    _backward_name = "HardswishBackward0"
    _saved_attrs = {"self": Saved(0)}

    @staticmethod
    def forward(ctx, input):
        x = floating_only(input, "hardswish_cpu")
        ctx.save_for_backward(input)
        return (x * np.clip(x + 3, 0, 6) / 6).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        # PyTorch's hardswish_backward: 0 for x <= -3, x / 3 + 1/2 for -3 < x < 3, 1 elsewhere (NaN too)
        (input,) = ctx.saved_tensors
        x = input._data
        below, middle = constant(x <= -3), constant((x > -3) & (x < 3))
        slope = (input / 3 + 0.5).masked_fill(~middle, 1).masked_fill(below, 0)
        return grad * slope

    jvp = auto_element_wise


class Mish(Function):
    """``x * tanh(softplus(x))``."""

    _backward_name = "MishBackward0"
    _saved_attrs = {"self": Saved(0)}

    @staticmethod
    def forward(ctx, input):
        x = floating_only(input, "mish_cpu")
        ctx.save_for_backward(input)
        return (x * np.tanh(np.logaddexp(0, x))).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        # d/dx [x t] with t = tanh(softplus(x)): t + x * sigmoid(x) * (1 - t²)
        (x,) = ctx.saved_tensors
        t = Softplus.apply(x, 1, 20).tanh()
        return grad * (t + x * x.sigmoid() * (1 - t * t))

    jvp = auto_element_wise


class Threshold(Function):
    """``value`` where ``x <= threshold``, ``x`` elsewhere (a NaN stays NaN)."""

    _backward_name = "ThresholdBackward0"
    _saved_attrs = {"self": Saved(0), "threshold": lambda ctx: ctx.threshold}

    @staticmethod
    def forward(ctx, input, threshold, value):
        x = input._data
        refuse_bool(x, "threshold_cpu")
        ctx.save_for_backward(input)
        ctx.threshold = threshold
        return np.where(x <= threshold, value, x).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        return threshold_backward(grad, input, ctx.threshold), None, None

    jvp = auto_element_wise


class ThresholdInplace(Threshold):
    """``threshold_``: PyTorch names its node ``ThresholdBackward1``; like ``ThresholdBackward0``
    it keeps the input (``_inplace`` hands it a copy of the old values, as PyTorch clones it)."""

    _backward_name = "ThresholdBackward1"
    _saved_attrs = Threshold._saved_attrs
    skips_overlap_check = True  # PyTorch's threshold_ writes into an expand() too


class RreluWithNoise(Function):
    """``rrelu``: ``x`` where positive; elsewhere ``x`` times a slope, drawn uniformly from
    [lower, upper] for each element in training (the "noise", saved for backward), and
    ``(lower + upper) / 2`` in eval (then it is a leaky ReLU)."""

    _backward_name = "RreluWithNoiseBackward0"
    _saved_attrs = {"lower": lambda ctx: ctx.lower, "noise": Saved(1), "self": Saved(0),
                    "training": lambda ctx: ctx.training, "upper": lambda ctx: ctx.upper}

    @staticmethod
    def forward(ctx, input, lower, upper, training):
        out, noise = _rrelu(ctx, input, lower, upper, training)
        ctx.save_for_backward(input, noise)
        return out

    @staticmethod
    def backward(ctx, grad):
        input, noise = ctx.saved_tensors
        return _rrelu_grad(ctx, grad, input, noise), None, None, None

    jvp = auto_element_wise


def _rrelu(ctx, input, lower, upper, training):
    """The result array and the per-element slopes (1 where ``x > 0``) as a constant tensor."""
    from ... import random

    x = floating_only(input, "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu")
    ctx.lower, ctx.upper, ctx.training = lower, upper, training
    if training:  # drawn on the host by the one generator, as dropout's mask
        slopes = random._rng(None).uniform(lower, upper, x.shape)
    else:
        slopes = (lower + upper) / 2
    noise = np.where(x > 0, 1, slopes).astype(x.dtype)
    return x * noise, constant(noise)


def _rrelu_grad(ctx, grad, t, noise):
    """PyTorch's rrelu_with_noise_backward: the drawn slopes in training, else leaky ReLU's
    gradient at ``t`` (the input, or the result, which has the input's sign)."""
    if ctx.training and ctx.upper - ctx.lower > 1e-6:
        return grad * noise
    return _leaky_relu_grad(grad, t, (ctx.lower + ctx.upper) / 2)


class RreluWithNoiseInplace(Function):
    """``rrelu_``: backward reads the *result* and the noise (PyTorch's ``RreluWithNoiseBackward1``)."""

    _backward_name = "RreluWithNoiseBackward1"
    _saved_attrs = {"lower": lambda ctx: ctx.lower, "noise": Saved(1), "result": Saved(0),
                    "training": lambda ctx: ctx.training, "upper": lambda ctx: ctx.upper}

    @staticmethod
    def forward(ctx, input, lower, upper, training):
        out, noise = _rrelu(ctx, input, lower, upper, training)
        out = constant(out)
        ctx.save_for_backward(out, noise)
        return out

    @staticmethod
    def backward(ctx, grad):
        result, noise = ctx.saved_tensors
        return _rrelu_grad(ctx, grad, result, noise), None, None, None

    @staticmethod
    def jvp(ctx, *tangents):
        """Refused: PyTorch has no forward formula for ``rrelu_with_noise_`` (its words)."""
        raise NotImplementedError(
            "Trying to use forward AD with rrelu_with_noise_ that does not support it because it has not been "
            "implemented yet.\nPlease file an issue to PyTorch at "
            "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
            "prioritize its implementation.")


class Gelu(Function):
    """``x * Phi(x)`` (Phi = standard normal CDF), or its tanh approximation."""

    _backward_name = "GeluBackward0"
    _saved_attrs = {"approximate": lambda ctx: ctx.approximate, "self": Saved(0)}

    @staticmethod
    def forward(ctx, input, approximate):
        x = floating_only(input, "GeluKernelImpl")
        ctx.save_for_backward(input)
        ctx.approximate = approximate
        if approximate == "tanh":
            inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
            return in_dtype_of(0.5 * x * (1 + np.tanh(inner)), x)
        return in_dtype_of(0.5 * x * (1 + erf_array(x / math.sqrt(2))), x)  # bfloat16 * 0.5 is float32 in NumPy

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if ctx.approximate == "tanh":
            k = math.sqrt(2 / math.pi)
            t = (k * (x + 0.044715 * x ** 3)).tanh()
            d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
            return grad * d, None
        return grad * GeluGrad.apply(x), None

    jvp = auto_element_wise


class GeluGrad(Function):
    """``Phi(x) + x * phi(x)``, the derivative of exact GELU; its own derivative is ``phi(x) (2 - x**2)``."""

    _backward_name = "GeluBackwardBackward0"

    @staticmethod
    def forward(ctx, input):
        x = input._data
        ctx.save_for_backward(input)
        cdf = 0.5 * (1 + erf_array(x / math.sqrt(2)))
        return (cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        x = input
        pdf = (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
        return grad * pdf * (2 - x * x)

    jvp = auto_element_wise


class Silu(Function):
    """``x * sigmoid(x)`` (a.k.a. swish)."""

    _backward_name = "SiluBackward0"
    _saved_attrs = {"self": Saved(0)}

    @staticmethod
    def forward(ctx, input):
        x = floating_only(input, "silu_cpu")
        ctx.save_for_backward(input)
        return x * _sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        # d/dx [x s(x)] = s + x s (1 - s) = s (1 + x (1 - s))
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return grad * (s * (1 + x * (1 - s)))

    jvp = auto_element_wise


def _sigmoid(x):
    return np.exp(-np.logaddexp(0, -x)).astype(x.dtype, copy=False)


class Softplus(Function):
    """``log(1 + exp(beta * x)) / beta``; linear (``x``) where ``beta * x > threshold``."""

    _backward_name = "SoftplusBackward0"
    _autocast_op = "softplus"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"beta": lambda ctx: ctx.beta, "self": Saved(0), "threshold": lambda ctx: ctx.threshold}

    @staticmethod
    def forward(ctx, input, beta, threshold):
        x = floating_only(input, "softplus_cpu")
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

    jvp = auto_element_wise


class LogSigmoid(Function):
    """``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))``, which never overflows.

    PyTorch's node keeps the input and its kernel's ``buffer`` (``exp(-|x|)``);
    the derivative is ``sigmoid(-x)``, read from the input so that it can be
    differentiated again."""

    _backward_name = "LogSigmoidBackward0"
    _saved_attrs = {"buffer": Saved(1), "self": Saved(0)}

    @staticmethod
    def forward(ctx, input):
        x = floating_only(input, "log_sigmoid_cpu")
        buffer = np.exp(-np.abs(x))
        ctx.save_for_backward(input, constant(buffer))
        return (np.minimum(x, 0) - np.log1p(buffer)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        input, _ = ctx.saved_tensors
        return grad * (-input).sigmoid()

    jvp = auto_element_wise


def _check_lambd(x, lambd):
    """PyTorch's softshrink check: ``lambd`` between 0 and the dtype's largest value."""
    dtype = _dtype.from_numpy_dtype(x.dtype)
    largest = _dtype.finfo(dtype).max
    if not 0 <= lambd <= largest:
        name = _dtype.scalar_type_name(dtype)
        raise RuntimeError(f"lambda must be in range [0, {largest:g}] for input dtype {name}, but found {lambd:g}")


def _inside(x, lambd):
    """Where both shrinks give 0: ``-lambd <= x <= lambd`` (a NaN is not inside: it stays NaN)."""
    return (x >= -lambd) & (x <= lambd)


def _shrink_backward(ctx, grad):
    """Both shrinks: the gradient passes outside ``[-lambd, lambd]``."""
    (input,) = ctx.saved_tensors
    return grad.masked_fill(constant(_inside(input._data, ctx.lambd)), 0), None


class Softshrink(Function):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between."""

    _backward_name = "SoftshrinkBackward0"
    _saved_attrs = {"lambd": lambda ctx: ctx.lambd, "self": Saved(0)}

    @staticmethod
    def forward(ctx, input, lambd):
        x = floating_only(input, "softshrink_check")
        _check_lambd(x, lambd)
        ctx.save_for_backward(input)
        ctx.lambd = lambd
        shrunk = np.where(_inside(x, lambd), 0, np.where(x > lambd, x - lambd, x + lambd))
        return shrunk.astype(x.dtype, copy=False)

    backward = staticmethod(_shrink_backward)
    jvp = auto_element_wise


class Hardshrink(Function):
    """``x`` where ``|x| > lambd``, else 0."""

    _backward_name = "HardshrinkBackward0"
    _saved_attrs = {"lambd": lambda ctx: ctx.lambd, "self": Saved(0)}

    @staticmethod
    def forward(ctx, input, lambd):
        x = floating_only(input, "hardshrink_cpu")
        ctx.save_for_backward(input)
        ctx.lambd = lambd
        return np.where(_inside(x, lambd), 0, x).astype(x.dtype, copy=False)

    backward = staticmethod(_shrink_backward)
    jvp = auto_element_wise


class Prelu(Function):
    """``prelu(x, w)``: ``x`` where positive, ``w * x`` elsewhere, ``w`` broadcast over the input
    (one slope, or one per channel, shaped by ``F.prelu``).

    d/dx = 1 or ``w``; d/dw = ``x`` where ``x <= 0``, summed to ``w``'s shape.  As PyTorch's
    ``PreluKernelBackward0``, the node keeps the input and the weight."""

    _backward_name = "PreluKernelBackward0"
    _saved_attrs = {"self": Saved(0), "weight": Saved(1)}

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        a = x._data
        return np.where(a > 0, a, w._data * a)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        positive = x > 0
        gx = grad * w.expand(x.shape).masked_fill(positive, 1) if ctx.needs_input_grad[0] else None
        gw = (grad * x).masked_fill(positive, 0).sum_to_size(w.shape) if ctx.needs_input_grad[1] else None
        return gx, gw

    @staticmethod
    def jvp(ctx, dx, dw):
        x, w = ctx.primals
        positive = x > 0
        terms = [] if dx is None else [dx * w.expand(x.shape).masked_fill(positive, 1)]
        terms += [] if dw is None else [(dw * x).masked_fill(positive, 0)]
        return terms[0] if len(terms) == 1 else terms[0] + terms[1]
