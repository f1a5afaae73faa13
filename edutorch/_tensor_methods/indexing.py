"""Indexing: ``x[i]``, ``x[mask]``, ``x[idx] = v``, ``gather``, ``scatter``, ``index_select``, ``nonzero``...

``x[...]`` with ints and slices is a view (remembered by ``views.py``); with
tensors or lists it is a copy (``autograd/_functions/indexing.py``).
"""
import numpy as np

from .. import backend
from ..autograd import grad_mode
from ..autograd._functions import indexing, utils
from ..autograd._functions import shape as shape_fns
from ..autograd._functions.tensor import CopySlices, IndexPut
from ..autograd._functions.utils import wrap_dim
from .inplace import VIEW_OF_LEAF_INPLACE_ERROR, leaf_inplace_error
from .views import check_no_overlap, read_graph, track_view


def _written_region(x, idx):
    """``x[idx]`` (array ``x``, a basic index) as PyTorch's ``__setitem__`` sees the part it writes:
    each ``None`` an ``unsqueeze`` with PyTorch's stride (NumPy's is 0), which its overlap check with
    the written value compares (``x[None] = x.expand(1)`` of a 0-d ``x``: strides 1 and 0, refused)."""
    for kind, arg in indexing.basic_index_steps(idx, x.ndim):
        x = shape_fns.unsqueezed(x, arg) if kind == "unsqueeze" else indexing.basic_view(x, arg)
    return x


def _basic_view(t, idx):
    """``t[idx]`` for ints and slices: one view node, tracked so that an in-place op on the
    view can update the base's graph."""
    out = indexing.basic_index_class(idx).apply(t, idx)
    track_view(t, out)
    return out


class IndexingMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    def __getitem__(self, index):
        idx = indexing.to_index(index)
        parts = indexing.integers_first(idx, self._data.ndim)
        if parts is not None:  # PyTorch's order: the integers, then the arrays
            return self[parts[0]][parts[1]]
        if indexing.is_basic(idx):  # a view, one node per step: each None is an unsqueeze
            out = self
            for kind, arg in indexing.basic_index_steps(idx, self._data.ndim):
                out = out.unsqueeze(arg) if kind == "unsqueeze" else _basic_view(out, arg)
            return out
        return indexing.Index.apply(self, idx, saved=indexing.index_tensors(index))

    def __setitem__(self, index, value):
        """``x[index] = value``: ``CopySlices`` for a basic index (the view ``x[index]`` gets
        ``value``, expanded to its shape), ``IndexPutBackward0`` for an advanced one."""
        idx = indexing.to_index(index)
        parts = indexing.integers_first(idx, self._data.ndim)
        if parts is not None:  # PyTorch's order: write into the view the integers select
            if grad_mode.is_grad_enabled() and self._requires_grad and self._grad_fn is None:
                raise leaf_inplace_error(self)
            self[parts[0]][parts[1]] = value
            return
        if isinstance(value, (list, tuple)):
            raise TypeError(f"can't assign a {type(value).__name__} to a {self.type()}")
        if not indexing.is_basic(idx):
            one_mask = isinstance(idx, np.ndarray) and idx.dtype == bool
            if isinstance(value, utils._Tensor) and not (one_mask and value.ndim == 0):  # (a fill: no overlap)
                check_no_overlap(self, value, full_ok=False)
            self._inplace(IndexPut, idx, value, indexing.index_tensors(index))
            return
        if grad_mode.is_grad_enabled() and self._requires_grad and idx is not Ellipsis:
            if self._grad_fn is None:  # PyTorch writes through the view ``x[index]``
                raise RuntimeError(VIEW_OF_LEAF_INPLACE_ERROR)
            read_graph(self)  # (making that view reads this tensor's node)
        if isinstance(value, utils._Tensor) and value.ndim:  # (a 0-d value: PyTorch fills, unchecked)
            region = utils._Tensor._make(_written_region(self._data, idx))
            while value.ndim > region.ndim and value.shape[0] == 1:  # PyTorch drops leading 1s first
                value = value[0]
            if value.shape != region.shape:
                value = value.expand(region.shape)
            check_no_overlap(region, value)
        self._inplace(CopySlices, idx, value)

    def nonzero(self, *, as_tuple=False):
        """Positions of the non-zero entries: an (N, ndim) int64 tensor, or one per dim."""
        positions = np.nonzero(self._data if self._data.ndim else self._data.reshape(1))
        make = utils._Tensor._make
        if as_tuple:
            return tuple(make(p.astype(np.int64)) for p in positions)
        xp = backend.get_array_module(self._data)
        return make(xp.stack(positions, axis=1).astype(np.int64) if self._data.ndim
                    else xp.zeros((len(positions[0]), 0), dtype=np.int64))

    def argwhere(self):
        """Indices of the non-zero elements, one row each (``nonzero()``)."""
        return self.nonzero()

    def index_select(self, dim, index):
        return indexing.IndexSelect.apply(self, wrap_dim(dim, self._data.ndim), index)

    def index_add(self, dim, index, source, *, alpha=1):
        """Add ``alpha * source`` into the rows ``index`` along ``dim`` (repeats add up)."""
        return indexing.IndexAdd.apply(self, dim, index, source, alpha)

    def masked_select(self, mask):
        return indexing.MaskedSelect.apply(self, mask)

    def masked_fill(self, mask, value):
        fn = indexing.MaskedFillTensor if isinstance(value, utils._Tensor) else indexing.MaskedFill
        return fn.apply(self, mask, value)

    def gather(self, dim, index):
        return indexing.Gather.apply(self, dim, index)

    def take(self, index):
        """Elements of the flattened tensor at ``index`` (shaped like ``index``)."""
        return indexing.Take.apply(self, index)

    def take_along_dim(self, indices, dim=None):
        """``gather`` with broadcasting; without ``dim`` on the flattened tensor."""
        if dim is None:
            return self.reshape(-1).gather(0, indices.reshape(-1))
        axis = wrap_dim(dim, self.ndim)
        if self.ndim == 0:
            raise IndexError(f"Dimension specified as {axis} but tensor has no dimensions")
        shape_self = list(self.shape)
        shape_idx = list(indices.shape)
        shape_self[axis] = shape_idx[axis] = 1
        try:
            common = list(np.broadcast_shapes(tuple(shape_self), tuple(shape_idx)))
        except ValueError:  # PyTorch's RuntimeError, not NumPy's ValueError
            raise utils.broadcast_error(np.empty(shape_self), np.empty(shape_idx)) from None
        s = common.copy()
        s[axis] = self.shape[axis]
        i = common.copy()
        i[axis] = indices.shape[axis]
        return self.expand(*s).gather(axis, indices.expand(*i))

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        src = value if src is None else src
        if isinstance(src, utils._Tensor):
            return indexing.Scatter.apply(self, dim, index, src, reduce)
        return indexing.ScatterValue.apply(self, dim, index, src, reduce)

    def scatter_add(self, dim, index, src):
        return indexing.ScatterAdd.apply(self, dim, index, src)
