"""Reductions (sum, mean) and their gradients: broadcast the gradient back.

float16 and bfloat16 are reduced as PyTorch's CPU kernels do: accumulated in
float32 and rounded once to the low precision (``utils.summed``,
``utils.accumulation_input``).
"""
import math
import warnings

import numpy as np

from ... import _dtype, backend
from ..function import Function
from .._saved_attrs import Saved, int64, int64_list
from . import utils as _utils  # _utils._Tensor: edutorch.Tensor, without an import cycle
from .tangents import auto_element_wise, auto_linear, auto_reduction
from .utils import REDUCED_FLOATS, accumulation_input, rounded_to, summed, summed_to, wrap_dim
from ..._dtype import is_floating as _is_floating


def normalize_dims(dim, ndim):
    """``dim`` (None, int or tuple, maybe negative) as a sorted tuple of axes.

    As in PyTorch, an empty tuple reduces every axis, like None, and a 0-d tensor
    accepts dim 0 and -1 but has no axis to reduce (its result is itself)."""
    if dim is None or dim == () or dim == []:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    axes = [wrap_dim(d, ndim) for d in dim]
    for i, ax in enumerate(axes):
        if ax in axes[:i]:
            raise RuntimeError(f"dim {ax} appears multiple times in the list of dims")
    if ndim == 0:  # a 0-d tensor accepts dim 0 and -1 (checked above) but has no axis to reduce
        return ()
    return tuple(sorted(axes))


def expand_grad(grad, in_shape, axes, keepdim, count=1):
    """Undo a reduction's shape: re-insert reduced axes, broadcast to ``in_shape`` (``/ count``)."""
    if count == 1:
        return SumBackward.apply(grad, in_shape, axes, keepdim, 1)
    return MeanBackward.apply(grad, in_shape, axes, keepdim, count)


class SumBackward(Function):
    """The gradient of ``sum``: ``grad`` reshaped with the reduced axes, expanded to the input.

    PyTorch's ``sum_backward`` is ``grad.unsqueeze(...).expand(sizes)``; doing it in
    one op on the array saves a ``reshape`` and an ``expand`` node per reduction.
    The result is a read-only broadcast view (every element reads the same value).
    """

    _backward_name = "ExpandBackward0"  # PyTorch's last op here is an expand
    _expanded_result = True  # layout.py: left a broadcast view, as PyTorch's expand

    @staticmethod
    def forward(ctx, grad, in_shape, axes, keepdim, count):
        ctx.axes, ctx.keepdim, ctx.count = axes, keepdim, count
        g = grad._data
        if count != 1:
            g = g / count  # mean: divide the few values before broadcasting them
        if not keepdim and g.ndim:  # a 0-d grad (every axis reduced) expands as is
            shape = list(in_shape)
            for ax in axes:
                shape[ax] = 1
            g = g.reshape(shape)
        return _utils.broadcast_to(g, in_shape)

    @staticmethod
    def backward(ctx, gg):
        # the adjoint of broadcasting: sum over the reduced axes (then divide by count)
        g = gg.sum(ctx.axes, keepdim=ctx.keepdim) if ctx.axes else gg
        return (g / ctx.count if ctx.count != 1 else g), None, None, None, None

    jvp = auto_linear(0)  # (tangents.py: the op on the tangent)


class MeanBackward(SumBackward):
    """The gradient of ``mean``: the sum's gradient divided by the number of elements."""

    _backward_name = "DivBackward1"  # PyTorch computes ``grad.expand(sizes) / numel``
    _expanded_result = False  # layout.py: a division's new, contiguous result


class Sum(Function):
    _backward_name = "SumBackward1"
    _autocast_op = "sum"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    # grad_fn._saved_<name> (_saved_attrs.py): the dims as the caller gave them
    _saved_attrs = {"dim": lambda ctx: int64_list(ctx.dim), "keepdim": lambda ctx: ctx.keepdim,
                    "self_sym_sizes": lambda ctx: ctx.in_shape}

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False, dtype=None):
        x = a._data
        ctx.in_shape, ctx.axes, ctx.keepdim = x.shape, normalize_dims(dim, x.ndim), keepdim
        ctx.dim = dim
        if dtype is None and x.dtype.kind in "biu":
            dtype = np.int64  # PyTorch sums integers and bools into int64
        elif dtype is not None:
            dtype = getattr(dtype, "np", dtype)
        return summed(x, ctx.axes, keepdim, dtype)

    @staticmethod
    def backward(ctx, grad):
        return expand_grad(grad, ctx.in_shape, ctx.axes, ctx.keepdim), None, None, None

    jvp = auto_linear(0)


