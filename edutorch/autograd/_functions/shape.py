"""Shape ops: view/reshape, transpose/permute, expand.  Gradients undo the move.

NumPy returns views for these where it can, as PyTorch does, so a view shares
memory (and, in edutorch, the version counter) with its base.
"""
import numpy as np

from ..function import Function
from .._saved_attrs import int64
from . import utils as _utils  # _utils._Tensor: edutorch.Tensor, without an import cycle
from .tangents import auto_linear, zero_if_missing
from .utils import wrap_dim
from .utils import broadcast_to
from .indexing import Slice
from ... import _dtype, backend
from .utils import _device_error


def _infer_shape(shape, numel, in_shape):
    """Resolve one ``-1`` in ``shape``; PyTorch's error if the sizes do not fit."""
    shape = tuple(int(s) for s in shape)
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class View(Function):
    _backward_name = "ViewBackward0"
    _saved_attrs = {"self_sym_sizes": lambda ctx: ctx.in_shape}  # grad_fn._saved_self_sym_sizes

    @staticmethod
    def forward(ctx, a, shape):

        x = a._data
        ctx.in_shape = x.shape
        try:
            new = _infer_and_view(x, shape)
        except ValueError:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            ) from None
        # a view shares the base's version counter: in-place on one is seen on both
        return _utils._Tensor._make(new, False, None, 0, a._version_counter)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None

    jvp = auto_linear(0)  # (tangents.py: the same view of the tangent)


class Permute(Function):
    _backward_name = "PermuteBackward0"
    _saved_attrs = {"dims": lambda ctx: int64(ctx.given_dims)}  # as the caller gave them (_saved_attrs.py)

    @staticmethod
    def forward(ctx, a, dims):
        ctx.given_dims = dims

        dims = tuple(wrap_dim(d, a._data.ndim) for d in dims)
        if sorted(dims) != list(range(a._data.ndim)):
            raise RuntimeError(
                f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                f"length of the desired ordering of dimensions i.e. input.dim() = {a._data.ndim} is "
                f"not equal to len(dims) = {len(dims)}"
                if len(dims) != a._data.ndim else "permute(): duplicate dims are not allowed."
            )
        ctx.dims = dims
        return _utils._Tensor._make(a._data.transpose(dims), False, None, 0, a._version_counter)

    @staticmethod
    def backward(ctx, grad):
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return grad.permute(inverse), None

    jvp = auto_linear(0)


class Transpose(Function):
    _backward_name = "TransposeBackward0"
    # as the caller gave them (_saved_attrs.py)
    _saved_attrs = {"dim0": lambda ctx: int64(ctx.given_dims[0]), "dim1": lambda ctx: int64(ctx.given_dims[1])}

    @staticmethod
    def forward(ctx, a, dim0, dim1):
        ctx.given_dims = (dim0, dim1)

        n = a._data.ndim
        ctx.dims = (wrap_dim(dim0, n), wrap_dim(dim1, n))
        out = a._data.swapaxes(*ctx.dims) if n > 1 else a._data
        return _utils._Tensor._make(out, False, None, 0, a._version_counter)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None

    jvp = auto_linear(0)


def expand_strides(shape, strides, target):
    """PyTorch's strides for ``expand`` of an array of ``shape``/``strides`` to ``target`` (ATen's
    ``inferExpandGeometry``, in bytes as NumPy's): a dim that grows from size 1 repeats its element
    (stride 0); a new leading dim of size 1 gets the extent of the dim after it; a 0-d tensor gets
    stride 0 everywhere.  (NumPy gives every new dim stride 0; PyTorch's overlap checks compare them.)"""
    if not shape:
        return (0,) * len(target)
    lead = len(target) - len(shape)
    out = [0] * len(target)
    for i in reversed(range(len(target))):
        size, stride = (shape[i - lead], strides[i - lead]) if i >= lead else (1, target[i + 1] * out[i + 1])
        out[i] = 0 if size != target[i] else stride
    return tuple(out)


def _expanded_view(x, target):
    """``x`` seen with shape ``target``, with ``expand_strides``.

    The view can be written, as PyTorch's: the in-place ops themselves refuse a
    write where several elements share one memory location (``inplace.py``),
    except those PyTorch lets through (``fill_``...).  (CuPy: its broadcast view.)
    """
    if type(x) is not np.ndarray:
        return broadcast_to(x, target)
    strides = expand_strides(x.shape, x.strides, target)
    return np.lib.stride_tricks.as_strided(x, target, strides, writeable=x.flags.writeable)


