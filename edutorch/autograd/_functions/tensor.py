"""Functions behind Tensor methods that copy or overwrite: ``clone``, ``to``,
``fill_``/``zero_``/``copy_`` and ``x[idx] = value``.

(PyTorch once kept such helpers in ``torch/autograd/_functions/tensor.py``.)
"""
import numpy as np

from ... import backend
from ..function import Function
from . import utils
from .tangents import auto_linear


class Clone(Function):
    _backward_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a):
        return a._data.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad

    jvp = auto_linear(0)  # (tangents.py: the op on the tangent)


class Contiguous(Clone):
    """``x.contiguous()`` of a non-contiguous ``x``: a clone in C order (``clone`` keeps ``x``'s layout)."""

    _backward_name = "CloneBackward0"  # (a subclass gets its own name otherwise: "ContiguousBackward")
    _contiguous_result = True  # layout.py


class ToDtype(Function):
    _backward_name = "ToCopyBackward0"
    _profiler_name = "aten::to"  # its torch.profiler event (not derived from the node name)

    @staticmethod
    def forward(ctx, a, dtype):
        ctx.in_dtype = a.dtype
        with np.errstate(over="ignore", invalid="ignore"):  # 70000 -> float16: inf, silently (PyTorch)
            return a._data.astype(dtype.np)

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.in_dtype), None

    jvp = auto_linear(0)


class ToDevice(Function):
    _backward_name = "ToCopyBackward0"
    _profiler_name = "aten::to"  # its torch.profiler event (not derived from the node name)

    @staticmethod
    def forward(ctx, a, device_type):
        ctx.in_device = a.device.type
        return backend.to_device(a._data, device_type)

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.in_device), None

    jvp = auto_linear(0)


class Fill(Function):
    """``fill_``: every element becomes ``value``; no gradient flows to the old values."""

    _backward_name = "FillBackward2"
    _profiler_name = "aten::fill_"  # its torch.profiler event (not derived from the node name)
    overwrites = True  # the result does not depend on the old values (see ``_inplace_on_view``)
    skips_overlap_check = True  # PyTorch's fill_ writes into an expand() too (inplace.py)
    reads_one_number = True  # the value is read before anything is written: it may lie in the tensor filled

    @staticmethod
    def forward(ctx, a, value):
        xp = backend.get_array_module(a._data)
        v = value._data if isinstance(value, utils._Tensor) else utils.checked_scalar(value, a._data.dtype)
        return xp.full(a._data.shape, v, dtype=a._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad.new_zeros(grad.shape), None

    jvp = auto_linear(0, 1)  # the value's tangent everywhere (0 for a number)


class FillTensor(Fill):
    """``fill_(value)`` with a 0-d tensor ``value``: the value gets the gradient of every element (its sum)."""

    _backward_name = "FillBackward3"

    @staticmethod
    def forward(ctx, a, value):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value._data.ndim} "
                               "dimensions.")
        return Fill.forward(ctx, a, value)

    @staticmethod
    def backward(ctx, grad):
        return grad.new_zeros(grad.shape), grad.sum()


class Zero(Fill):
    """``zero_``: ``fill_(0)`` under PyTorch's own node name."""

    _backward_name = "ZeroBackward0"
    _profiler_name = "aten::zero_"  # its torch.profiler event (not derived from the node name)


class Copy(Function):
    """``copy_(src)``: the values of ``src`` (broadcast, cast); the gradient goes to ``src``."""

    _backward_name = "CopyBackwards"
    _profiler_name = "aten::copy_"  # its torch.profiler event (not derived from the node name)
    overwrites = True  # the result does not depend on the old values (see ``_inplace_on_view``)

    @staticmethod
    def forward(ctx, a, src):
        ctx.src_meta = (src._data.shape, src._data.dtype)
        data = backend.to_device(src._data, backend.device_of(a._data))
        try:
            shape = np.broadcast_shapes(a._data.shape, data.shape)
        except ValueError:
            raise utils.broadcast_error(a._data, data) from None
        if shape != a._data.shape:
            raise RuntimeError(f"output with shape {list(a._data.shape)} doesn't match the broadcast shape {list(shape)}")
        return utils.broadcast_to(data, shape).astype(a._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad.new_zeros(grad.shape), utils.grad_for(grad, ctx.src_meta)

    jvp = auto_linear(0, 1)  # the source's tangent


def indexable(array, idx):
    """``array`` as ``idx`` indexes it: a 0-d array indexed by positions (the element of a 0-d tensor
    written through an ``expand`` of it, ``views._index_of_0d_base``) is seen as a (1,) array."""
    if array.ndim == 0 and type(idx) is tuple and idx and not isinstance(idx[0], (type(Ellipsis), slice, int)):
        return array.reshape(1)
    return array


class IndexPut(Function):
    """``x[idx] = value``: the gradient of ``x`` is zero at ``idx``; ``value`` gets the rest."""

    _backward_name = "IndexPutBackward0"
    _profiler_name = "aten::index_put_"  # its torch.profiler event (not derived from the node name)
    writes_part = True  # only ``x[idx]`` is written: the caller checks memory overlap with that part

    @staticmethod
    def forward(ctx, a, idx, value, saved=()):
        out = a._data.copy()
        v = value._data if isinstance(value, utils._Tensor) else value
        try:
            indexable(out, idx)[idx] = v
        except ValueError:
            if not isinstance(value, utils._Tensor):
                raise
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast to indexing result "
                f"of shape {list(out[idx].shape)}"
            ) from None
        ctx.save_for_backward(*saved)  # the index tensors behind ``idx``: version-checked
        ctx.idx = idx
        ctx.value_meta = (v.shape, v.dtype) if isinstance(value, utils._Tensor) else None
        return out

    @staticmethod
    def backward(ctx, grad):
        # overwritten positions get no gradient (a mask keeps this differentiable)
        xp = backend.get_array_module(grad._data)
        hit = xp.zeros(grad._data.shape, dtype=bool)
        indexable(hit, ctx.idx)[ctx.idx] = True
        keep = grad.masked_fill(utils._Tensor._make(hit), 0)
        gv = None
        if ctx.needs_input_grad[2]:
            seen = grad.reshape(1) if indexable(hit, ctx.idx) is not hit else grad
            gv = utils.grad_for(seen[ctx.idx], ctx.value_meta)
        return keep, None, gv, None

    jvp = auto_linear(0, 2)  # da with dvalue written at idx


class CopySlices(IndexPut):
    """``x[basic index] = value``, and a write through a view (``index``: the base elements the
    view shows): PyTorch names this node ``CopySlices``."""

    _backward_name = "CopySlices"
    _profiler_name = "aten::copy_"  # its torch.profiler event (not derived from the node name)
