"""More ``torch.<op>`` functions: the top-level forms of Tensor methods (``_tensor_methods/``),
stacking helpers, searching sorted sequences.

As in ``_functional.py``, each calls the Tensor method of the same name, so every
op has one definition.
"""
import math

import numpy as np

from ._tensor import Tensor
from ._functional import cat, stack  # noqa: F401  (the stacking helpers below build on them)
from . import _dtype

__all__ = [
    "argwhere", "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_to", "cartesian_prod",
    "diag_embed", "diff", "dsplit", "fliplr", "flipud", "hsplit", "isin", "logaddexp", "logaddexp2", "logspace",
    "nanmean", "nansum", "select", "kthvalue", "cummax", "cummin", "take", "std_mean", "tensor_split", "tril_indices", "triu_indices", "true_divide", "var_mean",
    "vsplit", "xlogy",
    "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "asin", "asinh", "atan",
    "atanh", "cosh", "deg2rad", "e", "erfc", "exp2", "expm1", "inf", "log10", "log2", "nan", "newaxis", "pi",
    "rad2deg", "sinh", "tan",
    "addmm", "arctan2", "atan2", "baddbmm", "bincount", "bucketize", "column_stack", "count_nonzero",
    "cumprod", "dstack", "erf", "erfinv", "fmod", "histc", "hstack", "hypot", "kron", "median",
    "moveaxis", "movedim", "nan_to_num", "nonzero", "repeat_interleave", "roll", "row_stack",
    "searchsorted", "take_along_dim", "tile", "trace", "vstack",
]


# -- constants and elementary functions ---------------------------------------------------
pi, e, inf, nan = math.pi, math.e, math.inf, math.nan
newaxis = None


def _method(name):
    """``torch.<name>(input)`` calls ``input.<name>()``."""

    def op(input):
        return getattr(input, name)()

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``torch.{name}``: element-wise; see ``Tensor.{name}``."
    return op


tan, asin, acos, atan = _method("tan"), _method("asin"), _method("acos"), _method("atan")
sinh, cosh, asinh, acosh, atanh = _method("sinh"), _method("cosh"), _method("asinh"), _method("acosh"), _method("atanh")
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
log2, log10, expm1, exp2, erfc = _method("log2"), _method("log10"), _method("expm1"), _method("exp2"), _method("erfc")
deg2rad, rad2deg = _method("deg2rad"), _method("rad2deg")


def erf(input):
    return input.erf()


def erfinv(input):
    return input.erfinv()


def atan2(input, other):
    return input.atan2(other)


arctan2 = atan2


def hypot(input, other):
    return input.hypot(other)


def fmod(input, other):
    return input.fmod(other)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return input.nan_to_num(nan, posinf, neginf)


def cumprod(input, dim, *, dtype=None):
    return input.cumprod(dim, dtype=dtype)


def roll(input, shifts, dims=None):
    return input.roll(shifts, dims)


def trace(input):
    return input.trace()


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    return input.addmm(mat1, mat2, beta=beta, alpha=alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return input.baddbmm(batch1, batch2, beta=beta, alpha=alpha)


def kron(input, other):
    return input.kron(other)


def movedim(input, source, destination):
    return input.movedim(source, destination)


moveaxis = movedim


def tile(input, dims):
    return input.tile(dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    return input.repeat_interleave(repeats, dim, output_size=output_size)


def take_along_dim(input, indices, dim=None):
    return input.take_along_dim(indices, dim)


def median(input, dim=None, keepdim=False):
    return input.median(dim, keepdim)


def count_nonzero(input, dim=None):
    return input.count_nonzero(dim)


def nonzero(input, *, as_tuple=False):
    return input.nonzero(as_tuple=as_tuple)


def bincount(input, weights=None, minlength=0):
    return input.bincount(weights, minlength)


def histc(input, bins=100, min=0, max=0):
    return input.histc(bins, min, max)


# -- stacking --------------------------------------------------------------------------
def vstack(tensors):
    """Stack rows: 1-D tensors become rows, then ``cat`` along dim 0."""
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in tensors], 0)


row_stack = vstack


