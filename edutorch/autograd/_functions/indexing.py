"""Indexing ``x[idx]``: the gradient is scattered back into a zero tensor.

Advanced (integer-array) indices may repeat; ``np.add.at`` accumulates the
gradient of every repeat instead of keeping only the last write.
"""
import numpy as np

from ..function import Function
from .._saved_attrs import Saved
from . import utils as _utils  # _utils._Tensor: edutorch.Tensor, without an import cycle
from .tangents import auto_linear
from .utils import wrap_dim
from ... import _dtype, backend
from .utils import broadcast_error


def to_index(idx):
    """Turn Tensors inside an index expression into arrays NumPy understands."""

    if isinstance(idx, _utils._Tensor):
        return idx._data
    if isinstance(idx, slice) and idx.step is not None and idx.step < 0:  # NumPy would reverse
        raise ValueError("step must be greater than zero")
    if isinstance(idx, tuple):
        return tuple(to_index(i) for i in idx)
    if isinstance(idx, list) and any(isinstance(i, _utils._Tensor) for i in idx):
        return [to_index(i) for i in idx]
    return idx


def index_tensors(idx):
    """The Tensors inside an index expression: an ``Index`` node saves them (as PyTorch
    does), so changing them in place before backward raises instead of misrouting grads."""
    if isinstance(idx, _utils._Tensor):
        return (idx,)
    if isinstance(idx, (tuple, list)):
        return tuple(t for i in idx for t in index_tensors(i))
    return ()


def integers_first(idx, ndim):
    """``x[0, :, [1, 2]]`` in two steps, ``(ints, rest)``, as PyTorch indexes it; or None.

    PyTorch applies integer indices first (each removes its axis) and then the
    array indices; NumPy counts an integer next to an array as one more array,
    which puts the indexed axes elsewhere ((3, 1) instead of (1, 3) above).
    """
    if not isinstance(idx, tuple):  # a single index cannot mix the two kinds
        return None
    items = idx

    def is_int(i):
        return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))

    def is_array(i):
        return isinstance(i, list) or (isinstance(i, np.ndarray) and i.ndim > 0)

    if not (any(is_int(i) for i in items) and any(is_array(i) for i in items)):
        return None
    used = sum(np.asarray(i).ndim if is_array(i) and np.asarray(i).dtype == bool else
               0 if i is None or i is Ellipsis else 1 for i in items)
    first, rest = [], []
    for i in items:
        if i is Ellipsis:
            first.extend([slice(None)] * (ndim - used))
            rest.extend([slice(None)] * (ndim - used))
        elif i is None:
            rest.append(None)
        elif is_int(i):
            first.append(i)
        else:  # a slice or an array: kept for the second step (a bool mask spans its dims)
            first.extend([slice(None)] * (np.asarray(i).ndim if is_array(i) and np.asarray(i).dtype == bool else 1))
            rest.append(i)
    return tuple(first), tuple(rest)


def is_basic(idx):
    """True if ``idx`` selects a view (ints, slices, None, Ellipsis only)."""
    items = idx if isinstance(idx, tuple) else (idx,)
    return all(isinstance(i, (int, slice, type(None), type(Ellipsis))) and not isinstance(i, bool) for i in items)


def basic_view(x, idx):
    """``x[idx]`` for a basic index, always a view (NumPy gives ``x[0, 1]`` as a scalar copy;
    a trailing ``...`` keeps a 0-d view)."""
    out = x[idx]
    if type(out) is not type(x):
        out = x[(idx if isinstance(idx, tuple) else (idx,)) + (Ellipsis,)]
    return out