class Nansum(Sum):
    """``nansum`` of a floating tensor: ``sum`` counting NaN as 0, whose gradient is 0 at a NaN.  As
    PyTorch's ``NansumBackward0``, the node keeps the input (to find its NaNs again)."""

    _backward_name = "NansumBackward0"
    _saved_attrs = {"dim": lambda ctx: int64_list(ctx.dim), "keepdim": lambda ctx: ctx.keepdim, "self": Saved(0)}

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False, dtype=None):
        ctx.save_for_backward(a)
        x = a._data
        return Sum.forward(ctx, _utils._Tensor._make(np.where(np.isnan(x), 0, x).astype(x.dtype)), dim, keepdim, dtype)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return Sum.backward(ctx, grad)[0].masked_fill(a.isnan(), 0), None, None, None

    @staticmethod
    def jvp(ctx, da, *_):
        a = ctx.primals[0]
        return Sum.apply(da.masked_fill(a.isnan(), 0), ctx.dim, ctx.keepdim)


class SumAll(Function):
    """``x.sum()`` with no dim: PyTorch names its node ``SumBackward0``.

    Every loss ends in one of these (or ``MeanAll``), so it takes only the
    tensor (and a dtype) and skips the dim handling of ``Sum``.
    """

    _backward_name = "SumBackward0"
    _autocast_op = "sum"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"self_sym_sizes": lambda ctx: ctx.in_shape}  # grad_fn._saved_self_sym_sizes

    @staticmethod
    def forward(ctx, a, dtype=None):
        x = a._data
        ctx.in_shape = x.shape
        if dtype is None and x.dtype.kind in "biu":
            dtype = np.int64  # PyTorch sums integers and bools into int64
        elif dtype is not None:
            dtype = getattr(dtype, "np", dtype)
        return summed(x, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        shape = ctx.in_shape
        return expand_grad(grad, shape, tuple(range(len(shape))), False), None

    jvp = auto_linear(0)


class Mean(Function):
    _backward_name = "MeanBackward1"
    _saved_attrs = {"dim": lambda ctx: int64_list(ctx.dim), "keepdim": lambda ctx: ctx.keepdim,
                    "self_sym_numel": lambda ctx: math.prod(ctx.in_shape),
                    "self_sym_sizes": lambda ctx: ctx.in_shape}

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False, dtype=None):
        x = a._data
        if dtype is None and not _is_floating(x.dtype):
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {_dtype.scalar_type_name(a.dtype)}"
            )
        axes = normalize_dims(dim, x.ndim)
        ctx.in_shape, ctx.axes, ctx.keepdim, ctx.dim = x.shape, axes, keepdim, dim
        ctx.count = math.prod(x.shape[ax] for ax in axes) if x.ndim else 1
        target = x.dtype if dtype is None else np.dtype(getattr(dtype, "np", dtype))
        if target in REDUCED_FLOATS and ctx.count:  # float16, bfloat16: the float32 sum / count, rounded once
            return rounded_to(summed(x.astype(target, copy=False), axes, keepdim, np.float32) / ctx.count, target)
        if dtype is None and ctx.count:
            # what ndarray.mean computes (sum, then divide), without its slow Python checks
            return x.sum(axis=axes, keepdims=keepdim) / ctx.count
        with warnings.catch_warnings():  # the mean of no element is NaN, silently as in PyTorch
            warnings.simplefilter("ignore", RuntimeWarning)
            return x.mean(axis=axes, keepdims=keepdim, dtype=getattr(dtype, "np", dtype))

    @staticmethod
    def backward(ctx, grad):
        count = max(ctx.count, 1)  # no elements: the gradient is empty, any scale will do
        return expand_grad(grad, ctx.in_shape, ctx.axes, ctx.keepdim, count), None, None, None

    jvp = auto_linear(0)


class MeanAll(Function):
    """``x.mean()`` with no dim (``MeanBackward0``); the lean form of ``Mean``, as ``SumAll``."""

    _backward_name = "MeanBackward0"
    _saved_attrs = {"self_sym_numel": lambda ctx: math.prod(ctx.in_shape), "self_sym_sizes": lambda ctx: ctx.in_shape}

    @staticmethod
    def forward(ctx, a, dtype=None):
        x = a._data
        if dtype is not None or not _is_floating(x.dtype) or x.dtype in REDUCED_FLOATS or x.size == 0:
            # the general path: its errors, dtype=, float16/bfloat16 accumulation, nan for no elements
            out = Mean.forward(ctx, a, None, False, dtype)
            ctx.count = max(ctx.count, 1)
            return out
        ctx.in_shape, ctx.count = x.shape, x.size
        # what ndarray.mean computes (sum, then divide), without its slow Python checks
        return x.sum() / x.size

    @staticmethod
    def backward(ctx, grad):
        shape = ctx.in_shape
        return expand_grad(grad, shape, tuple(range(len(shape))), False, ctx.count), None

    jvp = auto_linear(0)


class SumToSize(Function):
    """Sum a broadcast tensor back down to ``shape``: the backward of broadcasting."""

    _backward_name = "SumToSizeBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        ctx.in_shape = a._data.shape
        out = summed_to(a._data, shape)
        # nothing to sum (a 0-d tensor to size ()): still a new tensor, as PyTorch's sum(), not the input's memory
        return out.copy() if np.shares_memory(out, a._data) else out

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(ctx.in_shape), None

    jvp = auto_linear(0)


