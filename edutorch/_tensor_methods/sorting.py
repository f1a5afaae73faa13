"""Order statistics: ``sort``, ``argsort``, ``topk``, ``kthvalue``, ``median``, ``unique``.

``sort`` and ``topk`` are ``Function``s in ``autograd/_functions/sorting.py``
(the gradient goes back to where each value came from); ``kthvalue`` and
``median`` pick positions, then ``gather``.
"""
import numpy as np

from .. import backend
from .. import return_types
from ..autograd._functions import sorting, utils
from ..autograd._functions.utils import wrap_dim
from .._dtype import is_floating as _is_floating


def _median_positions(x, axis):
    """Where the lower median of each slice along ``axis`` sits (the first NaN if the slice has one)."""
    xp = backend.get_array_module(x)
    order = xp.argsort(x, axis=axis, kind="stable")  # NaN sorts last
    k = (x.shape[axis] - 1) // 2
    positions = xp.take(order, k, axis=axis)
    has_nan = xp.isnan(x).any(axis=axis) if _is_floating(x.dtype) else xp.zeros(positions.shape, bool)
    first_nan = xp.argmax(xp.isnan(x), axis=axis) if _is_floating(x.dtype) else positions
    return xp.where(has_nan, first_nan, positions).astype(np.int64)


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
        """The lower median (of all values, or along ``dim`` with its index); NaN if a NaN is there."""
        if dim is None:
            flat = self.reshape(-1)
            if flat.shape[0] == 0:
                return self.new_tensor(float("nan")).reshape(())
            return flat.gather(0, utils._Tensor._make(_median_positions(flat._data, 0).reshape(1))).reshape(())
        axis = wrap_dim(dim, self.ndim)
        index = utils._Tensor._make(np.expand_dims(_median_positions(self._data, axis), axis) if self.ndim else
                      _median_positions(self._data, 0).reshape(1))
        values = self.gather(axis, index) if self.ndim else self.reshape(1)[index].reshape(())
        if not keepdim and self.ndim:
            values, index = values.squeeze(axis), index.squeeze(axis)
        return return_types.median(values, index if self.ndim else index.reshape(()))

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        from ..functional import unique

        return unique(self, sorted, return_inverse, return_counts, dim)
