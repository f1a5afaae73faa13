"""Shape ops: ``view``, ``reshape``, ``permute``, ``transpose``, ``expand``, ``squeeze``, ``split``, ``flip``...

Views (``view``, ``t``, ``x[0]``...) share storage and version counter with
their base and are remembered by ``views.py``, so an in-place op on a view
can rewrite its base's graph.  The ops are in ``autograd/_functions/shape.py``.
"""
import builtins
import warnings

import numpy as np

from .. import _dtype
from ..autograd._functions import shape as shape_fns
from ..autograd._functions import utils
from ..autograd._functions.utils import wrap_dim
from .views import as_view, multi_view


def _sizes(args):
    """Accept ``f(2, 3)`` and ``f((2, 3))`` alike, as PyTorch's size arguments do."""
    if len(args) == 1 and not isinstance(args[0], int):
        return tuple(args[0])
    return args


def _t_dims(t, name):
    """The dims ``t()`` swaps: (0, 1) of a matrix, none (0, 0) below 2-D."""
    if t._data.ndim > 2:
        raise RuntimeError(f"{name}() expects a tensor with <= 2 dimensions, but self is {t._data.ndim}D")
    return (0, 1) if t._data.ndim == 2 else (0, 0)


def _squeeze_kind(dim):
    """PyTorch's three ``squeeze`` overloads, each with its own node name: 0 no dim, 1 one dim, 2 a tuple."""
    return 0 if dim is None else 2 if isinstance(dim, (tuple, list)) else 1


def _squeezed_shape(t, dim):
    """The shape of ``t.squeeze(dim)``."""
    old = t._data.shape
    dims = range(t._data.ndim) if dim is None else dim if isinstance(dim, (tuple, list)) else (dim,)
    dims = {wrap_dim(d, t._data.ndim) for d in dims}
    return tuple(s for i, s in enumerate(old) if not (i in dims and s == 1))


def _tuple(x):
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def _refuse_0d(t, error, message):
    """Ops that need a real dim refuse a 0-d tensor (most ops accept dim 0 or -1 there)."""
    if t.ndim == 0:
        raise error(message)


def _no_dims(dim):
    return f"Dimension specified as {dim} but tensor has no dimensions"


class ShapeMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
            raise TypeError("view(dtype) reinterprets bits; edutorch supports view(*shape) only")
        shape = _sizes(shape)
        return as_view(self, shape_fns.View.apply(self, shape))

    def view_as(self, other):
        return self.view(other.shape)

    def reshape(self, *shape):
        shape = _sizes(shape)
        if not shape_fns.can_view(self._data, shape):
            return shape_fns.UnsafeView.apply(self, shape)  # a copy: not a view
        return as_view(self, shape_fns.View.apply(self, shape))

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def permute(self, *dims):
        if not dims:  # PyTorch's argument parser: even a 0-d tensor needs its (empty) dims
            raise TypeError('permute() missing 1 required positional arguments: "dims"')
        dims = _sizes(dims)
        return as_view(self, shape_fns.Permute.apply(self, dims))

    def transpose(self, dim0, dim1):
        return as_view(self, shape_fns.Transpose.apply(self, dim0, dim1))

    swapaxes = swapdims = transpose

    def transpose_(self, dim0, dim1):
        """``transpose`` in place: this tensor becomes the transposed view of its memory."""
        return self._inplace_view(shape_fns.TransposeInplace, lambda: (dim0, dim1))

    swapaxes_ = swapdims_ = transpose_

    def t(self):
        return as_view(self, shape_fns.T.apply(self, *_t_dims(self, "t")))

    def t_(self):
        """``t`` in place: this tensor becomes the transposed view of its memory."""
        return self._inplace_view(shape_fns.TInplace, lambda: _t_dims(self, "t_"))

    @property
    def T(self):
        if self._data.ndim not in (0, 2):
            warnings.warn(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                "deprecated and it will throw an error in a future release. Consider `x.mT` to "
                "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
                "reverse the dimensions of a tensor.",
                UserWarning,
                stacklevel=2,
            )
        return self.permute(*reversed(range(self._data.ndim)))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    def expand(self, *sizes):
        sizes = _sizes(sizes)
        return as_view(self, shape_fns.Expand.apply(self, sizes))

    def expand_as(self, other):
        return self.expand(other.shape)

    def broadcast_to(self, size):
        """``expand`` to ``size`` (a view)."""
        return self.expand(*size)

    def unsqueeze(self, dim):
        return as_view(self, shape_fns.Unsqueeze.apply(self, dim))

    def unsqueeze_(self, dim):
        """``unsqueeze`` in place: this tensor gets the new size-1 dim (same memory)."""
        return self._inplace_view(shape_fns.UnsqueezeInplace, lambda: (dim,))

    def squeeze(self, dim=None):
        fn = (shape_fns.Squeeze, shape_fns.SqueezeDim, shape_fns.SqueezeDims)[_squeeze_kind(dim)]
        return as_view(self, fn.apply(self, _squeezed_shape(self, dim)))

    def squeeze_(self, dim=None):
        """``squeeze`` in place: this tensor loses the size-1 dims (same memory)."""
        fn = (shape_fns.SqueezeInplace, shape_fns.SqueezeDimInplace, shape_fns.SqueezeDimsInplace)[_squeeze_kind(dim)]
        return self._inplace_view(fn, lambda: (_squeezed_shape(self, dim),))

    def flatten(self, start_dim=0, end_dim=-1):
        old = self._data.shape
        if not old:  # a 0-d tensor counts as one dim here: dims in [-1, 0], as in PyTorch
            wrap_dim(start_dim, 1), wrap_dim(end_dim, 1)
            return self.reshape(1)
        s, e = wrap_dim(start_dim, len(old)), wrap_dim(end_dim, len(old))
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if s == e:
            return self
        merged = 1
        for size in old[s:e + 1]:  # (not -1: a size-0 dim elsewhere would leave it undetermined)
            merged *= size
        return self.reshape(old[:s] + (merged,) + old[e + 1:])

    def unflatten(self, dim, sizes):
        """Split dim ``dim`` into ``sizes`` (one of them may be -1, inferred as in ``view``)."""
        old = self._data.shape
        d = wrap_dim(dim, len(old))
        sizes = list(sizes)
        known = 1
        for s in sizes:
            known *= s if s != -1 else 1
        if -1 in sizes:
            if not known:
                raise RuntimeError(
                    f"unflatten got an unexpected error:\ncannot reshape tensor of {old[d]} elements into shape "
                    f"{list(sizes)} because the unspecified dimension size -1 can be any value and is ambiguous"
                )
            sizes[sizes.index(-1)] = old[d] // known
        elif known != old[d]:
            raise RuntimeError(
                f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size "
                f"of dim {dim} ({old[d]}) in the input tensor"
            )
        return self.view(old[:d] + tuple(sizes) + old[d + 1:])

    def movedim(self, source, destination):
        """Move the dims in ``source`` to the positions ``destination``; the others keep their order."""
        src = [wrap_dim(d, self.ndim) for d in _tuple(source)]
        dst = [wrap_dim(d, self.ndim) for d in _tuple(destination)]
        if len(src) != len(dst):
            raise RuntimeError(
                f"movedim: Invalid source or destination dims: source ({list(_tuple(source))} dims) should "
                f"contain the same number of dims as destination ({list(_tuple(destination))} dims)")
        if self.ndim == 0:  # dims 0 and -1 are accepted, and there is nothing to move
            return self.permute(())
        order = [None] * self.ndim
        for s, d in zip(src, dst):
            order[d] = s
        rest = iter(d for d in range(self.ndim) if d not in src)
        return self.permute([o if o is not None else next(rest) for o in order])

    moveaxis = movedim

    def flip(self, *dims):
        dims = tuple(wrap_dim(d, self._data.ndim) for d in _sizes(dims))
        return shape_fns.Flip.apply(self, dims if self._data.ndim else ())  # a 0-d tensor: nothing to reverse

    def fliplr(self):
        """Reverse the columns (dim 1)."""
        if self.ndim < 2:
            raise RuntimeError("Input must be >= 2-d.")
        return self.flip(1)

    def flipud(self):
        """Reverse the rows (dim 0)."""
        if self.ndim < 1:
            raise RuntimeError("Input must be >= 1-d.")
        return self.flip(0)

    def repeat(self, *sizes):
        return shape_fns.Repeat.apply(self, _sizes(sizes))

    def tile(self, dims):
        """``repeat`` with ``dims`` padded with leading 1s to the tensor's rank."""
        dims = _tuple(dims)
        if len(dims) < self.ndim:
            dims = (1,) * (self.ndim - len(dims)) + dims
        return self.repeat(*dims)

    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
        """Repeat each element ``repeats`` times (one count for all, or one per element) along ``dim``."""
        if repeats is None:  # torch.repeat_interleave(counts): each index i, counts[i] times
            counts = self._data
            return utils._Tensor._make(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
        x = self if dim is not None else self.reshape(-1)
        axis = 0 if dim is None else wrap_dim(dim, self.ndim)
        counts = repeats._data if isinstance(repeats, utils._Tensor) else repeats
        index = np.repeat(np.arange(x.shape[axis], dtype=np.int64), counts)
        return x.index_select(axis, utils._Tensor._make(index))

    def roll(self, shifts, dims=None):
        shifts = _tuple(shifts)
        if dims is None:
            if len(shifts) != 1:
                raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
            return shape_fns.Roll.apply(self, shifts, None)
        dims = _tuple(dims)
        _refuse_0d(self, IndexError, _no_dims(dims[0]))
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
        return shape_fns.Roll.apply(self, shifts, tuple(wrap_dim(d, self._data.ndim) for d in dims))

    def narrow(self, dim, start, length):
        _refuse_0d(self, RuntimeError, "narrow() cannot be applied to a 0-dim tensor.")
        axis = wrap_dim(dim, self._data.ndim)
        size = self._data.shape[axis]
        start = start + size if start < 0 else start
        if length < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        if start + length > size:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
        out = shape_fns.Narrow.apply(self, axis, start, length)
        return as_view(self, out)

    def select(self, dim, index):
        """The slice at ``index`` along ``dim``, that dim removed (``x.select(0, i)`` is ``x[i]``)."""
        _refuse_0d(self, IndexError, "select() cannot be applied to a 0-dim tensor.")
        axis = wrap_dim(dim, self.ndim)
        size = self.shape[axis]
        if not -size <= index < size:
            raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} at "
                             f"dimension {axis}")
        return self[(slice(None),) * axis + (index,)]  # one SelectBackward0 node, as x[:, i]

    def unfold(self, dimension, size, step):
        """A view of the windows of ``size`` elements, ``step`` apart, along ``dimension`` (a new last dim)."""
        return as_view(self, shape_fns.Unfold.apply(self, dimension, size, step))

    def split_with_sizes(self, split_sizes, dim=0):
        """``split`` into parts of the given sizes (views)."""
        return self.split(list(split_sizes), dim)

    def split(self, split_size, dim=0):
        _refuse_0d(self, RuntimeError, "split expects at least a 1-dimensional tensor")
        axis = wrap_dim(dim, self._data.ndim)
        size = self._data.shape[axis]
        if isinstance(split_size, int):
            if split_size <= 0 and size:
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
            sizes = [min(split_size, size - i) for i in range(0, size, split_size)] if size else [0]
            return multi_view(self, shape_fns.Split.apply(self, tuple(sizes), axis), "Split")
        sizes = tuple(split_size)
        if builtins.sum(sizes) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                f"dimension {axis}), but got split_sizes={list(sizes)}"
            )
        return multi_view(self, shape_fns.SplitWithSizes.apply(self, sizes, axis), "SplitWithSizes")

    def chunk(self, chunks, dim=0):
        _refuse_0d(self, RuntimeError, "chunk expects at least a 1-dimensional tensor")
        if chunks <= 0:
            raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
        size = self._data.shape[wrap_dim(dim, self._data.ndim)]
        if not size:  # PyTorch: ``chunks`` empty pieces
            return self.split([0] * chunks, dim)
        return self.split(-(-size // chunks), dim)

    def tensor_split(self, indices_or_sections, dim=0):
        """Split into ``n`` nearly equal parts (the first ones one longer), or at the given indices."""
        _refuse_0d(self, RuntimeError, "tensor_split expected at least a 1-dimensional tensor, but got a tensor "
                   "with 0 dims")
        axis = wrap_dim(dim, self.ndim)
        size = self.shape[axis]
        if isinstance(indices_or_sections, int):
            n = indices_or_sections
            if n <= 0:
                raise RuntimeError(f"number of sections must be larger than 0, got {n}")
            bounds = [i * (size // n) + builtins.min(i, size % n) for i in range(n + 1)]
        else:
            cuts = [builtins.min(builtins.max(int(i), 0), size) for i in indices_or_sections]
            bounds = [0] + cuts + [size]
        return tuple(self.narrow(axis, lo, builtins.max(hi - lo, 0)) for lo, hi in zip(bounds, bounds[1:]))

    def unbind(self, dim=0):
        _refuse_0d(self, IndexError, _no_dims(wrap_dim(dim, self.ndim)))
        return multi_view(self, shape_fns.Unbind.apply(self, wrap_dim(dim, self._data.ndim)), "Unbind")

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        """``x[i + 1] - x[i]`` along ``dim``, ``n`` times (after joining ``prepend``/``append``)."""
        from .._functional import cat

        _refuse_0d(self, RuntimeError, "diff expects input to be at least one-dimensional")
        x = self
        axis = wrap_dim(dim, self.ndim)
        if prepend is not None or append is not None:
            x = cat([t for t in (prepend, x, append) if t is not None], axis)
        for _ in range(n):
            length = x.shape[axis]
            if length == 0:
                break
            after, before = x.narrow(axis, 1, length - 1), x.narrow(axis, 0, length - 1)
            x = (after ^ before) if x.dtype == _dtype.bool else after - before
        return x