def unreduce(t, in_shape, axes, keepdim):
    """A reduced tensor reshaped with size-1 axes, ready to broadcast against the input."""
    if keepdim:
        return t
    shape = list(in_shape)
    for ax in axes:
        shape[ax] = 1
    return t.reshape(shape)


def _float_or_error(a, message):
    x = a._data
    if not _is_floating(x.dtype):
        raise RuntimeError(message.format(_dtype.scalar_type_name(a.dtype)))
    return x


_VAR_DTYPE_ERROR = "std and var only support floating point and complex dtypes"
_NORM_DTYPE_ERROR = ("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                     "Got {}")


class Prod(Function):
    """Product of the elements; d/dx_i = the product of the other elements.

    As PyTorch's ``prod_backward``: when no element is 0 that is ``prod / x_i``;
    otherwise (dividing would give 0/0) the products of the others are
    computed without dividing.
    """

    _backward_name = "ProdBackward1"
    _autocast_op = "prod"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"dim": lambda ctx: int64(ctx.dim), "keepdim": lambda ctx: ctx.keepdim,
                    "result": Saved(1), "self": Saved(0)}

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False, dtype=None):
        x = a._data
        axes = normalize_dims(dim, x.ndim)
        ctx.in_shape, ctx.axes, ctx.keepdim, ctx.dim = x.shape, axes, keepdim, dim
        if dtype is None and x.dtype.kind in "biu":
            dtype = np.int64
        out = _utils._Tensor._make(x.prod(axis=axes, keepdims=keepdim, dtype=getattr(dtype, "np", dtype)))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, result = ctx.saved_tensors
        axes = ctx.axes
        if a.ndim and not (a._data == 0).any():  # no zero: result / x (inf or NaN give NaN, as in PyTorch)
            g = unreduce(grad, ctx.in_shape, axes, ctx.keepdim)
            return g * unreduce(result, ctx.in_shape, axes, ctx.keepdim) / a, None, None, None
        # move the reduced axes to the end and flatten them: the product of all
        # *other* elements is the exclusive cumulative product from both sides.
        keep = [d for d in range(a.ndim) if d not in axes]
        perm = keep + list(axes)
        moved = a.permute(perm) if a.ndim else a.reshape(1)
        flat = moved.reshape(tuple(moved.shape[:len(keep)]) + (-1,))
        others = ProdOthers.apply(flat)
        g = unreduce(grad, ctx.in_shape, axes, ctx.keepdim).permute(perm) if a.ndim else grad.reshape(1)
        g = g.reshape(tuple(g.shape[:len(keep)]) + (1,)) * others
        g = g.reshape(moved.shape)
        if not a.ndim:
            return g.reshape(()), None, None, None
        inverse = [perm.index(d) for d in range(a.ndim)]
        return g.permute(inverse), None, None, None

    jvp = auto_reduction  # (tangents.py: Σ over the reduced dims of backward(ones) · tangent)


class ProdAll(Prod):
    _backward_name = "ProdBackward0"
    _autocast_op = "prod"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"result": Saved(1), "self": Saved(0)}


class ProdOthers(Function):
    """For each element along the last axis, the product of all the *other* elements.

    Exclusive cumulative products from the left and from the right, multiplied:
    no division, so zeros are handled exactly.  PyTorch's ``prod_safe_zeros_backward``
    multiplies the same two products, so the node (seen under ``create_graph=True``) is
    named after that multiplication.
    """

    _backward_name = "MulBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _prod_others(a._data)

    @staticmethod
    def backward(ctx, grad):
        # d others_i / d x_j = product of all elements but i and j (0 when i == j).
        # Row i of ``pair`` is ``_prod_others`` of x with x_i replaced by 1.
        (a,) = ctx.saved_tensors
        x, n = a._data, a._data.shape[-1]
        lifted = np.repeat(x[..., None, :], n, axis=-2)
        eye = np.eye(n, dtype=bool)
        lifted[..., eye] = 1
        pair = _prod_others(lifted)
        pair[..., eye] = 0

        return grad.unsqueeze(-2).matmul(_utils._Tensor._make(pair)).squeeze(-2)

    jvp = auto_element_wise  # its Jacobian is symmetric: J u = Jᵀ u, as for an element-wise op


