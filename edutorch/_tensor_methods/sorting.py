"""Order statistics: ``sort``, ``argsort``, ``topk``, ``kthvalue``, ``median``, ``unique``.

``sort``, ``topk``, ``median`` and ``kthvalue`` are ``Function``s in
``autograd/_functions/sorting.py`` (the gradient goes back to where each value came from; ``median()``
of all values shares it among the entries equal to the median, as PyTorch).
"""
from .. import return_types
from ..autograd._functions import sorting
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
        return return_types.kthvalue(*sorting.Kthvalue.apply(self, k, dim, keepdim))

    def median(self, dim=None, keepdim=False):
        """The lower median: of all values (a 0-d tensor), or along ``dim`` with its index; NaN if a NaN is there."""
        if dim is None:
            return sorting.Median.apply(self)
        return return_types.median(*sorting.MedianDim.apply(self, dim, keepdim))

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        from ..functional import unique

        return unique(self, sorted, return_inverse, return_counts, dim)