class Expand(Function):
    _backward_name = "ExpandBackward0"
    _saved_attrs = {"self_sym_sizes": lambda ctx: ctx.in_shape}  # grad_fn._saved_self_sym_sizes

    @staticmethod
    def forward(ctx, a, shape):

        x = a._data
        ctx.in_shape = x.shape
        lead = len(shape) - x.ndim
        if lead < 0:
            raise RuntimeError(
                f"expand(torch.FloatTensor{{{list(x.shape)}}}, size={list(shape)}): the number of "
                "sizes provided "
                f"({len(shape)}) must be greater or equal to the number of dimensions in the tensor ({x.ndim})"
            )
        target = tuple(x.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
        for i, s in enumerate(x.shape):
            if s != 1 and s != target[lead + i]:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target[lead + i]}) must match the existing "
                    f"size ({s}) at non-singleton dimension {lead + i}.  Target sizes: "
                    f"{list(shape)}.  Tensor sizes: {list(x.shape)}"
                )
        return _utils._Tensor._make(_expanded_view(x, target), False, None, 0, a._version_counter)

    @staticmethod
    def backward(ctx, grad):
        return grad.sum_to_size(ctx.in_shape), None

    jvp = auto_linear(0)


class UnsafeView(View):
    """``reshape`` that had to copy (the input was not contiguous); a reshape that can view
    is a ``View`` (``ViewBackward0``), as in PyTorch."""

    _backward_name = "UnsafeViewBackward0"
    _saved_attrs = View._saved_attrs

    @staticmethod
    def forward(ctx, a, shape):
        x = a._data
        ctx.in_shape = x.shape
        return x.reshape(_infer_shape(shape, x.size, x.shape))


def unsqueezed(x, d):
    """Array ``x`` with a new dim of size 1 at ``d``, with PyTorch's stride for it (the extent of the
    dim after it, the item size at the end), which later layouts and overlap checks read."""
    if plain_c_order(x):  # NumPy's reshape gives the new dim PyTorch's stride
        return x.reshape(x.shape[:d] + (1,) + x.shape[d:])
    new = x[(slice(None),) * d + (None,)]  # NumPy's None: a new axis of stride 0
    if type(x) is not np.ndarray:
        return new
    step = x.shape[d] * x.strides[d] if d < x.ndim else x.itemsize
    return with_strides(new, x.strides[:d] + (step,) + x.strides[d:])


class Unsqueeze(Function):
    """``x.unsqueeze(dim)``, and each ``None`` of an index (``x[:, None]``): a new dim of size 1
    at ``dim``, a view.  Its gradient squeezes that dim away again."""

    _backward_name = "UnsqueezeBackward0"
    _saved_attrs = {"dim": lambda ctx: int64(ctx.dim)}  # as the caller gave it (_saved_attrs.py)

    @staticmethod
    def forward(ctx, a, dim):
        x = a._data
        ctx.dim = dim
        new = unsqueezed(x, wrap_dim(dim, x.ndim + 1))
        return _utils._Tensor._make(new, False, None, 0, a._version_counter)

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None

    jvp = auto_linear(0)  # (tangents.py: the same view of the tangent)


class Squeeze(View):
    """``squeeze()`` with no dim (``SqueezeBackward0``)."""

    _backward_name = "SqueezeBackward0"
    _saved_attrs = View._saved_attrs


class SqueezeDim(View):
    _backward_name = "SqueezeBackward1"


class SqueezeDims(View):
    _backward_name = "SqueezeBackward2"


class T(Transpose):
    """``x.t()``: transpose of a matrix (``TBackward0``)."""

    _backward_name = "TBackward0"

    @staticmethod
    def forward(ctx, a, dim0, dim1):
        ctx.dims = (dim0, dim1)  # Tensor.t() passes valid dims: (0, 1), or (0, 0) below 2-D
        x = a._data
        return _utils._Tensor._make(x.T, False, None, 0, a._version_counter)  # .T of <= 2-D