class Index(Function):
    _backward_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, a, idx, *, saved=()):
        # ``idx`` holds the arrays of the index tensors in ``saved``: version-checked
        ctx.save_for_backward(*saved)
        ctx.in_shape, ctx.idx = a._data.shape, idx
        if is_basic(idx):  # a view: shares memory and version counter with ``a``
            return _utils._Tensor._make(basic_view(a._data, idx), False, None, 0, a._version_counter)
        return a._data[idx]

    @staticmethod
    def backward(ctx, grad):
        return IndexBackward.apply(grad, ctx.in_shape, ctx.idx), None

    jvp = auto_linear(0)  # (tangents.py: the same indexing of the tangent)


class IndexBackward(Function):
    """Scatter-add ``grad`` into zeros of ``shape`` at ``idx`` (differentiable too).

    PyTorch's ``index_backward`` (``zeros.index_put_(idx, grad, accumulate=True)``), so its node
    is ``IndexPutImplBackward0`` (PyTorch's slices and selects have their own backward ops).
    """

    _backward_name = "IndexPutImplBackward0"
    _profiler_name = "aten::_index_put_impl_"  # its torch.profiler event (not derived from the node name)

    @staticmethod
    def forward(ctx, grad, shape, idx):
        xp = backend.get_array_module(grad._data)
        ctx.idx = idx
        out = xp.zeros(shape, dtype=grad._data.dtype)
        if is_basic(idx):
            out[idx] = grad._data
        else:
            (np.add.at if xp is np else xp.add.at)(out, idx, grad._data)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad[ctx.idx], None, None

    jvp = auto_linear(0)


def basic_index_steps(idx, ndim):
    """A basic index as PyTorch takes it, left to right: ``("unsqueeze", dim)`` for each
    ``None`` (a new dim, ``Unsqueeze``), ``("index", part)`` for each run of ints and slices
    between them that changes something (one view, :func:`basic_index_class`).

    ``x[1:, None]`` is a slice, then an unsqueeze at dim 1; ``x[None]`` an unsqueeze only.
    """
    items = idx if isinstance(idx, tuple) else (idx,)
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    if not any(i is None for i in items) or used > ndim:  # no new dim (or NumPy's "too many indices")
        return [("index", idx)]
    steps, done, run = [], 0, []  # done: the dims of the result so far
    for item in items + (None,):  # a last None closes the last run
        if item is not None:
            run.extend([slice(None)] * (ndim - used) if item is Ellipsis else [item])
            continue
        if any(i != slice(None) for i in run):
            steps.append(("index", (slice(None),) * done + tuple(run)))
        done += sum(1 for i in run if isinstance(i, slice))  # an int removes its dim
        steps.append(("unsqueeze", done))
        done, run = done + 1, []
    return steps[:-1]  # (the closing None is no step)


def basic_index_class(idx):
    """PyTorch names a basic-indexing node after the last step it took.

    ``x[0]`` is a select, ``x[1:]`` a slice and ``x[...]`` an alias; full
    slices ``:`` are skipped (a ``None`` is an unsqueeze: :func:`basic_index_steps`).
    """
    cls = Alias
    for item in idx if isinstance(idx, tuple) else (idx,):
        if isinstance(item, int):
            cls = Select
        elif isinstance(item, slice) and item != slice(None):
            cls = Slice
    return cls


class Select(Index):
    _backward_name = "SelectBackward0"


class Slice(Index):
    _backward_name = "SliceBackward0"


class Alias(Index):
    _backward_name = "AliasBackward0"


def _check_index_tensor(index, name):
    if index._data.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def _check_same_rank(a, index, name):
    if index._data.ndim != a._data.ndim and not (index._data.ndim <= 1 and a._data.ndim <= 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {name} tensor")


class Gather(Function):
    """``x.gather(dim, index)``: out[i][j] = x[i][index[i][j]] (for dim=1)."""

    _backward_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):

        _check_index_tensor(index, "gather")
        _check_same_rank(a, index, "input")
        x, idx = a._data, index._data
        axis = wrap_dim(dim, x.ndim)
        ctx.in_shape, ctx.axis = x.shape, axis
        ctx.save_for_backward(a, index)  # PyTorch saves the input, though only its shape is used
        if x.ndim == 0:
            return x.reshape(1)[idx.reshape(-1)].reshape(idx.shape)
        # take_along_axis needs index and input to agree off ``axis``: crop the input
        crop = tuple(slice(0, s) if d != axis else slice(None) for d, s in enumerate(idx.shape))
        return _take_along(x[crop], idx, axis)

    @staticmethod
    def backward(ctx, grad):
        _, index = ctx.saved_tensors
        return grad.new_zeros(ctx.in_shape).scatter_add(ctx.axis, index, grad), None, None

    jvp = auto_linear(0)