def hstack(tensors):
    """Stack columns: ``cat`` along dim 1 (dim 0 for 1-D tensors)."""
    tensors = [t.reshape(1) if t.ndim == 0 else t for t in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def dstack(tensors):
    """Stack along a third dim (1-D ``(N,)`` become ``(1, N, 1)``, 2-D ``(M, N)`` become ``(M, N, 1)``)."""
    shaped = []
    for t in tensors:
        if t.ndim < 2:
            t = t.reshape(1, -1, 1)
        elif t.ndim == 2:
            t = t.unsqueeze(-1)
        shaped.append(t)
    return cat(shaped, 2)


def column_stack(tensors):
    """1-D (and 0-d) tensors become columns; then ``hstack``."""
    return cat([t.reshape(-1, 1) if t.ndim < 2 else t for t in tensors], 1)


# -- searching a sorted sequence ----------------------------------------------------------
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None):
    """Where each value of ``input`` would be inserted to keep ``sorted_sequence`` sorted (innermost dim)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of "
                               "left while right was True")
        right = side == "right"
    seq = sorted_sequence._data
    values = input._data if isinstance(input, Tensor) else np.asarray(input)
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter._data, -1)
    how = "right" if right else "left"
    if seq.ndim == 1:
        result = np.searchsorted(seq, values, side=how)
    else:
        if seq.shape[:-1] != values.shape[:-1]:
            raise RuntimeError(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                "boundaries tensor and input value tensor must match, but we got boundaries tensor "
                f"{list(seq.shape)} and input value tensor {list(values.shape)}")
        rows = [np.searchsorted(s, v, side=how) for s, v in zip(seq.reshape(-1, seq.shape[-1]),
                                                                values.reshape(-1, values.shape[-1]))]
        result = np.stack(rows).reshape(values.shape)
    result = np.asarray(result, dtype=np.int32 if out_int32 else np.int64)
    return Tensor._make(result)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket index of each value of ``input`` given 1-D ``boundaries``."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# -- more shapes, moments, membership ---------------------------------------------------------
def broadcast_to(input, size):
    return input.broadcast_to(size)


def kthvalue(input, k, dim=-1, keepdim=False):
    return input.kthvalue(k, dim, keepdim)


def cummax(input, dim):
    return input.cummax(dim)


def cummin(input, dim):
    return input.cummin(dim)


def take(input, index):
    return input.take(index)


def select(input, dim, index):
    return input.select(dim, index)


def fliplr(input):
    return input.fliplr()


def flipud(input):
    return input.flipud()


def tensor_split(input, indices_or_sections, dim=0):
    return input.tensor_split(indices_or_sections, dim)


def hsplit(input, indices_or_sections):
    """``tensor_split`` along dim 1 (dim 0 for 1-D tensors)."""
    return input.hsplit(indices_or_sections)


def vsplit(input, indices_or_sections):
    return input.vsplit(indices_or_sections)


def dsplit(input, indices_or_sections):
    return input.dsplit(indices_or_sections)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    return input.diff(n, dim, prepend, append)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    return input.diag_embed(offset, dim1, dim2)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    return input.nansum(dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    return input.nanmean(dim, keepdim, dtype=dtype)


def std_mean(input, dim=None, *, correction=1, keepdim=False):
    """``(std, mean)`` in one call."""
    return input.std(dim, keepdim=keepdim, correction=correction), input.mean(dim, keepdim)


def var_mean(input, dim=None, *, correction=1, keepdim=False):
    """``(var, mean)`` in one call."""
    return input.var(dim, keepdim=keepdim, correction=correction), input.mean(dim, keepdim)


def logaddexp(input, other):
    return input.logaddexp(other)


def logaddexp2(input, other):
    return input.logaddexp2(other)


def xlogy(input, other):
    if not isinstance(input, Tensor):
        return other.new_tensor(input).expand(*other.shape).xlogy(other)
    return input.xlogy(other)


def true_divide(dividend, divisor):
    return dividend.div(divisor)


def argwhere(input):
    return input.argwhere()


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Is each element one of ``test_elements``? (a bool tensor shaped like ``elements``)."""
    values = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    tests = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return Tensor._make(np.isin(values, tests, invert=invert))


def atleast_1d(*tensors):
    """Tensors with at least 1 dim (0-d become shape (1,))."""
    return _atleast(tensors, lambda t: t.reshape(1) if t.ndim == 0 else t)


def atleast_2d(*tensors):
    """Tensors with at least 2 dims (leading size-1 dims added)."""
    return _atleast(tensors, lambda t: t.reshape((1,) * (2 - t.ndim) + tuple(t.shape)) if t.ndim < 2 else t)


def atleast_3d(*tensors):
    """Tensors with at least 3 dims: (N,) -> (1, N, 1), (M, N) -> (M, N, 1)."""
    def three(t):
        if t.ndim == 0:
            return t.reshape(1, 1, 1)
        if t.ndim == 1:
            return t.reshape(1, -1, 1)
        return t.unsqueeze(-1) if t.ndim == 2 else t

    return _atleast(tensors, three)


def _atleast(tensors, fix):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(fix(t) for t in tensors[0])
    if len(tensors) == 1:
        return fix(tensors[0])
    return tuple(fix(t) for t in tensors)


def block_diag(*tensors):
    """A block-diagonal matrix from 0-, 1- or 2-D blocks (differentiable: each block is one row of
    ``cat([zeros, block, zeros], 1)``, the rows ``cat``-ed)."""
    blocks = [t.reshape(1, 1) if t.ndim == 0 else t.reshape(1, -1) if t.ndim == 1 else t for t in tensors]
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        right = width - left - b.shape[1]
        rows.append(cat([b.new_zeros(b.shape[0], left), b, b.new_zeros(b.shape[0], right)], 1))
        left += b.shape[1]
    return cat(rows, 0)


def cartesian_prod(*tensors):
    """All combinations of the 1-D inputs, one per row (``itertools.product`` order)."""
    from .functional import meshgrid

    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def _triangle_indices(row, col, offset, upper, dtype):
    from ._creation import _finish

    r, c = np.triu_indices(row, offset, col) if upper else np.tril_indices(row, offset, col)
    return _finish(np.stack([r, c]).astype((dtype or _dtype.int64).np), dtype, None, False)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the lower triangle of a row x col matrix."""
    return _triangle_indices(row, col, offset, False, dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the upper triangle of a row x col matrix."""
    return _triangle_indices(row, col, offset, True, dtype)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``base ** linspace(start, end, steps)``."""
    from ._creation import _finish

    dtype = dtype or _dtype.get_default_dtype()
    values = np.logspace(start, end, steps, base=base).astype(dtype.np)
    return _finish(values, dtype, device, requires_grad)


from ._numpy_compat import patch_module as _patch_module  # noqa: E402

_patch_module(globals())  # torch.sum(x, axis=0): NumPy's argument names too