class Unfold(Function):
    """``x.unfold(dim, size, step)``: a view of the windows ``x[..., i*step : i*step+size, ...]`` along
    ``dim``, the window as a new last dim.

    Overlapping windows (``step < size``) show one memory location through several
    elements: that view is read-only (every write through it is refused: PyTorch would leave
    the result to memory order).
    The gradient adds each window's gradient back at its positions (``index_add``).
    """

    _backward_name = "UnfoldBackward0"

    @staticmethod
    def forward(ctx, a, dim, size, step):
        x = a._data
        axis = wrap_dim(dim, max(x.ndim, 1))
        length = x.shape[axis] if x.ndim else 1  # a 0-d tensor: one element along dim 0
        if step <= 0:
            raise RuntimeError(f"step is {step} but must be > 0")
        if size < 0:
            raise RuntimeError(f"size is {size} but must be >= 0")
        if size > length:
            raise RuntimeError(f"maximum size for tensor at dimension {axis} is {length} but size is {size}")
        n = (length - size) // step + 1
        ctx.args = (x.shape, axis, size, step, n)
        if x.ndim == 0:  # PyTorch: the one window, shape (size,)
            return _utils._Tensor._make(x.reshape(1)[:size], False, None, 0, a._version_counter)
        shape = x.shape[:axis] + (n,) + x.shape[axis + 1:] + (size,)
        strides = x.strides[:axis] + (x.strides[axis] * step,) + x.strides[axis + 1:] + (x.strides[axis],)
        overlapping = step < size and n > 1
        out = np.lib.stride_tricks.as_strided(x, shape, strides, writeable=x.flags.writeable and not overlapping)
        return _utils._Tensor._make(out, False, None, 0, a._version_counter)

    @staticmethod
    def backward(ctx, grad):
        in_shape, axis, size, step, n = ctx.args
        if not in_shape:
            return grad.sum(), None, None, None
        positions = (np.arange(n)[:, None] * step + np.arange(size)).reshape(-1)  # window i, element j
        windows = grad.movedim(-1, axis + 1).flatten(axis, axis + 1)  # (..., n * size, ...)
        zeros = grad.new_zeros(in_shape)
        return zeros.index_add(axis, _utils._Tensor._make(positions), windows), None, None, None

    jvp = auto_linear(0)


# In-place forms (``y.unsqueeze_(0)``...): the same view, under PyTorch's node names for them.
class UnsqueezeInplace(Unsqueeze):
    _backward_name = "UnsqueezeBackward1"
    _saved_attrs = Unsqueeze._saved_attrs


class SqueezeInplace(Squeeze):
    _backward_name = "SqueezeBackward3"


class SqueezeDimInplace(SqueezeDim):
    _backward_name = "SqueezeBackward4"


class SqueezeDimsInplace(SqueezeDims):
    _backward_name = "SqueezeBackward5"


class TInplace(T):
    _backward_name = "TBackward1"


class TransposeInplace(Transpose):
    _backward_name = "TransposeBackward1"


class Repeat(Function):
    """``x.repeat(*sizes)``: tile; the gradient sums over the copies."""

    _backward_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx, a, sizes):
        x = a._data
        if len(sizes) < x.ndim:
            raise RuntimeError(
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
            )
        from ... import _creation

        lead = len(sizes) - x.ndim
        ctx.in_shape, ctx.sizes = x.shape, tuple(sizes)
        shape = [r * s for r, s in zip(sizes, (1,) * lead + x.shape)]
        for s in shape:  # PyTorch's errors, not NumPy's MemoryError/ValueError
            if s >= 2**63:
                raise RuntimeError(f"IntArrayRef contains an int that cannot be represented as a SymInt: "
                                   f"{(s + 2**63) % 2**64 - 2**63}")
        _creation.checked_shape("repeat", shape, x.dtype)
        with _creation.allocating(_creation.nbytes_of(shape, x.dtype)):
            return _np(x).tile(x.reshape((1,) * lead + x.shape), sizes)

    @staticmethod
    def backward(ctx, grad):
        # split every axis into (copies, original size) and sum over the copies
        lead = len(ctx.sizes) - len(ctx.in_shape)
        full = (1,) * lead + tuple(ctx.in_shape)
        split = []
        for r, s in zip(ctx.sizes, full):
            split += [r, s]
        g = grad.reshape(split)
        g = g.sum(tuple(range(0, 2 * len(full), 2))) if full else g
        return g.reshape(ctx.in_shape), None

    jvp = auto_linear(0)


def _np(x):
    return backend.get_array_module(x)


def _check_same_device(tensors):
    kinds = {type(t._data) for t in tensors}
    if len(kinds) > 1:
        first = tensors[0]._data
        other = next(t._data for t in tensors if type(t._data) is not type(first))
        raise RuntimeError(_device_error(first, other))


def _join_tangents(cls, ctx, _, *tangents):
    """The tangent of ``cat``/``stack``, linear in every tensor: the tangents joined the same way
    (zeros for a tensor without one)."""
    dim, *tensors = ctx.primals
    return cls.apply(dim, *[zero_if_missing(t, d) for t, d in zip(tensors, tangents)])


