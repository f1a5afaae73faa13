"""Order statistics: ``sort``, ``argsort``, ``topk``, ``kthvalue``, ``median``, ``unique``.

``sort``, ``topk`` and ``median`` are ``Function``s in ``autograd/_functions/sorting.py``
(the gradient goes back to where each value came from; ``median()`` of all values
shares it among the entries equal to the median, as PyTorch); ``kthvalue`` picks
positions, then ``gather``.
"""
import numpy as np

from .. import return_types
from ..autograd._functions import sorting, utils
from ..autograd._functions.utils import wrap_dim


class SortingMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    def sort(self, dim=-1, descending=False, stable=False):
        return return_types.sort(*sorting.Sort.apply(self, wrap_dim(dim, self._data.ndim), descending))

    def argsort(self, dim=-1, descending=False, stable=False):
        return self.sort(dim, descending).indices

    def topk(self, k, dim=-1, largest=True, sorted=True):
        return return_types.topk(*sorting.TopK.apply(self, k, wrap_dim(dim, self._data.ndim), largest))

    def kthvalue(self, k, dim=-1, keepdim=False):
        """The ``k``-th smallest value along ``dim`` and its index (a named tuple)."""
        axis = wrap_dim(dim, self.ndim)
        size = self.shape[axis] if self.ndim else 1
        if size == 0:
            raise IndexError(f"kthvalue(): Expected reduction dim {axis} to have non-zero size.")
        if not 1 <= k <= size:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
        x = self if self.ndim else self.reshape(1)
        order = np.argsort(x._data, axis=axis, kind="stable")
        index = utils._Tensor._make(np.take(order, [k - 1], axis=axis).astype(np.int64))
        values = x.gather(axis, index)
        if not keepdim:
            values, index = values.squeeze(axis), index.squeeze(axis)
        if not self.ndim:
            values, index = values.reshape(()), index.reshape(())
        return return_types.kthvalue(values, index)

    def median(self, dim=None, keepdim=False):
        """The lower median: of all values (a 0-d tensor), or along ``dim`` with its index; NaN if a NaN is there."""
        if dim is None:
            return sorting.Median.apply(self)
        return return_types.median(*sorting.MedianDim.apply(self, dim, keepdim))

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        from ..functional import unique

        return unique(self, sorted, return_inverse, return_counts, dim)
