"""Matrix functions: ``triu``, ``tril``, ``diagonal``, ``diag``, ``trace``, ``det``, ``inverse``...

The ops are in ``autograd/_functions/linalg.py``; ``torch.linalg`` is ``edutorch/linalg.py``.
"""
import numpy as np

from ..autograd._functions import linalg as linalg_fns
from ..autograd._functions import blas, utils
from ..autograd._functions.utils import wrap_dim
from .views import as_view


def _diag_embed(t, offset):
    """(..., n) -> (..., m, m), m = n + |offset|: ``t`` on the ``offset`` diagonal, a sum of outer products."""
    n = t.shape[-1]
    m = n + abs(offset)
    eye = utils._Tensor._make(np.eye(m, dtype=t._data.dtype))
    rows = eye[max(-offset, 0): max(-offset, 0) + n]  # (n, m): the one-hot row of value i
    cols = eye[max(offset, 0): max(offset, 0) + n]    # (n, m): its one-hot column
    return (t.unsqueeze(-1).unsqueeze(-1) * rows.unsqueeze(-1) * cols.unsqueeze(-2)).sum(-3)


class LinalgMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    def triu(self, diagonal=0):
        """The upper triangle of the (batched) matrix: entries with ``j - i >= diagonal``."""
        return linalg_fns.Triu.apply(self, diagonal)

    def tril(self, diagonal=0):
        """The lower triangle of the (batched) matrix: entries with ``j - i <= diagonal``."""
        return linalg_fns.Tril.apply(self, diagonal)

    def diagonal(self, offset=0, dim1=0, dim2=1):
        """A view of the ``offset``-th diagonal of the matrices in dims ``dim1``, ``dim2``."""
        return as_view(self, linalg_fns.Diagonal.apply(self, offset, dim1, dim2))

    def diag(self, diagonal=0):
        """1-D in: a square matrix with ``self`` on a diagonal.  2-D in: a copy of that diagonal."""
        if self.ndim == 1:
            return linalg_fns.DiagEmbed.apply(self, diagonal)
        if self.ndim == 2:
            return linalg_fns.DiagonalCopy.apply(self, diagonal, 0, 1)
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        """Put the last dim on the ``offset`` diagonal of new matrices in dims (``dim1``, ``dim2``)."""
        out = _diag_embed(self, offset)
        ndim = out.ndim
        d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
        if (d1, d2) != (ndim - 2, ndim - 1):
            out = out.movedim((ndim - 2, ndim - 1), (d1, d2))
        return out

    def trace(self):
        return blas.Trace.apply(self)

    def dist(self, other, p=2):
        """The ``p``-norm of ``self - other`` (broadcast together)."""
        return linalg_fns.Dist.apply(self, other, p)

    def det(self):
        """The determinant; its gradient is the cofactor matrix (singular matrices included)."""
        return linalg_fns.Det.apply(self)

    def inverse(self):
        """The inverse of a square matrix; ``LinAlgError`` if it is singular."""
        return linalg_fns.Inv.apply(self)

    def matrix_exp(self):
        """``exp(A) = I + A + A^2/2! + ...`` of a square matrix."""
        return linalg_fns.MatrixExp.apply(self)