class Cat(Function):
    """``torch.cat(tensors, dim)``: the gradient is cut back into the pieces."""

    _backward_name = "CatBackward0"
    _autocast_op = "cat"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"dim": lambda ctx: int64(ctx.dim)}  # as the caller gave it (_saved_attrs.py)

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim

        if not tensors:
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        _check_same_device(tensors)
        # legacy rule: 1-D empty tensors are skipped (and when all are, ``dim`` is not even checked)
        parts = [t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)]
        ref = (parts or tensors)[0]._data
        if ref.ndim == 0:
            raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
        axis = wrap_dim(dim, ref.ndim) if parts else 0
        parts = parts or list(tensors[:1])
        for i, t in enumerate(tensors):
            x = t._data
            if x.ndim == 1 and x.shape[0] == 0:
                continue
            if x.ndim != ref.ndim:
                raise RuntimeError(
                    f"Tensors must have same number of dimensions: got {ref.ndim} and {x.ndim}"
                )
            for d in range(ref.ndim):
                if d != axis and x.shape[d] != ref.shape[d]:
                    raise RuntimeError(
                        f"Sizes of tensors must match except in dimension {axis}. Expected size "
                        f"{ref.shape[d]} but got size {x.shape[d]} for tensor number {i} in the list."
                    )
        dt = _dtype.result_type(*parts).np
        ctx.axis = axis
        ctx.sizes = [t._data.shape[axis] if t._data.ndim == ref.ndim else 0 for t in tensors]
        ctx.shapes = [t._data.shape for t in tensors]
        ctx.dtypes = [t._data.dtype for t in tensors]
        return _np(ref).concatenate([t._data.astype(dt, copy=False) for t in parts], axis=axis)

    @staticmethod
    def backward(ctx, grad):
        grads, start = [None], 0
        for size, shape, dt, need in zip(ctx.sizes, ctx.shapes, ctx.dtypes, ctx.needs_input_grad[1:]):
            if not need:
                piece = None
            elif shape == (0,):  # a 1-D empty input (skipped by the legacy rule) gets an empty gradient
                piece = grad.new_zeros((0,))
            else:
                piece = grad.narrow(ctx.axis, start, size)
            if piece is not None and piece._data.dtype != dt:
                piece = piece.to(_dtype.from_numpy_dtype(dt))
            grads.append(piece)
            start += size
        return tuple(grads)

    jvp = classmethod(_join_tangents)


class Stack(Function):
    """``torch.stack(tensors, dim)``: a new axis; the gradient is unbound along it."""

    _backward_name = "StackBackward0"
    _autocast_op = "stack"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = Cat._saved_attrs

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim

        if not tensors:
            raise RuntimeError("stack expects a non-empty TensorList")
        _check_same_device(tensors)
        ref = tensors[0]._data
        for i, t in enumerate(tensors):
            if t._data.shape != ref.shape:
                raise RuntimeError(
                    f"stack expects each tensor to be equal size, but got {list(ref.shape)} at entry 0 "
                    f"and {list(t._data.shape)} at entry {i}"
                )
        axis = wrap_dim(dim, ref.ndim + 1)
        dt = _dtype.result_type(*tensors).np
        ctx.axis = axis
        return _np(ref).stack([t._data.astype(dt, copy=False) for t in tensors], axis=axis)

    @staticmethod
    def backward(ctx, grad):
        return (None,) + tuple(g if need else None for g, need in
                               zip(grad.unbind(ctx.axis), ctx.needs_input_grad[1:]))

    jvp = classmethod(_join_tangents)


class Narrow(Slice):
    """``x.narrow(dim, start, length)``: the slice ``start:start + length`` along ``dim``, one
    ``Slice`` (``SliceBackward0``, as PyTorch's narrow is its slice); only the op's arguments differ."""

    _backward_name = "SliceBackward0"
    _profiler_name = "aten::narrow"  # its torch.profiler event (not derived from the node name)

    @staticmethod
    def forward(ctx, a, axis, start, length):
        return Slice.forward(ctx, a, (slice(None),) * axis + (slice(start, start + length),))

    @staticmethod
    def backward(ctx, grad):
        return Slice.backward(ctx, grad)[0], None, None, None


