"""Element-wise functions of one tensor: ``exp``, ``log``, ``sin``, ``sigmoid``, ``erf``...

One-liners over the ``Function`` of each op (``autograd/_functions/unary.py``,
``pointwise.py``, ``elementary.py``, ``special.py``).
"""
from .. import _dtype
from ..autograd._functions import elementary, pointwise, special, unary, utils
from .._dtype import is_floating as _is_floating


def _float(t):
    """Integer tensors enter float-only math (exp, log, 1/x...) as the default float dtype."""
    if _is_floating(t._data.dtype):
        return t
    return utils._Tensor._make(t._data.astype(_dtype.get_default_dtype().np))


class UnaryMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    def exp(self):
        return pointwise.Exp.apply(self if _is_floating(self._data.dtype) else _float(self))

    def log(self):
        return pointwise.Log.apply(self if _is_floating(self._data.dtype) else _float(self))

    def log1p(self):
        return unary.Log1p.apply(self)

    def sqrt(self):
        return unary.Sqrt.apply(self)

    def rsqrt(self):
        return unary.Rsqrt.apply(self)

    def abs(self):
        return unary.Abs.apply(self)

    def sign(self):
        return unary.Sign.apply(self)

    def sin(self):
        return unary.Sin.apply(self)

    def cos(self):
        return unary.Cos.apply(self)

    def tanh(self):
        return pointwise.Tanh.apply(self if _is_floating(self._data.dtype) else _float(self))

    def sigmoid(self):
        return pointwise.Sigmoid.apply(self if _is_floating(self._data.dtype) else _float(self))

    def relu(self):
        return pointwise.Relu.apply(self)

    def reciprocal(self):
        return unary.Reciprocal.apply(self)

    def round(self, *, decimals=0):
        if decimals:
            return (self * 10.0 ** decimals).round() / 10.0 ** decimals
        return self if not _is_floating(self._data.dtype) else unary.Round.apply(self)

    def floor(self):
        return self if not _is_floating(self._data.dtype) else unary.Floor.apply(self)

    def ceil(self):
        return self if not _is_floating(self._data.dtype) else unary.Ceil.apply(self)

    def trunc(self):
        return self if not _is_floating(self._data.dtype) else unary.Trunc.apply(self)

    def square(self):
        """``x ** 2`` (PyTorch's ``square`` is ``pow(x, 2)``: ``PowBackward0``; a bool tensor gives int64)."""
        return self.pow(2)

    def tan(self):
        return elementary.Tan.apply(self)

    def asin(self):
        return elementary.Asin.apply(self)

    def acos(self):
        return elementary.Acos.apply(self)

    def atan(self):
        return elementary.Atan.apply(self)

    def sinh(self):
        return elementary.Sinh.apply(self)

    def cosh(self):
        return elementary.Cosh.apply(self)

    def asinh(self):
        return elementary.Asinh.apply(self)

    def acosh(self):
        return elementary.Acosh.apply(self)

    def atanh(self):
        return elementary.Atanh.apply(self)

    arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh

    def log2(self):
        return elementary.Log2.apply(self)

    def log10(self):
        return elementary.Log10.apply(self)

    def expm1(self):
        return elementary.Expm1.apply(self)

    def exp2(self):
        return elementary.Exp2.apply(self)

    def erfc(self):
        return elementary.Erfc.apply(self)

    def deg2rad(self):
        return elementary.Deg2rad.apply(self)

    def rad2deg(self):
        return elementary.Rad2deg.apply(self)

    def erf(self):
        return special.Erf.apply(self)

    def erfinv(self):
        return special.Erfinv.apply(self)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return unary.NanToNum.apply(self, nan, posinf, neginf)
