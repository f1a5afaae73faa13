"""Reductions and scans: ``sum``, ``mean``, ``var``, ``norm``, ``max``, ``argmax``, ``cumsum``, ``softmax``...

The differentiable ones call ``autograd/_functions/reduction.py`` (and
``softmax.py``); ``argmax``/``argmin``/``count_nonzero``/``bincount``/``histc``
give integer tensors outside the graph.
"""
import builtins

import numpy as np

from .. import _dtype
from .. import return_types
from ..autograd._functions import reduction, softmax, utils
from ..autograd._functions.utils import wrap_dim
from .._dtype import is_floating as _is_floating


def _var_args(dim, unbiased, keepdim, correction):
    """``var``/``std`` accept ``var(dim, unbiased, keepdim)`` and ``correction=``."""
    if isinstance(dim, builtins.bool):  # var(False): the old ``unbiased`` positional form
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased else 0
    return dim, correction, keepdim


def _arg_reduce(fn, name, t, dim, keepdim):
    """``argmax``/``argmin``: int64 positions; with no dim, into the flattened tensor."""
    x = t._data
    if x.size == 0 and (dim is None or x.shape[wrap_dim(dim, x.ndim)] == 0):  # nothing to pick from
        raise IndexError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            if dim is None else f"{name}(): Expected reduction dim {dim} to have non-zero size."
        )
    if dim is None:
        out = fn(x.reshape(-1))
        if keepdim:
            out = np.reshape(out, (1,) * x.ndim)
    else:
        out = fn(x, axis=wrap_dim(dim, x.ndim), keepdims=keepdim) if x.ndim else fn(x.reshape(1))
    return utils._Tensor._make(np.asarray(out).astype(np.int64))


def _scalar_name(x):
    return _dtype.scalar_type_name(_dtype.from_numpy_dtype(x.dtype))


class ReductionMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    def sum(self, dim=None, keepdim=False, *, dtype=None):
        if dim is None and not keepdim:  # x.sum(None, keepdim=True) keeps every dim, size 1
            return reduction.SumAll.apply(self, dtype)
        return reduction.Sum.apply(self, dim, keepdim, dtype)

    def mean(self, dim=None, keepdim=False, *, dtype=None):
        if dim is None and not keepdim:
            return reduction.MeanAll.apply(self, dtype)
        return reduction.Mean.apply(self, dim, keepdim, dtype)

    def prod(self, dim=None, keepdim=False, *, dtype=None):
        if dim is None:
            return reduction.ProdAll.apply(self, None, False, dtype)
        return reduction.Prod.apply(self, dim, keepdim, dtype)

    def var(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        return reduction.Var.apply(self, *_var_args(dim, unbiased, keepdim, correction))

    def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        return reduction.Std.apply(self, *_var_args(dim, unbiased, keepdim, correction))

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        if p == "fro" or p is None:
            if isinstance(dim, (tuple, list)) and len(dim) > 2:  # PyTorch sends these to matrix_norm
                raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got " + " ".join(map(str, dim)))
            p = 2
        return reduction.Norm.apply(self if dtype is None else self.to(dtype), p, dim, keepdim)

    def logsumexp(self, dim, keepdim=False):
        if dim is None:  # PyTorch's argument parser: dims, not None (sum and mean take None)
            raise TypeError("logsumexp(): argument 'dim' (position 1) must be tuple of ints, not NoneType")
        return reduction.LogSumExp.apply(self, dim, keepdim)

    def amax(self, dim=(), keepdim=False):
        return reduction.Amax.apply(self, dim, keepdim)

    def amin(self, dim=(), keepdim=False):
        return reduction.Amin.apply(self, dim, keepdim)

    def max(self, dim=None, keepdim=False):
        """``max()`` → value; ``max(dim)`` → (values, indices); ``max(other)`` → maximum."""
        if isinstance(dim, utils._Tensor):
            return self.maximum(dim)
        if dim is None:
            return reduction.MaxAll.apply(self)
        return return_types.max(*reduction.MaxDim.apply(self, dim, keepdim))

    def min(self, dim=None, keepdim=False):
        if isinstance(dim, utils._Tensor):
            return self.minimum(dim)
        if dim is None:
            return reduction.MinAll.apply(self)
        return return_types.min(*reduction.MinDim.apply(self, dim, keepdim))

    def argmax(self, dim=None, keepdim=False):
        return _arg_reduce(np.argmax, "argmax", self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return _arg_reduce(np.argmin, "argmin", self, dim, keepdim)

    def sum_to_size(self, *size):
        size = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
        if tuple(size) == self._data.shape and size:  # PyTorch's sum_to: a 0-d size is always a sum()
            return self
        return reduction.SumToSize.apply(self, tuple(size))

    def nansum(self, dim=None, keepdim=False, *, dtype=None):
        """``sum`` counting NaN as 0 (infinities stay)."""
        if not self.is_floating_point():  # no NaN to skip
            return self.sum(dim, keepdim, dtype=dtype)
        return reduction.Nansum.apply(self, dim, keepdim, dtype)

    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        """``mean`` over the non-NaN values."""
        count = (~self.isnan()).sum(dim, keepdim)
        return self.nansum(dim, keepdim, dtype=dtype) / count

    def softmax(self, dim, dtype=None):
        return softmax.Softmax.apply(self if dtype is None else self.to(dtype), dim)

    def log_softmax(self, dim, dtype=None):
        return softmax.LogSoftmax.apply(self if dtype is None else self.to(dtype), dim)

    def cumsum(self, dim, *, dtype=None):
        return reduction.Cumsum.apply(self, wrap_dim(dim, self._data.ndim), dtype)

    def cumprod(self, dim, *, dtype=None):
        return reduction.Cumprod.apply(self, wrap_dim(dim, self._data.ndim), dtype)

    def cummax(self, dim):
        """Running maximum along ``dim`` and where it was reached (a named tuple)."""
        return return_types.cummax(*reduction.Cummax.apply(self, dim))

    def cummin(self, dim):
        """Running minimum along ``dim`` and where it was reached (a named tuple)."""
        return return_types.cummin(*reduction.Cummin.apply(self, dim))

    def count_nonzero(self, dim=None):
        counted = self._data != 0
        return utils._Tensor._make(np.asarray(counted.sum(axis=reduction.normalize_dims(dim, self.ndim)), dtype=np.int64))

    def bincount(self, weights=None, minlength=0):
        """How often each non-negative integer occurs (or the sum of its ``weights``)."""
        x = self._data
        if x.dtype.kind not in "iu":
            raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_scalar_name(x)}'")
        if x.ndim != 1 or (x.size and x.min() < 0):
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        if weights is None:
            return utils._Tensor._make(np.bincount(x, minlength=minlength).astype(np.int64))
        w = weights._data
        dtype = w.dtype if _is_floating(w.dtype) else np.float64
        return utils._Tensor._make(np.bincount(x, weights=w, minlength=minlength).astype(dtype))

    def histc(self, bins=100, min=0, max=0):
        """A histogram of ``bins`` equal bins over [min, max] (the data's range when both are 0)."""
        x = self._data
        if not _is_floating(x.dtype):
            raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_scalar_name(x)}'")
        lo, hi = float(min), float(max)
        if lo == hi and x.size:
            lo, hi = float(x.min()), float(x.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        counts, _ = np.histogram(x[(x >= lo) & (x <= hi)], bins=bins, range=(lo, hi))
        return utils._Tensor._make(counts.astype(x.dtype))
