"""Top-level matrix functions: ``torch.triu``, ``tril``, ``diag``, ``diagonal``, ``dist``,
``matrix_exp``, ``det``, ``inverse``, ``geqrf``.

Each calls the ``Tensor`` method of the same name (``_tensor_methods/linalg.py``),
as ``_functional.py`` does, so every op has one definition.
"""
import numpy as np

from . import backend, return_types
from ._tensor import Tensor

__all__ = ["det", "diag", "diagonal", "dist", "geqrf", "inverse", "matrix_exp", "tril", "triu"]


def triu(input, diagonal=0):
    return input.triu(diagonal)


def tril(input, diagonal=0):
    return input.tril(diagonal)


def diagonal(input, offset=0, dim1=0, dim2=1):
    return input.diagonal(offset, dim1, dim2)


def diag(input, diagonal=0):
    return input.diag(diagonal)


def dist(input, other, p=2):
    return input.dist(other, p)


def matrix_exp(A):
    """``torch.matrix_exp``, the same as ``torch.linalg.matrix_exp``."""
    return A.matrix_exp()


def det(A):
    """``torch.det``, the same as ``torch.linalg.det``."""
    return A.det()


def inverse(A):
    """``torch.inverse``, the same as ``torch.linalg.inv``."""
    return A.inverse()


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
