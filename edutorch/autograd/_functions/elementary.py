"""Trigonometric, hyperbolic, logarithmic and exponential functions and their derivatives.

Each op is one line in the table below: its NumPy forward and its derivative,
written with Tensor ops of the input ``x`` and the output ``y``
(so ``create_graph=True`` differentiates them again)::

    tan:  1 + y²            asin:  1 / sqrt(1 - x²)      acos: -1 / sqrt(1 - x²)
    atan: 1 / (1 + x²)      sinh:  cosh x                cosh:  sinh x
    asinh: 1 / sqrt(x² + 1) acosh: 1 / sqrt(x² - 1)      atanh: 1 / (1 - x²)
    log2: 1 / (x ln 2)      log10: 1 / (x ln 10)         expm1: y + 1
    exp2: y ln 2            erfc: -2/sqrt(pi) exp(-x²)   deg2rad, rad2deg: constants
"""
import math

import numpy as np

from ..function import Function
from .._saved_attrs import Saved
from .special import _erfc
from .tangents import auto_element_wise
from .unary import _float_input, _output
from .utils import quiet_fp


def _elementwise(name, backward_name, forward, derivative, saved=None):
    """A ``Function`` computing ``forward`` element-wise, with ``grad * derivative(x, y)`` as backward.

    ``saved``: what PyTorch's node keeps and shows as ``grad_fn._saved_<saved>``
    (``"self"``, the input, or ``"result"``); ``None`` for none.
    """

    def forward_(ctx, a):
        with quiet_fp():  # outside the domain: nan or inf, silently, as in PyTorch
            out = _output(np.asarray(forward(_float_input(a))))
        # only what PyTorch saves: changing the input in place later breaks backward only where
        # PyTorch's does (expm1 reads its result, so x.expm1() then x.mul_(2) still differentiates)
        ctx.save_for_backward(*{"self": (a,), "result": (out,)}.get(saved, ()))
        return out

    def backward_(ctx, grad):
        if derivative is None:  # PyTorch has none for some in-place forms (asinh_, acosh_, atanh_)
            raise NotImplementedError(f"the derivative for 'inplace version of {name.lower()[:-7]}' is not "
                                      "implemented.")
        (kept,) = ctx.saved_tensors or (None,)
        return grad * (derivative(kept, None) if saved == "self" else derivative(None, kept))

    return type(name, (Function,), {
        "__doc__": f"``torch.{name.lower()}`` element-wise.", "_backward_name": backward_name,
        "forward": staticmethod(forward_), "backward": staticmethod(backward_),
        "_saved_attrs": {saved: Saved(0)} if saved else None,
        "jvp": auto_element_wise,  # tangent * derivative(x, y) (tangents.py: backward on the tangent)
    })


def _erfc_array(x):
    return _erfc(x).astype(x.dtype) if x.size else x.copy()


Tan = _elementwise("Tan", "TanBackward0", np.tan, lambda x, y: 1 + y * y, "result")
Asin = _elementwise("Asin", "AsinBackward0", np.arcsin, lambda x, y: (1 - x * x).rsqrt(), "self")
Acos = _elementwise("Acos", "AcosBackward0", np.arccos, lambda x, y: -(1 - x * x).rsqrt(), "self")
Atan = _elementwise("Atan", "AtanBackward0", np.arctan, lambda x, y: 1 / (1 + x * x), "self")
Sinh = _elementwise("Sinh", "SinhBackward0", np.sinh, lambda x, y: x.cosh(), "self")
Cosh = _elementwise("Cosh", "CoshBackward0", np.cosh, lambda x, y: x.sinh(), "self")
Asinh = _elementwise("Asinh", "AsinhBackward0", np.arcsinh, lambda x, y: (x * x + 1).rsqrt(), "self")
Acosh = _elementwise("Acosh", "AcoshBackward0", np.arccosh, lambda x, y: (x * x - 1).rsqrt(), "self")
Atanh = _elementwise("Atanh", "AtanhBackward0", np.arctanh, lambda x, y: 1 / (1 - x * x), "self")
Log2 = _elementwise("Log2", "Log2Backward0", np.log2, lambda x, y: 1 / (x * math.log(2)), "self")
Log10 = _elementwise("Log10", "Log10Backward0", np.log10, lambda x, y: 1 / (x * math.log(10)), "self")
Expm1 = _elementwise("Expm1", "Expm1Backward0", np.expm1, lambda x, y: y + 1, "result")
Exp2 = _elementwise("Exp2", "Exp2Backward0", np.exp2, lambda x, y: y * math.log(2), "result")
Erfc = _elementwise("Erfc", "ErfcBackward0", _erfc_array, lambda x, y: (-x * x).exp() * (-2 / math.sqrt(math.pi)), "self")
Deg2rad = _elementwise("Deg2rad", "Deg2RadBackward0", np.deg2rad, lambda x, y: math.pi / 180)
# the in-place forms PyTorch cannot differentiate (its nodes AsinhBackward1, ...): same values, a backward that refuses
AsinhInplace = _elementwise("AsinhInplace", "AsinhBackward1", np.arcsinh, None)
AcoshInplace = _elementwise("AcoshInplace", "AcoshBackward1", np.arccosh, None)
AtanhInplace = _elementwise("AtanhInplace", "AtanhBackward1", np.arctanh, None)
Rad2deg = _elementwise("Rad2deg", "Rad2DegBackward0", np.rad2deg, lambda x, y: 180 / math.pi)
