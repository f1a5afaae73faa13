"""Comparisons, logic and clamping: ``x == y``, ``x & y``, ``isnan``, ``all``, ``clamp``, ``maximum``, ``where``.

Comparisons and logic give bool tensors and are never part of the graph;
``clamp``, ``maximum``, ``minimum`` and ``where`` are differentiable
(``autograd/_functions/comparison.py``).
"""
import builtins

import numpy as np

from .. import backend
from ..autograd._functions import comparison, utils
from ..autograd._functions.reduction import normalize_dims
from .._dtype import is_floating as _is_floating


def _check_other_is_tensor(name, other):
    """``t.maximum(2)``: PyTorch takes only a Tensor here (``clamp`` takes numbers)."""
    if not isinstance(other, utils._Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")


def _compare(ufunc, a, b):
    """``a == b`` and friends: compared after PyTorch's type promotion; a bool tensor."""
    if not isinstance(b, (utils._Tensor, builtins.int, builtins.float, builtins.bool)):
        return NotImplemented
    x, y = utils.binary_arrays(a, b)
    return utils._Tensor._make(ufunc(x, y))


def _bitwise(ufunc, name, a, b):
    """``&``, ``|``, ``^``: logical on bool tensors, bitwise on integers."""
    x, y = utils.binary_arrays(a, b)
    if getattr(x, "dtype", np.dtype(type(x))).kind == "f" or getattr(y, "dtype", np.dtype(type(y))).kind == "f":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'Float\'')
    return utils._Tensor._make(ufunc(x, y))


def _logical_reduce(fn, t, dim, keepdim):
    """``all``/``any``: reduce to a bool tensor (no graph); ``dim=()`` reduces nothing, as in PyTorch."""
    x = t._data
    axis = None if dim is None else () if dim == () or dim == [] else normalize_dims(dim, x.ndim)
    return utils._Tensor._make(np.asarray(fn(x, axis=axis, keepdims=keepdim)))


class ComparisonMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    def clamp(self, min=None, max=None):
        if isinstance(min, utils._Tensor) or isinstance(max, utils._Tensor):
            return comparison.ClampTensor.apply(self, min, max)
        return comparison.Clamp.apply(self, min, max)

    clip = clamp

    def clamp_min(self, min):
        return comparison.ClampMin.apply(self, min, None)

    def clamp_max(self, max):
        return comparison.ClampMax.apply(self, None, max)

    def maximum(self, other):
        _check_other_is_tensor("maximum", other)
        return comparison.Maximum.apply(self, other)

    def minimum(self, other):
        _check_other_is_tensor("minimum", other)
        return comparison.Minimum.apply(self, other)

    def where(self, condition, other):
        return comparison.Where.apply(condition, self, other)

    def __eq__(self, other):
        return _compare(np.equal, self, other)

    def __ne__(self, other):
        return _compare(np.not_equal, self, other)

    def __lt__(self, other):
        return _compare(np.less, self, other)

    def __le__(self, other):
        return _compare(np.less_equal, self, other)

    def __gt__(self, other):
        return _compare(np.greater, self, other)

    def __ge__(self, other):
        return _compare(np.greater_equal, self, other)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne

    def __and__(self, other):
        return _bitwise(np.bitwise_and, "bitwise_and", self, other)

    def __or__(self, other):
        return _bitwise(np.bitwise_or, "bitwise_or", self, other)

    def __xor__(self, other):
        return _bitwise(np.bitwise_xor, "bitwise_xor", self, other)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    bitwise_and, bitwise_or, bitwise_xor = __and__, __or__, __xor__

    def __invert__(self):
        if _is_floating(self._data.dtype):
            raise TypeError("ufunc 'invert' not supported for the input types") from None
        return utils._Tensor._make(np.invert(self._data))

    bitwise_not = __invert__

    def logical_and(self, other):
        return _compare(np.logical_and, self, other)

    def logical_or(self, other):
        return _compare(np.logical_or, self, other)

    def logical_xor(self, other):
        return _compare(np.logical_xor, self, other)

    def logical_not(self):
        return utils._Tensor._make(np.logical_not(self._data))

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        x, y = utils.binary_arrays(self, other)
        xp = backend.get_array_module(x)
        return utils._Tensor._make(xp.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(self.isclose(other, rtol, atol, equal_nan)._data.all())

    def equal(self, other):
        return self._data.shape == other._data.shape and bool((self._data == other._data).all())

    def isnan(self):
        return utils._Tensor._make(np.isnan(self._data))

    def isinf(self):
        return utils._Tensor._make(np.isinf(self._data))

    def isfinite(self):
        return utils._Tensor._make(np.isfinite(self._data))

    def all(self, dim=None, keepdim=False):
        return _logical_reduce(np.all, self, dim, keepdim)

    def any(self, dim=None, keepdim=False):
        return _logical_reduce(np.any, self, dim, keepdim)

    def isin(self, test_elements, *, assume_unique=False, invert=False):
        from .._functional_api import isin

        return isin(self, test_elements, assume_unique=assume_unique, invert=invert)
