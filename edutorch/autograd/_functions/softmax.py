"""``softmax`` and ``log_softmax`` along one dimension, computed stably: the one
home of both formulas (``torch.softmax``, ``Tensor.softmax`` and ``F.softmax``
all apply these Functions).

Subtracting the row maximum before ``exp`` changes nothing mathematically
(it cancels in the ratio) but keeps ``exp`` from overflowing.
"""
import numpy as np

from ..function import Function
from .._saved_attrs import Saved, int64
from . import utils as _utils  # _utils._Tensor: edutorch.Tensor, without an import cycle
from .tangents import sum_tangents, symmetric_jacobian
from .utils import accumulation_input, rounded_to, wrap_dim
from ..._dtype import is_floating as _is_floating
from ... import _dtype


def check_floating(a, axis, kernel):
    """PyTorch's softmax kernels take floating point only: its error names the kernel
    (the ``lastdim`` one along the last dimension)."""
    if not _is_floating(a._data.dtype):
        last = "lastdim_" if axis is None or axis == a._data.ndim - 1 else ""
        raise NotImplementedError(
            f'"{kernel}_{last}kernel_impl" not implemented for \'{_dtype.scalar_type_name(a.dtype)}\''
        )


def _shifted(a, dim, kernel):
    """``x - max(x)`` along ``dim`` (a new array) and the NumPy axis (None for a 0-d tensor).

    float16 and bfloat16 are widened to float32 here (round the result back once with
    ``rounded_to``), as PyTorch's CPU softmax kernels compute them."""
    x = accumulation_input(a._data)
    axis = wrap_dim(dim, x.ndim)  # a 0-d tensor accepts dim 0 and -1...
    if x.ndim == 0:
        axis = None  # ...and has no axis to normalise over
    check_floating(a, axis, kernel)
    if x.ndim == 0:
        return x - x, axis
    m = x.max(axis=axis, keepdims=True) if x.size else 0
    return x - m, axis  # an infinite max gives NaN (inf - inf), as in PyTorch's kernel


class Softmax(Function):
    """softmax(x)_i = exp(x_i) / Σ_j exp(x_j);  backward: y * (g - Σ g y)."""

    _backward_name = "SoftmaxBackward0"
    _autocast_op = "softmax"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    # grad_fn._saved_<name> (_saved_attrs.py): dim as the caller gave it
    _saved_attrs = {"dim": lambda ctx: int64(ctx.dim), "result": Saved(0)}

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        z, axis = _shifted(a, dim, "softmax")
        e = np.exp(z)
        out = _utils._Tensor._make(rounded_to(e / e.sum(axis=axis, keepdims=True) if z.ndim else e, a._data.dtype))
        ctx.axis = axis
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        # dL/dx = y * (g - sum(g * y)): the Jacobian of softmax applied to g
        (y,) = ctx.saved_tensors
        if ctx.axis is None:  # a 0-d tensor: its one element is the sum; 0, but its derivative w.r.t. y is not
            return y * (grad - grad * y), None
        return y * (grad - (grad * y).sum(ctx.axis, keepdim=True)), None

    jvp = symmetric_jacobian  # diag(y) - y yᵀ is symmetric: the tangent is backward(tangent) (tangents.py)


class LogSoftmax(Function):
    """log_softmax(x) = x - logsumexp(x);  backward: g - softmax(x) Σ g."""

    _backward_name = "LogSoftmaxBackward0"
    _autocast_op = "log_softmax"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = Softmax._saved_attrs

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        z, axis = _shifted(a, dim, "log_softmax")
        if z.ndim and z.size:
            z -= np.log(np.exp(z).sum(axis=axis, keepdims=True))  # z is a new array: in place
        out = _utils._Tensor._make(rounded_to(z, a._data.dtype))
        ctx.axis = axis
        ctx.save_for_backward(out)  # PyTorch saves the result (a Tensor: create_graph needs its graph)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        if ctx.axis is None:  # a 0-d tensor: its one element is the sum; 0, but its derivative w.r.t. out is not
            return grad - out.exp() * grad, None
        return LogSoftmaxBackwardData.apply(grad, out, ctx.axis), None

    @staticmethod
    def jvp(ctx, da, _):
        """d log_softmax = dx - Σ softmax(x) dx (J = I - 1 pᵀ)."""
        if ctx.axis is None:
            return da * 0
        return da - (da * ctx.result.exp()).sum(ctx.axis, keepdim=True)


class LogSoftmaxBackwardData(Function):
    """PyTorch's ``_log_softmax_backward_data``: ``grad - exp(y) * grad.sum(dim)``, one op.

    ``y`` is the log-softmax output, so ``exp(y)`` is the softmax.  Its own
    backward (for ``create_graph=True``), with ``p = exp(y)``:
    d/dgrad = ``gg - (gg * p).sum(dim)``;  d/dy = ``-gg * p * grad.sum(dim)``.
    """

    _backward_name = "LogSoftmaxBackwardDataBackward0"
    _profiler_name = "aten::_log_softmax_backward_data"  # its torch.profiler event (not derived from the node name)

    @staticmethod
    def forward(ctx, grad, y, dim):
        ctx.save_for_backward(grad, y)
        ctx.dim = dim
        g = grad._data
        return g - np.exp(y._data) * g.sum(axis=dim, keepdims=True)

    @staticmethod
    def backward(ctx, gg):
        grad, y = ctx.saved_tensors
        p, dim = y.exp(), ctx.dim
        g_grad = gg - (gg * p).sum(dim, keepdim=True) if ctx.needs_input_grad[0] else None
        g_y = -gg * p * grad.sum(dim, keepdim=True) if ctx.needs_input_grad[1] else None
        return g_grad, g_y, None

    @staticmethod
    def jvp(ctx, d_grad, d_y, _):
        """d(g - p Σg) = dg - p Σdg - p dy Σg, with p = exp(y)."""
        grad, y, dim = ctx.primals
        p = y.exp()
        by_grad = d_grad - p * d_grad.sum(dim, keepdim=True) if d_grad is not None else None
        by_y = -p * d_y * grad.sum(dim, keepdim=True) if d_y is not None else None
        return sum_tangents(by_grad, by_y)
