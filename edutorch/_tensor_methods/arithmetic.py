"""Arithmetic: ``x + y``, ``x * 2``, ``x.pow(3)``, ``x.lerp(y, w)``...

Each operator is a one-liner calling the op's ``Function`` in
``autograd/_functions/pointwise.py`` (and ``binary.py``), where the forward and
its gradient live side by side.  The in-place forms (``add_``...) are in ``inplace.py``.
"""

import numpy as np

from .. import _dtype
from ..autograd._functions import binary, pointwise, unary, utils


def _scalar_dtype(t, scalar):
    """The dtype a Python number takes next to ``t`` (PyTorch's promotion)."""
    return _dtype.result_type(t, scalar).np


def check_alpha(t, other, alpha):
    """PyTorch's checks of ``add``/``sub``'s ``alpha`` (a Python number, read as a C++ ``Scalar``).

    A Python int beyond 64 bits is an ``OverflowError``; an op on integers needs an
    integer ``alpha``; ``alpha`` must fit the result's dtype (``2**63`` does not fit int64,
    ``1e40`` not float32: ``utils.checked_scalar``)."""
    dt = _dtype.result_type(t, other).np
    if isinstance(alpha, float) and not _dtype.is_floating(dt):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    utils.checked_scalar(alpha, dt)



def _rounded_division(a, b, mode):
    """``a // b`` and ``floor_divide``: ``div(..., rounding_mode='floor')`` without a graph (PyTorch's
    ``floor_divide`` is not differentiable)."""
    return utils._Tensor._make(pointwise.rounded_quotient(a, b, mode))


class ArithmeticMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    def __add__(self, other):
        return pointwise.Add.apply(self, other)

    __radd__ = __add__

    def __sub__(self, other):
        return pointwise.Sub.apply(self, other)

    def __rsub__(self, other):
        return pointwise.RSub.apply(self, other)

    def __mul__(self, other):
        return pointwise.Mul.apply(self, other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        return pointwise.Div.apply(self, other)

    def __rtruediv__(self, other):
        # PyTorch computes ``2 / x`` as ``reciprocal(x) * 2`` (a MulBackward0 node)
        return pointwise.Mul.apply(unary.Reciprocal.apply(self), other)

    def __neg__(self):
        return pointwise.Neg.apply(self)

    def __pow__(self, exponent):
        return self.pow(exponent)

    def __rpow__(self, base):
        return pointwise.RPow.apply(self, base)

    def __mod__(self, other):
        return self.remainder(other)

    def __rmod__(self, other):
        return pointwise.Remainder.apply(utils._Tensor._make(np.asarray(other, dtype=_scalar_dtype(self, other))), self)

    def __floordiv__(self, other):
        return self.div(other, rounding_mode="floor")

    def __rfloordiv__(self, other):
        return utils._Tensor._make(np.asarray(other, dtype=_scalar_dtype(self, other))).div(self, rounding_mode="floor")

    def remainder(self, other):
        fn = pointwise.Remainder if isinstance(other, utils._Tensor) else pointwise.RemainderScalar
        return fn.apply(self, other)

    def __abs__(self):
        return self.abs()

    def add(self, other, *, alpha=1):
        if alpha != 1:
            check_alpha(self, other, alpha)
        return pointwise.Add.apply(self, other, alpha)

    def sub(self, other, *, alpha=1):
        if alpha != 1:
            check_alpha(self, other, utils.negated_alpha(alpha))
        return pointwise.Sub.apply(self, other, alpha)

    def mul(self, other):
        return pointwise.Mul.apply(self, other)

    def div(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return pointwise.Div.apply(self, other)
        return pointwise.DivRounded.apply(self, other, rounding_mode)

    def neg(self):
        return pointwise.Neg.apply(self)

    def pow(self, exponent):
        if isinstance(exponent, utils._Tensor):
            return pointwise.PowTensor.apply(self, exponent)
        if type(exponent) is int and self._data.dtype.kind in "iu":  # PyTorch reads it as an int64
            utils.checked_scalar(exponent, np.dtype(np.int64))
        if isinstance(exponent, int) and exponent < 0 and self._data.dtype.kind in "iub":
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return pointwise.Pow.apply(self, exponent)

    multiply, divide, subtract, negative = mul, div, sub, neg

    def lerp(self, end, weight):
        fn = pointwise.LerpTensor if isinstance(weight, utils._Tensor) else pointwise.Lerp
        return fn.apply(self, end, weight)

    def addcmul(self, tensor1, tensor2, *, value=1):
        return pointwise.Addcmul.apply(self, tensor1, tensor2, value)

    def addcdiv(self, tensor1, tensor2, *, value=1):
        return pointwise.Addcdiv.apply(self, tensor1, tensor2, value)

    def atan2(self, other):
        return binary.Atan2.apply(self, other)

    arctan2 = atan2

    def hypot(self, other):
        return binary.Hypot.apply(self, other)

    def fmod(self, other):
        return binary.Fmod.apply(self, other)

    def logaddexp(self, other):
        """``log(exp(x) + exp(y))`` without overflow (its gradient: sigmoid(x - y), sigmoid(y - x))."""
        return binary.Logaddexp.apply(self, other)

    def logaddexp2(self, other):
        """``log2(2**x + 2**y)``."""
        return binary.Logaddexp2.apply(self, other)

    def xlogy(self, other):
        """``x * log(y)``, 0 where ``x == 0`` (even for ``y == 0``)."""
        return binary.Xlogy.apply(self, other)

    def true_divide(self, other):
        return self.div(other)
