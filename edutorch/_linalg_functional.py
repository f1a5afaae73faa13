"""Top-level matrix functions: ``torch.triu``, ``tril``, ``diag``, ``diagonal``, ``dist``,
``matrix_exp``, ``det``, ``inverse``, ``geqrf``.

They call the Functions in ``autograd/_functions/linalg.py``, as the
``Tensor`` methods of the same names do.
"""
import numpy as np

from . import backend, return_types
from ._tensor import Tensor
from .autograd._functions import linalg as _F

__all__ = ["det", "diag", "diagonal", "dist", "geqrf", "inverse", "matrix_exp", "tril", "triu"]


def triu(input, diagonal=0):
    """The upper triangle of the (batched) matrix ``input``: entries with ``j - i >= diagonal``."""
    return _F.Triu.apply(input, diagonal)


def tril(input, diagonal=0):
    """The lower triangle of the (batched) matrix ``input``: entries with ``j - i <= diagonal``."""
    return _F.Tril.apply(input, diagonal)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the ``offset``-th diagonal of the matrices in dims ``dim1``, ``dim2``."""
    return _F.Diagonal.apply(input, offset, dim1, dim2)


def diag(input, diagonal=0):
    """1-D in: a square matrix with ``input`` on a diagonal.  2-D in: a copy of that diagonal."""
    if input.ndim == 1:
        return _F.DiagEmbed.apply(input, diagonal)
    if input.ndim == 2:
        return _F.DiagonalCopy.apply(input, diagonal, 0, 1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def dist(input, other, p=2):
    """``torch.dist``: the ``p``-norm of ``input - other`` (broadcast together)."""
    return _F.Dist.apply(input, other, p)


def matrix_exp(A):
    """``torch.matrix_exp``, the same as ``torch.linalg.matrix_exp``."""
    return _F.MatrixExp.apply(A)


def det(A):
    """``torch.det``, the same as ``torch.linalg.det``."""
    return _F.Det.apply(A)


def inverse(A):
    """``torch.inverse``, the same as ``torch.linalg.inv``."""
    return _F.Inv.apply(A)


def geqrf(input):
    """``torch.geqrf``: LAPACK's QR in Householder form, ``(a, tau)``; not differentiable.

    ``a`` holds ``R`` on and above the diagonal and the Householder vectors
    below it; ``linalg.householder_product(a, tau)`` rebuilds ``Q``.
    """
    x = input._data
    xp = backend.get_array_module(x)
    h, tau = xp.linalg.qr(x.astype(np.float64), mode="raw")  # NumPy's 'raw' is geqrf, transposed
    a = xp.swapaxes(h, -1, -2).astype(x.dtype)
    return return_types.geqrf((Tensor._make(a), Tensor._make(tau.astype(x.dtype))))


from ._numpy_compat import patch_module as _patch_module  # noqa: E402

_patch_module(globals())  # torch.sum(x, axis=0): NumPy's argument names too