class Take(Function):
    """``x.take(index)``: the elements of the flattened ``x`` at ``index`` (negative counts from the
    end), shaped like ``index``.  The gradient adds back at those positions (PyTorch's ``TakeBackward0``,
    which keeps the input and the index)."""

    _backward_name = "TakeBackward0"
    _saved_attrs = {"index": Saved(1), "self": Saved(0)}

    @staticmethod
    def forward(ctx, a, index):
        x, idx = a._data.reshape(-1), index._data
        if idx.dtype != np.int64:
            raise RuntimeError(f"take(): Expected a long tensor for index, but got {_dtype.scalar_type_name(index.dtype)}")
        if x.size == 0 and idx.size:
            raise IndexError("take(): tried to take from an empty tensor")
        outside = idx[(idx < -x.size) | (idx >= x.size)]
        if outside.size:
            raise IndexError(f"out of range: tried to access index {int(outside[0])} on a tensor of {x.size} elements.")
        ctx.save_for_backward(a, index)
        return x[idx]

    @staticmethod
    def backward(ctx, grad):
        a, index = ctx.saved_tensors
        flat = index.reshape(-1) % max(a.numel(), 1)  # (negative positions counted from the end)
        return grad.new_zeros(a.numel()).index_add(0, flat, grad.reshape(-1)).reshape(a.shape), None

    jvp = auto_linear(0)


def _take_along(x, idx, axis):
    xp = backend.get_array_module(x)
    if idx.size and (idx.min() < -x.shape[axis] or idx.max() >= x.shape[axis]):
        raise RuntimeError(f"index {int(idx.max())} is out of bounds for dimension {axis} with size {x.shape[axis]}")
    return xp.take_along_axis(x, idx, axis)


def _scatter_positions(shape, index, axis):
    """The full index tuple that ``scatter`` writes to: index along ``axis``, position elsewhere."""
    xp = backend.get_array_module(index)
    grids = list(xp.indices(index.shape, sparse=True))
    grids[axis] = index
    return tuple(grids)


def _check_index_fits(self_shape, index_shape, src_shape, axis):
    """PyTorch's check: ``index`` no larger than ``src`` anywhere, nor than ``self`` off ``axis``."""
    for d, n in enumerate(index_shape):
        too_big_for_self = d != axis and d < len(self_shape) and n > self_shape[d]
        src_size = src_shape[d] if d < len(src_shape) else 1  # a 0-d src counts as size 1 in every dim
        if too_big_for_self or n > src_size:
            raise RuntimeError(
                f"Expected index {list(index_shape)} to be no larger than self {list(self_shape)} apart from "
                f"dimension {axis} and to be no larger size than src {list(src_shape)}"
            )


def _read_src_sizes(self_shape, index_shape, src_shape, axis):
    """PyTorch's shape check reads ``src.size(d)`` for each index dim (after the index fit ``self``),
    up to the first that is too small: a ``src`` with fewer dims raises its IndexError there."""
    if not src_shape or any(d != axis and d < len(self_shape) and n > self_shape[d] for d, n in enumerate(index_shape)):
        return  # a 0-d src counts as size 1 in every dim
    for d, n in enumerate(index_shape):
        if n > src_shape[wrap_dim(d, len(src_shape))]:
            return


