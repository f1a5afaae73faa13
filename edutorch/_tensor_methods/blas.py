"""Matrix products: ``x @ W``, ``mm``, ``bmm``, ``matmul``, ``dot``, ``mv``, ``addmm``, ``kron``.

The ``Function`` of each product, with its gradient (``grad @ b.T``,
``a.T @ grad``), is in ``autograd/_functions/blas.py``.
"""
import builtins

import numpy as np

from .. import _dtype
from ..autograd._functions import blas, utils
from ..autograd._functions import shape as shape_fns
from ..autograd.function import composite_op  # autocast casts a composite op once, at entry


def _scaled_sum(input, product, beta, alpha):
    """``beta * input + alpha * product``, as ``baddbmm`` computes it."""
    shape, target = tuple(input.shape), tuple(product.shape)
    fits = len(shape) <= len(target) and all(s in (1, t) for s, t in zip(reversed(shape), reversed(target)))
    if not fits:  # ``input`` must broadcast to the product's shape (not the other way round)
        input.expand(*target)  # raises PyTorch's "The expanded size of the tensor ... must match" error
    product = product if alpha == 1 else product * alpha
    if beta == 0:  # PyTorch ignores ``input`` then (a NaN in it does not propagate); its gradient is 0
        from .._functional import where

        return where(input.new_zeros((), dtype=_dtype.bool), input, product)
    return (input if beta == 1 else input * beta) + product


def _unsafe_view(t, shape):
    """PyTorch's ``_unsafe_view`` (here of a shape that only adds size-1 dims): a view of ``t``'s memory
    with a version counter of its own, so a later write of ``t`` is not seen by what an op saved of it."""
    out = shape_fns.View.apply(t, shape)
    out._version_counter = [out._version_counter[0]]
    return out


class BlasMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    def __matmul__(self, other):
        if self._data.ndim == 2 and other._data.ndim == 2:  # x @ W: straight to mm
            return blas.Mm.apply(self, other)
        return self.matmul(other)

    def __rmatmul__(self, other):
        return utils._Tensor._make(np.asarray(other)).matmul(self)

    def mm(self, other):
        return blas.Mm.apply(self, other)

    def bmm(self, other):
        return blas.Bmm.apply(self, other)

    @composite_op("matmul")  # one Function per case (Mm, Mv, Dot, ...): autocast must see "matmul" here
    def matmul(self, other):
        if self._data.ndim == 2 and other._data.ndim == 2:  # the common case, without the lookup
            return blas.Mm.apply(self, other)
        return blas.matmul_function(self._data.ndim, other._data.ndim).apply(self, other)

    def dot(self, other):
        if self._data.ndim != 1 or other._data.ndim != 1:
            raise RuntimeError(
                f"1D tensors expected, but got {self._data.ndim}D and {other._data.ndim}D tensors"
            )
        return blas.Dot.apply(self, other)

    def mv(self, vec):
        if self._data.ndim != 2 or vec._data.ndim != 1:
            raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self._data.ndim}, {vec._data.ndim}")
        return blas.Mv.apply(self, vec)

    def outer(self, vec2):
        """``self[i] * vec2[j]`` for two vectors (PyTorch refuses anything else)."""
        for name, t in (("self", self), ("vec2", vec2)):
            if t.ndim != 1:
                raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
        return self.unsqueeze(1) * vec2.unsqueeze(0)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        """``beta * self + alpha * (mat1 @ mat2)``; with ``beta=0`` ``self`` is ignored (NaN too)."""
        return blas.Addmm.apply(self, mat1, mat2, beta, alpha)

    @composite_op("baddbmm")
    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """``beta * self + alpha * (batch1 @ batch2)``, batch by batch."""
        return _scaled_sum(self, batch1.bmm(batch2), beta, alpha)

    def kron(self, other):
        """The Kronecker product: every entry of ``self`` times the whole of ``other``."""
        n = builtins.max(self.ndim, other.ndim)
        a_shape = (1,) * (n - self.ndim) + tuple(self.shape)
        b_shape = (1,) * (n - other.ndim) + tuple(other.shape)
        # a[i] * b[j] laid out at i * b.shape + j: interleave the dims, then merge pairs.  PyTorch
        # reshapes the operands with ``_unsafe_view`` (same memory, own version counter), so what the
        # product saves is not refused when an operand is written in place later
        a = _unsafe_view(self, [s for d in a_shape for s in (d, 1)])
        b = _unsafe_view(other, [s for d in b_shape for s in (1, d)])
        prod = a * b
        shape = [x * y for x, y in zip(a_shape, b_shape)]
        # PyTorch merges the pairs with ``_unsafe_view``: it refuses where the product's strides
        # (laid out like non-contiguous inputs) allow no view
        if not shape_fns.can_view(prod._data, shape):
            prod.view(shape)  # raises PyTorch's "view size is not compatible" error
        return shape_fns.UnsafeView.apply(prod, shape)