def _prod_others(x):
    xp = backend.get_array_module(x)
    ones = xp.ones(x.shape[:-1] + (1,), dtype=x.dtype)
    left = xp.cumprod(xp.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
    right = xp.cumprod(xp.concatenate([ones, x[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return left * right


def _warn_if_no_degrees_of_freedom(name, n, correction):
    """PyTorch's warning when ``N - correction <= 0`` (the result is then inf or nan)."""
    if n - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=4)


class Var(Function):
    """Variance: mean squared deviation, divided by ``N - correction``."""

    _backward_name = "VarBackward0"

    @staticmethod
    def forward(ctx, a, dim=None, correction=1, keepdim=False):
        x = _float_or_error(a, _VAR_DTYPE_ERROR)
        axes = normalize_dims(dim, x.ndim)
        ctx.in_shape, ctx.axes, ctx.keepdim, ctx.correction = x.shape, axes, keepdim, correction
        n = int(np.prod([x.shape[ax] for ax in axes])) if x.ndim else 1
        _warn_if_no_degrees_of_freedom("var", n, correction)
        ctx.n = n
        ctx.save_for_backward(a)
        if n <= correction:
            return backend.get_array_module(x).full(_reduced_shape(x.shape, axes, keepdim), np.nan, dtype=x.dtype)
        return rounded_to(accumulation_input(x).var(axis=axes, ddof=correction, keepdims=keepdim), x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        # d var / dx_i = 2 (x_i - mean) / (N - correction)
        centered = a - a.mean(ctx.axes, keepdim=True)
        g = unreduce(grad, ctx.in_shape, ctx.axes, ctx.keepdim)
        # as PyTorch, dividing by zero degrees of freedom gives inf (and nan gradients), not an error
        return g * centered * (2.0 / np.float64(ctx.n - ctx.correction)), None, None, None

    jvp = auto_reduction


class Std(Function):
    """Standard deviation: sqrt(var); d std = d var / (2 std)."""

    _backward_name = "StdBackward0"

    @staticmethod
    def forward(ctx, a, dim=None, correction=1, keepdim=False):
        x = _float_or_error(a, _VAR_DTYPE_ERROR)
        axes = normalize_dims(dim, x.ndim)
        ctx.in_shape, ctx.axes, ctx.keepdim, ctx.correction = x.shape, axes, keepdim, correction
        n = int(np.prod([x.shape[ax] for ax in axes])) if x.ndim else 1
        _warn_if_no_degrees_of_freedom("std", n, correction)
        ctx.n = n

        if n > correction:
            std = rounded_to(accumulation_input(x).std(axis=axes, ddof=correction, keepdims=keepdim), x.dtype)
        else:
            std = backend.get_array_module(x).full(_reduced_shape(x.shape, axes, keepdim), np.nan, dtype=x.dtype)
        out = _utils._Tensor._make(std)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        centered = a - a.mean(ctx.axes, keepdim=True)
        # PyTorch's std_backward: zero where the std is zero (every value equal), not 0/0
        g = unreduce((grad / out).masked_fill(out == 0, 0), ctx.in_shape, ctx.axes, ctx.keepdim)
        return g * centered / np.float64(ctx.n - ctx.correction), None, None, None

    jvp = auto_reduction


def _reduced_shape(shape, axes, keepdim):
    return tuple(1 if i in axes else s for i, s in enumerate(shape) if keepdim or i not in axes)


def norm_backward(grad, x, p, norm, dims=None):
    """The gradient of the p-norm ``norm`` of ``x`` over ``dims`` (``grad`` and ``norm`` broadcast
    against ``x``): PyTorch's ``norm_backward`` (``linalg_vector_norm`` and ``dist`` in
    derivatives.yaml), in its form, so that its own derivative (double backward) is PyTorch's too.

    d||x||_p / dx_i = sign(x_i) |x_i|^(p-1) / norm^(p-1).  Where the norm is 0 the quotient is
    0/0 and is masked to 0 (``masked_fill``) after dividing, as in PyTorch: the gradient there is 0,
    its derivative NaN.  For ``p = 0`` the norm (a count) has no gradient (None).
    """
    if p == 0:
        return None
    if p == 1:
        return x.sign() * grad
    if p == 2:
        return grad * (x / norm).masked_fill(norm == 0, 0)
    if p in (float("inf"), -float("inf")):
        # the entries that reach the extreme share the gradient; as in PyTorch a NaN counts as one
        hit = ((x.abs() == norm) | x.isnan()).to(x.dtype)
        return x.sign() * (grad / hit.sum(dims, keepdim=True) * hit)
    if p < 1:  # |x_i|^(p-1) is infinite at x_i = 0: masked there
        return x.sign() * (x.abs() ** (p - 1)).masked_fill(x == 0, 0) * grad * norm ** (1 - p)
    scaled = x.sign() * x.abs() ** (p - 1) if p < 2 else x * x.abs() ** (p - 2)
    return scaled * (grad / norm ** (p - 1)).masked_fill(norm == 0, 0)


class Norm(Function):
    """Vector p-norm ``(sum |x|^p)^(1/p)`` (``torch.linalg.vector_norm``)."""

    _backward_name = "LinalgVectorNormBackward0"
    _autocast_op = "linalg_vector_norm"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, a, p=2, dim=None, keepdim=False):
        x = _float_or_error(a, _NORM_DTYPE_ERROR)
        axes = normalize_dims(dim, x.ndim)
        ctx.in_shape, ctx.axes, ctx.keepdim, ctx.p = x.shape, axes, keepdim, p
        dtype, x = x.dtype, accumulation_input(x)
        if p == 2:  # the usual norm first: x * x needs no |x| (one temporary, not two)
            out = np.sqrt((x * x).sum(axis=axes, keepdims=keepdim))
        elif p == 0:
            out = (x != 0).sum(axis=axes, keepdims=keepdim).astype(dtype)
        else:
            ax = np.abs(x)
            if p == float("inf"):
                out = ax.max(axis=axes, keepdims=keepdim, initial=0)
            elif p == -float("inf"):
                out = ax.min(axis=axes, keepdims=keepdim)
            elif p == 1:
                out = ax.sum(axis=axes, keepdims=keepdim)
            else:
                out = (ax ** p).sum(axis=axes, keepdims=keepdim) ** (1.0 / p)

        out = _utils._Tensor._make(rounded_to(backend.get_array_module(x).asarray(out), dtype))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        g = unreduce(grad, ctx.in_shape, ctx.axes, ctx.keepdim)
        n = unreduce(out, ctx.in_shape, ctx.axes, ctx.keepdim)
        return norm_backward(g, a, ctx.p, n, ctx.axes), None, None, None

    jvp = auto_reduction


class LogSumExp(Function):
    """``log(sum(exp(x)))`` computed stably by subtracting the max first."""

    _backward_name = "LogsumexpBackward0"
    _autocast_op = "logsumexp"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"dim": lambda ctx: int64_list(ctx.dim), "keepdim": lambda ctx: ctx.keepdim,
                    "result": Saved(1), "self": Saved(0)}

    @staticmethod
    def forward(ctx, a, dim, keepdim=False):
        ctx.dim = dim
        x = a._data
        if not _is_floating(x.dtype):
            x = x.astype(_dtype.get_default_dtype().np)
        axes = normalize_dims(dim, x.ndim)
        ctx.in_shape, ctx.axes, ctx.keepdim = x.shape, axes, keepdim
        dtype, x = x.dtype, accumulation_input(x)
        m = x.max(axis=axes, keepdims=True) if x.size else backend.get_array_module(x).zeros(_reduced_shape(x.shape, axes, True), x.dtype)
        m = np.where(np.isfinite(m), m, 0)  # all -inf (or inf) rows: do not subtract inf
        out = rounded_to(np.log(np.exp(x - m).sum(axis=axes, keepdims=True)) + m, dtype)

        out = _utils._Tensor._make(out if keepdim else out.reshape(_reduced_shape(x.shape, axes, False)))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        # d lse / dx_i = softmax(x)_i = exp(x_i - lse)
        a, out = ctx.saved_tensors
        g = unreduce(grad, ctx.in_shape, ctx.axes, ctx.keepdim)
        lse = unreduce(out, ctx.in_shape, ctx.axes, ctx.keepdim)
        return g * (a - lse).exp(), None, None

    jvp = auto_reduction


class Amax(Function):
    """``amax``: the largest value over ``dim``; ties share the gradient evenly."""

    _backward_name = "AmaxBackward0"
    _reduce = staticmethod(np.max)
    _saved_attrs = {"dim": lambda ctx: int64_list(ctx.dim), "keepdim": lambda ctx: ctx.keepdim,
                    "self": Saved(0), "result": Saved(1)}

    @classmethod
    def _forward(cls, ctx, a, dim=(), keepdim=False):
        x = a._data
        axes = normalize_dims(dim if dim != () else None, x.ndim)
        name = cls.__name__.lower()
        if x.size == 0 and (dim is None or dim == ()):  # None: every dim, as ()
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        empty = [ax for ax in axes if x.shape[ax] == 0]
        if empty:  # reducing over no element: there is no max (other dims may be empty, that is fine)
            raise IndexError(f"{name}(): Expected reduction dim {empty[0]} to have non-zero size.")
        ctx.in_shape, ctx.axes, ctx.keepdim, ctx.dim = x.shape, axes, keepdim, dim
        out = _utils._Tensor._make(cls._reduce(x, axis=axes, keepdims=keepdim))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def forward(ctx, a, dim=(), keepdim=False):
        return Amax._forward(ctx, a, dim, keepdim)

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        hit = (a == unreduce(out, ctx.in_shape, ctx.axes, ctx.keepdim)).to(grad.dtype)
        g = unreduce(grad, ctx.in_shape, ctx.axes, ctx.keepdim)
        return g * hit / hit.sum(ctx.axes, keepdim=True), None, None

    jvp = auto_reduction


class Amin(Amax):
    _backward_name = "AminBackward0"
    _reduce = staticmethod(np.min)
    _saved_attrs = Amax._saved_attrs

    @staticmethod
    def forward(ctx, a, dim=(), keepdim=False):
        return Amin._forward(ctx, a, dim, keepdim)


class Aminmax(Function):
    """``aminmax``: ``(amin, amax)`` from one node, as PyTorch's ``AminmaxBackward0``, which keeps
    the input and both results (a later write to either result refuses backward); each gradient is
    shared evenly among ties, as ``amin``'s and ``amax``'s."""

    _backward_name = "AminmaxBackward0"

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False):
        x = a._data
        if dim is None and x.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        axes = normalize_dims(dim, x.ndim)
        if dim is not None and x.ndim and x.shape[axes[0]] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {axes[0]} to have non-zero size.")
        ctx.in_shape, ctx.axes, ctx.keepdim = x.shape, axes, keepdim
        low, high = (_utils._Tensor._make(np.asarray(f(x, axis=axes, keepdims=keepdim))) for f in (np.min, np.max))
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(a, low, high)
        return low, high

    @staticmethod
    def _share(ctx, grad, a, out):
        """``grad`` of one result spread evenly over the elements equal to it (``Amax.backward``)."""
        hit = (a == unreduce(out, ctx.in_shape, ctx.axes, ctx.keepdim)).to(grad.dtype)
        return unreduce(grad, ctx.in_shape, ctx.axes, ctx.keepdim) * hit / hit.sum(ctx.axes, keepdim=True)

    @staticmethod
    def backward(ctx, gmin, gmax):
        a, low, high = ctx.saved_tensors
        terms = [Aminmax._share(ctx, g, a, out) for g, out in ((gmin, low), (gmax, high)) if g is not None]
        return (terms[0] if len(terms) == 1 else terms[0] + terms[1]), None, None

    @staticmethod
    def jvp(ctx, dx, *_):
        """Each result's tangent: the mean of ``dx`` over the elements equal to it."""
        a = ctx.primals[0].detach()
        weights = [Aminmax._share(ctx, out.new_ones(out.shape), a, out.detach()) for out in ctx.result]
        return tuple((dx * w).sum(ctx.axes, keepdim=ctx.keepdim) for w in weights)


class MaxAll(Amax):
    """``x.max()`` with no dim: the value only (``MaxBackward1``)."""

    _backward_name = "MaxBackward1"
    _name = "max"
    _saved_attrs = {"self": Saved(0), "result": Saved(1)}

    @classmethod
    def _forward_all(cls, ctx, a):
        if a._data.size == 0:
            raise RuntimeError(
                f"{cls._name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        return cls._forward(ctx, a)

    @staticmethod
    def forward(ctx, a):
        return MaxAll._forward_all(ctx, a)

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        return evenly_distribute_backward(grad, a, out)


def evenly_distribute_backward(grad, a, out):
    """PyTorch's ``evenly_distribute_backward`` (``max()``, ``min()``, ``median()``): the gradient
    is shared by the entries equal to the result, or, when the result is NaN, by the NaN
    entries (NaN == NaN is False)."""
    hit = (a.isnan() if out.isnan().item() else a == out).to(grad.dtype)
    return grad * hit / hit.sum()


class MinAll(MaxAll):
    """``x.min()`` with no dim (``MinBackward1``)."""

    _backward_name = "MinBackward1"
    _name = "min"
    _reduce = staticmethod(np.min)
    _saved_attrs = MaxAll._saved_attrs

    @staticmethod
    def forward(ctx, a):
        return MinAll._forward_all(ctx, a)


class MaxDim(Function):
    """``x.max(dim)``: (values, indices); the gradient goes to the first extreme only."""

    _backward_name = "MaxBackward0"
    _arg = staticmethod(np.argmax)
    _name = "max"
    # grad_fn._saved_<name> (_saved_attrs.py); indices is the returned indices tensor itself
    _saved_attrs = {"dim": lambda ctx: int64(ctx.dim), "indices": Saved(0), "keepdim": lambda ctx: ctx.keepdim,
                    "self_sym_sizes": lambda ctx: ctx.in_shape}

    @classmethod
    def _forward(cls, ctx, a, dim, keepdim, positions=None):
        """The values at ``positions(x, axis)`` (``cls._arg`` by default) and their indices."""
        x = a._data
        axis = wrap_dim(dim, x.ndim)
        if x.ndim and x.shape[axis] == 0:
            raise IndexError(
                f"{cls._name}(): Expected reduction dim {axis} to have non-zero size."
            )
        xs = x if x.ndim else x.reshape(1)
        idx = np.expand_dims((positions or cls._arg)(xs, axis=axis), axis)
        values = np.take_along_axis(xs, idx, axis)
        ctx.in_shape, ctx.axis, ctx.keepdim, ctx.dim = x.shape, axis, keepdim, dim
        if not keepdim or not x.ndim:  # a 0-d tensor stays 0-d, keepdim or not
            values, idx = values.reshape(_reduced_shape(x.shape, (axis,), False)), \
                idx.reshape(_reduced_shape(x.shape, (axis,), False))
        # saved as PyTorch does: backward reads it, and changing it in place is then an error
        indices = _utils._Tensor._make(idx.astype(np.int64))
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def forward(ctx, a, dim, keepdim=False):
        return MaxDim._forward(ctx, a, dim, keepdim)

    @staticmethod
    def backward(ctx, grad, grad_indices=None):

        # put each gradient back at the position its value was taken from
        (indices,) = ctx.saved_tensors
        g = unreduce(grad, ctx.in_shape, (ctx.axis,), ctx.keepdim) if ctx.in_shape else grad.reshape(1)
        index = _utils._Tensor._make(indices._data.reshape(g.shape))
        out = g.new_zeros(ctx.in_shape or (1,)).scatter(ctx.axis, index, g)
        return (out if ctx.in_shape else out.reshape(())), None, None

    jvp = auto_reduction


class MinDim(MaxDim):
    _backward_name = "MinBackward0"
    _arg = staticmethod(np.argmin)
    _name = "min"
    _saved_attrs = MaxDim._saved_attrs

    @staticmethod
    def forward(ctx, a, dim, keepdim=False):
        return MinDim._forward(ctx, a, dim, keepdim)


def _cumulative(scan, a, axis, dtype):
    """``np.cumsum``/``np.cumprod`` of ``a`` along ``axis``, as PyTorch accumulates: integers and
    bools in int64, float16 and bfloat16 in float32 (each running value rounded once)."""
    x = a._data
    if dtype is None and x.dtype.kind in "biu":
        dtype = np.int64
    dtype = getattr(dtype, "np", dtype)
    target = x.dtype if dtype is None else np.dtype(dtype)
    if target in REDUCED_FLOATS:
        return rounded_to(scan(x.astype(target, copy=False).reshape(x.shape or (1,)), axis=axis, dtype=np.float32),
                          target).reshape(x.shape)
    return scan(x if x.ndim else x.reshape(1), axis=axis, dtype=dtype).reshape(x.shape)


class Cumsum(Function):
    """Running sum along ``dim``; its gradient is the running sum of ``grad`` from the end."""

    _backward_name = "CumsumBackward0"
    _autocast_op = "cumsum"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, a, axis, dtype=None):
        ctx.axis = axis
        return _cumulative(np.cumsum, a, axis, dtype)

    @staticmethod
    def backward(ctx, grad):
        if grad.ndim == 0:
            return grad, None, None
        # d out_j / d x_i = 1 for j >= i: sum the gradient over j >= i (a reversed cumsum)
        return grad.flip(ctx.axis).cumsum(ctx.axis).flip(ctx.axis), None, None

    jvp = auto_linear(0)


class Logcumsumexp(Function):
    """``log(cumsum(exp(x)))`` along ``dim``, without overflow (``np.logaddexp.accumulate``).

    Backward, PyTorch's ``logcumsumexp_backward`` (kept in the log domain, so it cannot overflow
    either): the gradient's positive and negative parts are summed from the end separately,
    ``exp(reverse_logcumsumexp(log|g| - result) + x)`` each.  As PyTorch's node it keeps the input
    and the result."""

    _backward_name = "LogcumsumexpBackward0"

    @staticmethod
    def forward(ctx, a, axis):
        x = a._data
        ctx.axis = axis
        out = _utils._Tensor._make(np.logaddexp.accumulate(x.reshape(x.shape or (1,)), axis=axis).reshape(x.shape))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        axis = ctx.axis
        if x.ndim == 0 or 0 in x.shape:  # one value (its gradient passes as it is), or none
            return grad, None
        lowest = float(np.finfo(x._data.dtype).min)  # log 0, kept finite: PyTorch's scalar_min

        def from_the_end(t):
            return Logcumsumexp.apply(t.flip(axis), axis).flip(axis)

        with np.errstate(divide="ignore", over="ignore"):  # log|0| = -inf (masked), lowest - result = -inf
            log_abs = grad.abs().log()
            part = [(from_the_end(log_abs.masked_fill(mask, lowest) - result) + x).exp()
                    for mask in (grad <= 0, grad >= 0)]
        return part[0] - part[1], None

    @staticmethod
    def jvp(ctx, dx, _=None):
        """PyTorch's ``logcumsumexp_jvp``: ``cumsum(dx * e) / cumsum(e)``, ``e = exp(x - max)``."""
        (x,) = ctx.primals[:1]
        e = (x - x.amax(ctx.axis, keepdim=True)).exp() if x.numel() else x.exp()
        return (dx * e).cumsum(ctx.axis) / e.cumsum(ctx.axis)


class Cumprod(Function):
    """Running product along ``dim``.

    Backward: ``d out_j / d x_i = out_j / x_i`` for ``j >= i``, so
    ``grad_x = reversed_cumsum(grad * out) / x``.  That quotient fails where
    ``x`` has zeros; there the product of the other factors is formed instead
    (``_cumprod_grad_with_zeros``), without dividing.
    """

    _backward_name = "CumprodBackward0"
    _autocast_op = "cumprod"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, a, axis, dtype=None):
        ctx.axis = axis
        out = _utils._Tensor._make(_cumulative(np.cumprod, a, axis, dtype))
        ctx.save_for_backward(a, out)  # the result too, as PyTorch (writing it later breaks backward)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        # one factor per running product: PyTorch's cumprod_backward passes the gradient on as it
        # is (so a double backward sends nothing through the saved result)
        if a.numel() <= 1 or a.shape[ctx.axis] == 1:
            return grad, None, None
        axis = ctx.axis
        if not bool((a._data == 0).any()):
            summed = (grad * out).flip(axis).cumsum(axis).flip(axis)
            return summed / a, None, None
        return _cumprod_grad_with_zeros(a, grad, axis), None, None

    @staticmethod
    def jvp(ctx, da, *_):
        """d out_j = Σ_{i<=j} dx_i · Π_{k<=j, k != i} x_k: ``out · cumsum(dx / x)`` without zeros,
        else the product rule term by term (no division)."""
        a, out, axis = ctx.primals[0], ctx.result, ctx.axis
        if a.ndim == 0:
            return da
        if not bool((a._data == 0).any()):
            return out * (da / a).cumsum(axis)
        from ..._functional import cat

        n, total = a.shape[axis], None
        for i in range(n):  # the running products with x_i replaced by dx_i, from position i on
            replaced = cat([a.narrow(axis, 0, i), da.narrow(axis, i, 1), a.narrow(axis, i + 1, n - i - 1)], axis)
            term = replaced.cumprod(axis).narrow(axis, i, n - i)
            term = cat([term.new_zeros(a.narrow(axis, 0, i).shape), term], axis)
            total = term if total is None else total + term
        return total


def _cumprod_grad_with_zeros(a, grad, axis):
    """``grad_i = prod(x_0..x_{i-1}) * sum_{j>=i} grad_j * prod(x_{i+1}..x_j)``, one i at a time."""
    from ..._functional import cat

    n = a.shape[axis]
    parts = []
    for i in range(n):
        one = a.narrow(axis, i, 1).detach() * 0 + 1
        chain = cat([one, a.narrow(axis, i + 1, n - i - 1)], axis).cumprod(axis)
        g = (grad.narrow(axis, i, n - i) * chain).sum(axis, keepdim=True)
        parts.append(g * a.narrow(axis, 0, i).prod(axis, keepdim=True) if i else g)
    return cat(parts, axis)


def running_extreme_positions(x, axis, ufunc):
    """For ``cummax``/``cummin`` (``ufunc``: ``np.maximum``/``np.minimum``): where each running extreme
    along ``axis`` was reached, the latest on ties, as PyTorch.  A NaN is an extreme too, and once the
    running value is NaN no later element equals it."""
    running = ufunc.accumulate(x, axis=axis)
    positions = np.arange(x.shape[axis]).reshape([-1 if d == axis else 1 for d in range(x.ndim)])
    itself = (x == running) | (np.isnan(x) if _is_floating(x.dtype) else False)
    return np.maximum.accumulate(np.where(itself, positions, -1), axis=axis).astype(np.int64)


def _running_extreme(ctx, a, dim, ufunc):
    """``cummax``/``cummin``'s forward: the values and indices, saving the input and the indices."""
    # PyTorch returns an empty input's (empty) answer before it checks ``dim``
    ctx.axis = 0 if a._data.size == 0 else wrap_dim(dim, a._data.ndim)
    ctx.dim, ctx.shape = dim, a._data.shape
    x = a._data if a._data.ndim else a._data.reshape(1)
    index = running_extreme_positions(x, ctx.axis, ufunc)
    values = np.take_along_axis(x, index, ctx.axis).reshape(a._data.shape)
    indices = _utils._Tensor._make(index.reshape(a._data.shape))
    ctx.save_for_backward(a, indices)
    return values, indices


class Cummax(Function):
    """``x.cummax(dim)``: (values, indices) of the running maximum.  Each value's gradient goes back
    to where it was reached (a scatter-add); PyTorch's ``CummaxBackward0`` keeps the input and the indices."""

    _backward_name = "CummaxBackward0"
    _saved_attrs = {"dim": lambda ctx: int64(ctx.dim), "indices": Saved(1), "self": Saved(0)}

    @staticmethod
    def forward(ctx, a, dim):
        return _running_extreme(ctx, a, dim, np.maximum)

    @staticmethod
    def backward(ctx, grad, grad_indices=None):
        _, indices = ctx.saved_tensors  # (the input is read too: a write into it since is refused, as in PyTorch)
        g, index = grad.reshape(indices.shape or (1,)), indices.reshape(indices.shape or (1,))
        return g.new_zeros(g.shape).scatter_add(ctx.axis, index, g).reshape(ctx.shape), None

    @staticmethod
    def jvp(ctx, da, *_):
        """Each value's tangent is the input's tangent where it was reached."""
        _, indices = ctx.saved_tensors
        index = indices.reshape(indices.shape or (1,))
        return da.reshape(index.shape).gather(ctx.axis, index).reshape(ctx.shape), None


class Cummin(Cummax):
    """``x.cummin(dim)``: the running minimum (PyTorch's ``CumminBackward0``)."""

    _backward_name = "CumminBackward0"
    _saved_attrs = Cummax._saved_attrs

    @staticmethod
    def forward(ctx, a, dim):
        return _running_extreme(ctx, a, dim, np.minimum)