def _src_grad(grad, axis, index, src_shape):
    """The gradient of scatter's ``src``: the gradient where each element went.  A 0-d ``src`` (one
    element, index of size 1) gets it as 0-d, as PyTorch's engine sums a gradient to its input's shape."""
    gs = grad.gather(axis, index)
    return gs.reshape(()) if src_shape == () else gs


class Scatter(Function):
    """``x.scatter(dim, index, src)``: out[i][index[i][j]] = src[i][j] (dim=1).

    ``src`` is a tensor (``ScatterBackward0``) or a number (``ScatterBackward1``).
    """

    _backward_name = "ScatterBackward0"
    writes_scattered = True  # in place, a source sharing memory with the target is refused (inplace.py)

    @staticmethod
    def forward(ctx, a, dim, index, src, reduce=None):

        _check_index_tensor(index, "scatter")
        _check_same_rank(a, index, "self")
        x, idx = a._data, index._data
        axis = wrap_dim(dim, x.ndim)
        if isinstance(src, _utils._Tensor):  # else NumPy's ValueError from the crop below
            _read_src_sizes(x.shape, idx.shape, src._data.shape, axis)
            _check_same_rank(src, index, "src")
            _check_index_fits(x.shape, idx.shape, src._data.shape, axis)
        ctx.axis = axis
        ctx.save_for_backward(index)
        out = x.reshape(1).copy() if x.ndim == 0 else x.copy()  # a 0-d tensor: one element along dim 0
        idx = idx.reshape(-1) if x.ndim == 0 else idx
        pos = _scatter_positions(out.shape, idx, axis)
        if isinstance(src, _utils._Tensor):
            crop = tuple(slice(0, s) for s in idx.shape)
            values = src._data.reshape(-1)[crop] if src._data.ndim == 0 else src._data[crop]
            values = values.astype(x.dtype, copy=False)
        else:
            values = src
        if reduce == "add":
            (np.add.at)(out, pos, values)
        elif reduce == "multiply":
            np.multiply.at(out, pos, values)
        else:
            out[pos] = values
        ctx.src_shape = src._data.shape if isinstance(src, _utils._Tensor) else None
        return out.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        # overwritten positions get no gradient; src gets the gradient of where it went
        (index,) = ctx.saved_tensors
        ga = grad.scatter(ctx.axis, index, 0.0) if ctx.needs_input_grad[0] else None
        gs = None
        if ctx.src_shape is not None and ctx.needs_input_grad[3]:
            gs = _src_grad(grad, ctx.axis, index, ctx.src_shape)
            if tuple(gs.shape) != ctx.src_shape:  # src larger than index: pad with zeros
                full = gs.new_zeros(ctx.src_shape)
                full[tuple(slice(0, s) for s in gs.shape)] = gs
                gs = full
        return ga, None, None, gs, None

    jvp = auto_linear(0, 3)  # da with dsrc scattered in (0 for a number)


class ScatterValue(Scatter):
    _backward_name = "ScatterBackward1"


class ScatterAdd(Function):
    """``x.scatter_add(dim, index, src)``: repeated indices add up."""

    _backward_name = "ScatterAddBackward0"
    _autocast_op = "scatter_add"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    writes_scattered = True  # in place, a source sharing memory with the target is refused (inplace.py)

    @staticmethod
    def forward(ctx, a, dim, index, src):
        return Scatter.forward(ctx, a, dim, index, src, "add")

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        ga = grad if ctx.needs_input_grad[0] else None
        gs = _src_grad(grad, ctx.axis, index, ctx.src_shape) if ctx.needs_input_grad[3] else None
        return ga, None, None, gs

    jvp = auto_linear(0, 3)


