"""The error function and its inverse (PyTorch's ``torch.special.erf``/``erfinv``).

d erf(x) = 2/sqrt(pi) exp(-x²),   d erfinv(y) = sqrt(pi)/2 exp(erfinv(y)²).

NumPy has no ``erf``; Python's ``math.erf`` is accurate to float64, so it is
applied element-wise.  ``erfinv`` starts from Giles' single-precision
approximation and is polished by Newton steps on ``erf(x) - y`` until float64
precision.  Near ``|y| = 1`` (where ``erf(x) - y`` cancels) the steps solve
``log erfc(x) = log(1 - |y|)`` instead, which is almost quadratic in ``x``.
"""
import math

import numpy as np

from ..function import Function
from .tangents import auto_element_wise
from .unary import _float_input, _output

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_erf = np.frompyfunc(math.erf, 1, 1)  # math.erf as a ufunc: element-wise, on any array that takes ufuncs
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def erf_array(x):
    """``erf`` of a float array, in its dtype (the one ``erf`` of the engine: GELU uses it too)."""
    out = _erf(x)
    return (np.asarray(out) if isinstance(out, float) else out).astype(x.dtype)  # 0-d input: a Python float


def _erfinv_guess(y):
    """M. Giles, "Approximating the erfinv function" (GPU Gems 2012): ~1e-7 relative."""
    w = -np.log((1.0 - y) * (1.0 + y))
    central = w < 5.0
    wc = w - 2.5
    pc = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        pc = c + pc * wc
    wt = np.sqrt(np.where(central, 5.0, w)) - 3.0
    pt = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        pt = c + pt * wt
    return np.where(central, pc, pt) * y


def erfinv_array(y):
    """``erfinv`` of a float array: +-inf at +-1, nan outside [-1, 1]."""
    y64 = y.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = np.abs(y64) < 1
        a = np.where(inside, np.abs(y64), 0.0)  # solve erf(x) = a >= 0, then restore the sign
        x = _erfinv_guess(a)
        tail = a > 0.5
        for _ in range(6):  # Newton: x -= f(x) / f'(x)
            slope = _TWO_OVER_SQRT_PI * np.exp(-x * x)  # erf'(x)
            erfc = _erfc(x)
            step = np.where(tail, (np.log(erfc) - np.log1p(-a)) / (-slope / erfc), (erf_array(x) - a) / slope)
            x = x - step
        x = np.where(inside, np.copysign(x, y64), np.where(np.abs(y64) == 1, np.sign(y64) * np.inf, np.nan))
    return x.astype(y.dtype)


class Erf(Function):
    _backward_name = "ErfBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return erf_array(_float_input(a))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * _TWO_OVER_SQRT_PI * (-a * a).exp()

    jvp = auto_element_wise  # (tangents.py: backward with the tangent as the gradient)


class Erfinv(Function):
    _backward_name = "ErfinvBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)  # as PyTorch: the input (its formula takes erfinv again), not the result
        return _output(erfinv_array(_float_input(a)))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        out = a.erfinv()
        return grad * (math.sqrt(math.pi) / 2) * (out * out).exp()

    jvp = auto_element_wise