class Split(Function):
    """``split``/``chunk``: several views; the gradient pieces are concatenated back."""

    _backward_name = "SplitBackward0"

    @staticmethod
    def forward(ctx, a, sizes, axis):

        x, outs, start = a._data, [], 0
        for size in sizes:
            idx = (slice(None),) * axis + (slice(start, start + size),)
            outs.append(_utils._Tensor._make(x[idx], False, None, 0, a._version_counter))
            start += size
        ctx.axis, ctx.in_shape, ctx.dtype = axis, x.shape, x.dtype
        ctx.sizes = sizes
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        ref = next(g for g in grads if g is not None)
        pieces = []
        for g, size in zip(grads, ctx.sizes):
            if g is None:  # an output that was not used: zeros of its shape
                shape = list(ctx.in_shape)
                shape[ctx.axis] = size
                g = ref.new_zeros(shape)
            pieces.append(g)
        return Cat.apply(ctx.axis, *pieces), None, None

    jvp = auto_linear(0)


class SplitWithSizes(Split):
    _backward_name = "SplitWithSizesBackward0"


class Unbind(Function):
    """``x.unbind(dim)``: a tuple of slices; the gradient is stacked back."""

    _backward_name = "UnbindBackward0"

    @staticmethod
    def forward(ctx, a, axis):

        x = a._data
        ctx.axis, ctx.in_shape, ctx.dtype = axis, x.shape, x.dtype
        # (``...`` last: a 1-d input's elements are 0-d views, not NumPy scalars, which are copies)
        return tuple(_utils._Tensor._make(x[(slice(None),) * axis + (i, Ellipsis)], False, None, 0,
                                          a._version_counter)
                     for i in range(x.shape[axis]))

    @staticmethod
    def backward(ctx, *grads):
        ref = next(g for g in grads if g is not None)
        grads = [g if g is not None else ref.new_zeros(ref.shape) for g in grads]
        return Stack.apply(ctx.axis, *grads), None

    jvp = auto_linear(0)


def can_view(x, shape):
    """Can ``reshape`` return a view (no copy)?  Always for contiguous arrays."""
    if x.flags.c_contiguous:
        return True
    try:
        _infer_and_view(x, shape)
    except (ValueError, AttributeError, TypeError):
        return False
    return True


def _infer_and_view(x, shape):
    """``x`` reshaped without copying (NumPy raises ValueError when it would have to copy), with
    PyTorch's strides for the dims of size 1 (:func:`view_strides`)."""
    shape = _infer_shape(shape, x.size, x.shape)
    if not isinstance(x, np.ndarray):
        return x.reshape(shape)
    out = x.reshape(shape, copy=False)
    if 1 in shape and x.size > 1 and not plain_c_order(x):  # NumPy picks other strides for them then;
        out = with_strides(out, view_strides(x.shape, x.strides, shape))  # they decide later layouts
    return out


def plain_c_order(x):
    """Is ``x`` in C order with no dim of size 1 (whose stride NumPy's flag would not check)?  Then
    NumPy's ``reshape`` gives every dim PyTorch's stride, those of size 1 included."""
    return x.flags.c_contiguous and 1 not in x.shape


def with_strides(x, strides):
    """The same elements of NumPy array ``x`` with other ``strides`` (only where a dim has size 1, so
    the elements stay where they are)."""
    if strides == x.strides:
        return x
    return np.lib.stride_tricks.as_strided(x, x.shape, strides, subok=True, writeable=x.flags.writeable)


def view_strides(old_shape, old_strides, new_shape):
    """The strides PyTorch gives ``view(new_shape)`` of a tensor (``computeStride`` in ATen), None
    if there is no view.

    Going from the last dim, the old dims are cut into chunks that are contiguous
    among themselves; the new dims are laid over each chunk.  A new dim of size 1
    gets the stride the next dim would have (NumPy gives it another).
    """
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1] if old_strides else 1
    tensor_numel = view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1
                             and old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = view_numel = 1
    return tuple(new_strides) if view_d == -1 else None


class Flip(Function):
    """Reverse the order along ``dims``; flipping the gradient undoes it."""

    _backward_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return _np(a._data).flip(a._data, dims).copy() if dims else a._data.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad.flip(ctx.dims), None

    jvp = auto_linear(0)


class Roll(Function):
    """Shift elements along ``dims`` (wrapping around); rolling the gradient back undoes it.

    With ``dims=None`` the tensor is rolled as if flattened.
    """

    _backward_name = "RollBackward0"

    @staticmethod
    def forward(ctx, a, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        x = a._data
        if dims is None:
            return _np(x).roll(x.reshape(-1), shifts).reshape(x.shape)
        return _np(x).roll(x, shifts, dims)

    @staticmethod
    def backward(ctx, grad):
        back = tuple(-s for s in ctx.shifts)
        return Roll.apply(grad, back, ctx.dims), None, None

    jvp = auto_linear(0)