class IndexAdd(Function):
    """``x.index_add(dim, index, source, alpha=a)``: ``x[..., index[i], ...] += a * source[..., i, ...]``.

    Repeated indices add up.  The gradient of ``x`` is the incoming gradient, that of
    ``source`` the gradient at the rows it was added to, times ``alpha``.
    """

    _backward_name = "IndexAddBackward0"
    writes_scattered = True  # in place, a source sharing memory with the target is refused (inplace.py)

    @staticmethod
    def forward(ctx, a, dim, index, source, alpha=1):
        x, idx, src = a._data, index._data, source._data
        axis = wrap_dim(dim, x.ndim)
        _check_index_add(x, axis, idx, src, alpha)
        ctx.axis, ctx.alpha = axis, alpha
        # PyTorch's formula reads ``source`` (``expand_as(source)``), so it saves it when its gradient
        # is needed: writing ``source`` in place afterwards makes backward refuse
        ctx.save_for_backward(index, source if ctx.needs_input_grad[3] else None)
        out = x.copy()
        rows = (slice(None),) * axis + (idx.reshape(-1),)
        if x.ndim == 0:  # a 0-d tensor is one row
            out, rows, src = out.reshape(1), (idx.reshape(-1),), src.reshape(1)
        xp = backend.get_array_module(out)
        (np.add.at if xp is np else xp.add.at)(out, rows, src * alpha if alpha != 1 else src)
        return out.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        index, source = ctx.saved_tensors
        gs = None
        if ctx.needs_input_grad[3]:
            gs = grad.reshape(1) if grad.ndim == 0 else grad
            gs = gs.index_select(ctx.axis, index.reshape(-1)).reshape(source.shape)
            if ctx.alpha != 1:
                gs = gs * ctx.alpha
        return grad, None, None, gs, None

    jvp = auto_linear(0, 3)


def _check_index_add(x, axis, idx, src, alpha=1):
    """PyTorch's checks of ``index_add_``, in its order (NumPy would wrap negative indices or broadcast)."""
    if idx.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
                         f"Long and size: {list(idx.shape)}")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{_dtype.scalar_type_name(_dtype.from_numpy_dtype(idx.dtype))}")
    if src.dtype != x.dtype:
        name = _dtype.scalar_type_name
        raise RuntimeError(f"index_add_(): self ({name(_dtype.from_numpy_dtype(x.dtype))}) and source "
                           f"({name(_dtype.from_numpy_dtype(src.dtype))}) must have the same scalar type")
    if not (axis == 0 or axis < src.ndim):
        raise RuntimeError(f"index_add_(): Indexing dim {axis} is out of bounds of the source tensor with dim {src.ndim}")
    n_src = src.shape[axis] if src.ndim else 1
    if idx.size != n_src:
        if not src.ndim:  # PyTorch's message reads source.size(dim) of the 0-d source, which raises this
            raise IndexError(f"Dimension specified as {axis} but tensor has no dimensions")
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                           f"({n_src}), for dim: {axis}")
    x_rest, s_rest = list(x.shape), list(src.shape)
    if x.ndim and src.ndim:  # the other dims must agree (a 0-d tensor's shape is compared whole)
        del x_rest[axis], s_rest[axis]
    if x_rest != s_rest:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(x.shape)} source.shape = {list(src.shape)}")
    size = x.shape[axis] if x.ndim else 1
    if src.size == 0:  # PyTorch's kernel checks each index as it adds its (here empty) slice
        return
    bad = idx[(idx < 0) | (idx >= size)]
    # PyTorch's kernel for one row of values, and the one that scales by alpha != 1 first, check as
    # index_select does
    if bad.size and (x.ndim <= 1 or alpha != 1):
        raise IndexError("index out of range in self")
    if bad.size:
        raise RuntimeError(f"index {int(bad[0])} is out of bounds for dimension {axis} with size {size}")


class MaskedFill(Function):
    """``x.masked_fill(mask, value)``: ``value`` where ``mask`` is True."""

    _backward_name = "MaskedFillBackward0"
    skips_overlap_check = True  # PyTorch writes into an expand() too (with a deprecation warning)
    writes_where_masked = True  # and there only where the mask is True (inplace._written_part)

    @staticmethod
    def forward(ctx, a, mask, value):

        m = mask._data
        if m.dtype.kind != "b":
            raise RuntimeError(
                "masked_fill_ only supports boolean masks, but got mask with dtype "
                f"{_dtype.cpp_type_name(mask.dtype)}"
            )
        v = value
        if isinstance(value, _utils._Tensor):
            if value._data.ndim != 0:
                raise RuntimeError(
                    "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                    f"{value._data.ndim} dimension(s)."
                )
            v = value._data
        x = a._data
        out_shape = np.broadcast_shapes(x.shape, m.shape)
        if out_shape != x.shape:
            raise RuntimeError(
                f"The size of tensor a ({x.shape[-1]}) must match the size of tensor b ({m.shape[-1]}) "
                f"at non-singleton dimension {len(out_shape) - 1}"
            )
        xp = backend.get_array_module(x)
        ctx.save_for_backward(mask)
        ctx.value_is_tensor = isinstance(value, _utils._Tensor)
        v = v if ctx.value_is_tensor else _utils.checked_scalar(v, x.dtype)
        return xp.where(m, xp.asarray(v, dtype=x.dtype), x)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        ga = grad.masked_fill(mask, 0) if ctx.needs_input_grad[0] else None
        gv = None
        if ctx.value_is_tensor and ctx.needs_input_grad[2]:
            gv = (grad * mask).sum()
        return ga, None, gv

    jvp = auto_linear(0, 2)  # da with dvalue where the mask holds (0 for a number)


class MaskedFillTensor(MaskedFill):
    """``masked_fill`` with a 0-dim tensor value (which receives a gradient)."""

    _backward_name = "MaskedFillBackward1"


class IndexSelect(Function):
    """``x.index_select(dim, index)``: whole slices picked by a 1-D index (may repeat)."""

    _backward_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx, a, axis, index):
        if index._data.ndim > 1:
            raise IndexError("index_select(): Index is supposed to be a vector")
        if index._data.dtype.kind not in "iu":
            raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
        ctx.axis, ctx.in_shape = axis, a._data.shape
        ctx.save_for_backward(index)
        flat = index._data.reshape(-1)
        size = a._data.shape[axis] if a._data.ndim else 1
        if a._data.ndim == 0 and flat.size != 1:  # a 0-d tensor: one element, picked by one index
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {flat.size} value(s)")
        if flat.size and (flat.min() < 0 or flat.max() >= size):  # no negative positions, unlike x[index]
            raise IndexError("index out of range in self")
        if a._data.ndim == 0:
            return a._data.copy()
        return a._data.take(flat, axis=axis)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        idx = (slice(None),) * ctx.axis + (index._data.reshape(-1),)
        g = grad if ctx.in_shape else grad.reshape(-1)
        out = IndexBackward.apply(g, ctx.in_shape or (1,), idx)
        return (out if ctx.in_shape else out.reshape(())), None, None

    jvp = auto_linear(0)


class MaskedSelect(Function):
    """``x.masked_select(mask)``: the entries where the (broadcast) mask is True, as 1-D."""

    _backward_name = "MaskedSelectBackward0"

    @staticmethod
    def forward(ctx, a, mask):
        x, m = a._data, mask._data
        if m.dtype.kind != "b":
            raise RuntimeError("masked_select: expected BoolTensor for mask")
        try:
            shape = np.broadcast_shapes(x.shape, m.shape)
        except ValueError:
            raise broadcast_error(x, m) from None
        ctx.in_shape, ctx.shape = x.shape, shape
        ctx.save_for_backward(a, mask)  # PyTorch saves both, though only the mask is read
        return np.broadcast_to(x, shape)[np.broadcast_to(m, shape)]

    @staticmethod
    def backward(ctx, grad):
        _, mask = ctx.saved_tensors
        full = IndexBackward.apply(grad, ctx.shape, np.broadcast_to(mask._data, ctx.shape))
        return full.sum_to_size(ctx.in_shape), None

    jvp = auto_linear(0)
