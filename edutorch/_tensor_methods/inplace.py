"""In-place ops: ``x.add_(y)``, ``x.mul_(2)``, ``x.exp_()``, ``x.zero_()``, ``x += 1``...

``x.op_(...)`` computes ``x.op(...)`` out of place, writes the result into
``x``'s storage, bumps the version counter (shared with every view of that
storage) and makes ``x`` the op's output in the graph (``_inplace``).  An
in-place op on a view is recorded on its base (``_inplace_on_view``, with the
helpers of ``views.py``).  Under ``no_grad`` the common arithmetic ops write
straight into the array (``_inplace_no_graph``): the optimizers' path.
"""
import numpy as np

from .. import _dtype, backend
from ..autograd.function import Function, _requires_grad as _any_requires_grad, inplace_interceptors
from ..autograd.function import saved_output_now_is
from ..autograd import _saved_tensor, forward_ad, grad_mode
from ..autograd._functions import linalg as linalg_fns
from ..autograd._functions import binary, comparison, elementary, indexing, pointwise, reduction, special, unary, utils
from ..autograd._functions.tensor import Copy, CopySlices, Fill, FillTensor, Zero
from ..autograd._functions.utils import wrap_dim
from .arithmetic import check_alpha
from .views import base_index, check_no_overlap, has_internal_overlap, is_raw_leaf, read_graph, refresh_views
from .views import FOLLOW_BASE, seen_alike, set_graph, view_error
from .._dtype import is_floating as _is_floating

LEAF_INPLACE_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE_ERROR = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)


def leaf_inplace_error(t):
    """PyTorch's refusal of an in-place op on a leaf that requires grad (or on a view whose flag is its
    base's: made before the base was set to require grad, ``_follow_base_requires_grad``, or made under
    ``no_grad``, refused as such first, also after ``requires_grad_()`` gave it a gradient of its own)."""
    if "_requires_grad_of_base" not in t.__dict__ and "_made_in_no_grad" not in t.__dict__:
        return RuntimeError(LEAF_INPLACE_ERROR)
    return RuntimeError(view_error(t) or VIEW_OF_LEAF_INPLACE_ERROR)


EXPANDED_INPLACE_ERROR = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory "
    "location. Please clone() the tensor before performing the operation."
)


def _copies_itself(fn, t, args):
    """``t.copy_(src)`` where ``src`` is the memory of ``t`` seen the same way (address, shape, strides,
    dtype: ``t`` itself, ``t.view(t.shape)``, or an ``expand`` of one element and its transpose):
    PyTorch's ``copy_`` returns at once there, before any overlap check (``is_same_data``)."""
    if fn is not Copy or not isinstance(args[0], utils._Tensor):
        return False
    a, b = t._data, args[0]._data
    return a is b or (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == b.dtype and seen_alike(a, b))


def _unchecked(fn, t, args):
    """Does PyTorch's kernel write ``t`` without its internal-overlap check?  ``fill_``, ``zero_``,
    ``masked_fill_``, ``threshold_`` (``fn.skips_overlap_check``), an indexed write (``fn.writes_part``:
    ``__setitem__`` checks the part it writes), and a ``copy_`` of the tensor onto itself."""
    return (getattr(fn, "writes_part", False) or getattr(fn, "skips_overlap_check", False)
            or _copies_itself(fn, t, args))


def _check_memory(t, fn, args):
    """Refuse a write whose result would depend on the order elements are written in (PyTorch's checks,
    after autograd's): ``t`` shows one memory location through several elements (an ``expand``; not for
    the kernels of ``_unchecked``), or an argument shares memory with ``t``."""
    data = t._data
    if type(data) is np.ndarray and not data.flags.writeable:  # (a read-only view: as_strided's overlapping)
        raise RuntimeError(EXPANDED_INPLACE_ERROR)
    if getattr(fn, "writes_part", False):  # x[idx] = v: ``__setitem__`` checked overlap with the value
        idx = args[0]  # PyTorch checks the part a basic index writes (``index_put_`` does not check)
        if has_internal_overlap(data) and indexing.is_basic(idx) and has_internal_overlap(data[idx]):
            raise RuntimeError(EXPANDED_INPLACE_ERROR)
        return
    if _copies_itself(fn, t, args):
        return
    if has_internal_overlap(data) and not _unchecked(fn, t, args):
        raise RuntimeError(EXPANDED_INPLACE_ERROR)
    if getattr(fn, "reads_one_number", False):  # fill_(x[0, 0]): nothing to overlap
        return
    for a in args:
        if isinstance(a, utils._Tensor):  # scatter_, index_add_: not even the tensor itself (full_ok)
            check_no_overlap(t, a, full_ok=not getattr(fn, "writes_scattered", False))


def _writes_an_expand_with_graph(fn, t, args, base):
    """Does PyTorch let ``fn`` write a tensor that requires grad into ``t``, an expand of ``base``?
    Besides ``x[basic index] = v`` (always), an unchecked kernel (``_unchecked``) when ``base`` does
    not require grad itself (then only the written value does); never ``fill_``."""
    return _unchecked(fn, t, args) and fn not in (Fill, FillTensor) and not base._requires_grad


def _refused_at_backward(fn, t, args, base):
    """Does PyTorch write ``t``, an expand of ``base`` (which requires grad), with ``fn`` and refuse only
    at backward?  Its kernels without the overlap check (``_unchecked``) write; the ``CopySlices`` node
    then cannot write the gradient back through the repeated elements."""
    return _unchecked(fn, t, args) and base._requires_grad


class _CopySlicesThroughAnExpand(Function):
    """The node of a base written through an expand of it (``_refused_at_backward``): PyTorch's
    ``CopySlices``, whose backward refuses."""

    _backward_name = "CopySlices"

    @staticmethod
    def forward(ctx, base):  # only the node counts: the base keeps its values
        return base._data

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(EXPANDED_INPLACE_ERROR)


def _written_part(fn, args, target):
    """What an op writes of ``target`` (an array) whose elements repeat (an ``expand``), as an index:
    ``x[idx] = v`` writes ``x[idx]``, ``masked_fill_`` where the mask is True (PyTorch's kernels leave
    the rest alone: written back, the repeated elements would undo the write); None: every element."""
    if getattr(fn, "writes_part", False):
        return args[0]
    if getattr(fn, "writes_where_masked", False):
        return backend.get_array_module(target).broadcast_to(args[0]._data, target.shape)
    return None


def _write(t, fn, args, result):
    """Copy ``result`` into ``t``'s memory (where elements of ``t`` repeat, only the part the op writes)."""
    target, values = t._data, result._data
    part = _written_part(fn, args, target) if has_internal_overlap(target) else None
    if part is not None:
        target[part] = values[part]
    elif type(target) is np.ndarray:
        np.copyto(target, values, casting="same_kind")
    else:
        target[...] = values


def _check_fits(t, result):
    """An in-place op's result must have the tensor's shape and a dtype it can hold (PyTorch's checks)."""
    if result._data.shape != t._data.shape:
        raise RuntimeError(
            f"output with shape {list(t._data.shape)} doesn't match the broadcast shape {list(result._data.shape)}"
        )
    if result._data.dtype != t._data.dtype and not np.can_cast(result._data.dtype, t._data.dtype, "same_kind"):
        raise RuntimeError(
            f"result type {_dtype.scalar_type_name(result.dtype)} can't be cast to the desired output "
            f"type {_dtype.scalar_type_name(t.dtype)}"
        )


def _inplace_no_graph(t, ufunc, other, alpha):
    """``t op= alpha * other`` written straight into ``t``'s array, when no graph is recorded.

    The optimizers' path (``p.add_(grad, alpha=-lr)`` under ``no_grad``): one NumPy
    call with ``out=``.  Only a float CPU tensor with a same-dtype tensor or a
    Python number qualifies; returns False for anything else (a graph to record,
    dtype promotion, shapes that do not fit), and the general path takes over
    with PyTorch's errors.
    """
    x = t._data
    grad_mode.check_inplace_allowed(t)
    if type(x) is not np.ndarray or not _is_floating(x.dtype) or 0 in x.strides:  # (an expand: checked there)
        return False
    if forward_ad._state.active or inplace_interceptors.active:  # tangents to update, a profiler's record
        return False
    recording = grad_mode.is_grad_enabled()
    if recording and "_view_of" in t.__dict__:  # a view: its base's graph may have to change
        return False
    if isinstance(other, utils._Tensor):
        check_no_overlap(t, other)
        y = other._data
        if type(y) is not np.ndarray or y.dtype != x.dtype or (
            recording and (t._requires_grad or other._requires_grad)
        ):
            return False
        if alpha != 1:
            y = y * alpha  # a Python number times a float array keeps its dtype
    elif type(other) is float or type(other) is int:
        if recording and t._requires_grad:
            return False
        y = other * alpha
    else:
        return False
    try:
        ufunc(x, y, out=x)
    except (ValueError, OverflowError):  # read-only, shapes, overflow: checked before anything is written
        return False
    t._version_counter[0] += 1
    return True


class InplaceMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    def _inplace(self, fn, *args):
        """Run ``fn`` out of place, then write the result into this tensor's storage (through the
        in-place interceptors while one is registered: the profiler records ``aten::add_``)."""
        if inplace_interceptors.active:
            return inplace_interceptors.run(InplaceMethods._write_inplace, self, fn, args)
        return self._write_inplace(fn, args)

    def _write_inplace(self, fn, args):
        grad_mode.check_inplace_allowed(self)
        recording = grad_mode.is_grad_enabled()
        if recording and self._requires_grad and is_raw_leaf(self):
            raise leaf_inplace_error(self)
        base = self.__dict__.get("_view_of") if recording else None
        if base is not None and (self._requires_grad or base._requires_grad or _any_requires_grad(args)):
            return self._inplace_on_view(base, fn, args)
        _check_memory(self, fn, args)
        source = self
        if recording and (self._requires_grad or _any_requires_grad(args)):
            # the input as a tensor of its own (same array, own version counter), so that
            # backward can save it without seeing the write below
            # under saved-tensor hooks the pack hook keeps the input before the write below: give it
            # a copy of the old values (PyTorch saves a clone of self), not the array about to change
            data = self._data.copy() if _saved_tensor._stack else self._data
            source = utils._Tensor._make(data, self._requires_grad, self._grad_fn, self._output_nr)
        if forward_ad._state.active:  # forward-mode AD: the op reads the tangent with the values
            source = forward_ad.with_tangent_of(self, source)
        result = fn.apply(source, *args)
        if source is not self and result._grad_fn is not None and result._grad_fn._saves(source):
            source._data = source._data.copy()  # saved for backward: keep the old values
        _check_fits(self, result)
        _write(self, fn, args, result)
        self._version_counter[0] += 1
        if result._fw_grad is not None:  # forward-mode AD: the new tangent, written into the old one
            forward_ad.copy_tangent_in_place(self, result, lambda old, new: _write(old, fn, args, new))
        if result._grad_fn is not None:
            set_graph(self, result)
            saved_output_now_is(result, self)
            refresh_views(self)
        return self

    def _inplace_on_view(self, base, fn, args):
        """An in-place op on a view (``y[0].mul_(2)``, ``y.t().mul_(2)``, ``y.diagonal().add_(w)``).

        The view shares memory with its base, so the base's values change too; its
        graph must change with them: the base becomes ``base[index] = fn(view)``,
        where ``index`` says which base element each view element is (PyTorch's
        ``CopySlices``).  The base's ``_inplace`` then writes the memory, bumps the
        shared version and remakes the graph of every view of it, this one included.
        """
        message = view_error(self)  # a split/unbind output, or a view made under no_grad
        if message is not None:
            raise RuntimeError(message)
        if self._requires_grad and base._grad_fn is None:  # PyTorch: ``tensor._base().is_leaf()``
            raise RuntimeError(VIEW_OF_LEAF_INPLACE_ERROR)  # (also a base detached in place since)
        _check_memory(self, fn, args)
        read_graph(self)  # the op records the view's node: remade first if its base was written since
        index = base_index(self, base)
        if index is None:  # the base got other memory (``base.data = ...``): no longer a view
            del self._view_of
            return self._inplace(fn, *args)
        if getattr(fn, "overwrites", False):  # copy_, fill_: the old values (and their graph) are not read
            source = utils._Tensor._make(self._data)
        else:
            source = utils._Tensor._make(self._data.copy(), self._requires_grad, self._grad_fn, self._output_nr)
        if forward_ad._state.active:
            source = forward_ad.with_tangent_of(self, source)
        result = fn.apply(source, *args)
        _check_fits(self, result)
        repeats = has_internal_overlap(self._data)  # an expand (checked after the op's own checks, as PyTorch)
        refused = repeats and fn is not CopySlices and not _writes_an_expand_with_graph(fn, self, args, base)
        if refused and not _refused_at_backward(fn, self, args, base):
            raise RuntimeError(EXPANDED_INPLACE_ERROR)
        part = _written_part(fn, args, self._data) if repeats else None
        # the tangent is the view's, updated as a write of the view (PyTorch's forward mode does not go
        # through CopySlices: its forward base can be another tensor than ._base, a make_dual output)
        if part is not None:  # x[idx] = v, masked_fill_: only that part goes to the base (the rest repeats old values)
            forward_ad.without_tangents(base._inplace, CopySlices, tuple(i[part] for i in index), result[part])
        else:
            forward_ad.without_tangents(base._inplace, CopySlices, index, result)
        if result._fw_grad is not None:
            forward_ad.copy_tangent_in_place(self, result, lambda old, new: _write(old, fn, args, new))
        if refused:  # written as PyTorch's kernel writes; its backward refuses
            set_graph(base, forward_ad.without_tangents(_CopySlicesThroughAnExpand.apply, base))
            refresh_views(base)
        read_graph(self)  # PyTorch gives the view written its new node at once (the other views: when read)
        if result._grad_fn is not None:
            saved_output_now_is(result, self)
        return self

    def _inplace_view(self, fn, arguments):
        """``unsqueeze_``, ``squeeze_``, ``t_``...: this tensor becomes the view ``fn`` makes of it.

        The memory stays; shape and strides change, the version goes up, and the
        graph gets ``fn``'s node (``UnsqueezeBackward1``...).  Views of this tensor
        stay views of the same memory.  ``arguments()`` gives ``fn``'s arguments; it
        runs after the leaf check, as PyTorch checks autograd before the dims.
        """
        if inplace_interceptors.active:  # the profiler records ``aten::t_`` (no arguments to show)
            return inplace_interceptors.run(lambda t, f, _: t._make_view_in_place(f, arguments), self, fn, ())
        return self._make_view_in_place(fn, arguments)

    def _make_view_in_place(self, fn, arguments):
        if grad_mode.is_grad_enabled() and self._requires_grad:
            message = view_error(self)  # a split/unbind output, a view made under no_grad (or of one)
            if message is not None:
                raise RuntimeError(message)
            if is_raw_leaf(self):
                raise leaf_inplace_error(self)
            base = self.__dict__.get("_view_of")
            if base is not None and base._grad_fn is None:  # a leaf, or detached in place since
                raise RuntimeError(VIEW_OF_LEAF_INPLACE_ERROR)
        out = fn.apply(self, *arguments())
        self._data = out._data
        self._version_counter[0] += 1
        if out._fw_grad is not None:  # forward-mode AD: the tangent becomes the same view of itself
            forward_ad.view_tangent_in_place(self, out._fw_grad)
        if out._grad_fn is not None:
            set_graph(self, out, move_retained=False)  # PyTorch: a retained .grad is the old shape's
            if "_view_of" in self.__dict__:  # a view: its new node is of the new version (not remade when read)
                self._view_version = self._version_counter[0]
                self._grad_fn._use_error = FOLLOW_BASE
            refresh_views(self)
        return self

    def index_add_(self, dim, index, source, *, alpha=1):
        return self._inplace(indexing.IndexAdd, dim, index, source, alpha)

    def add_(self, other, *, alpha=1):
        if _inplace_no_graph(self, np.add, other, alpha):
            return self
        if alpha != 1:
            check_alpha(self, other, alpha)
        return self._inplace(pointwise.Add, other, alpha)

    def sub_(self, other, *, alpha=1):
        if _inplace_no_graph(self, np.subtract, other, alpha):
            return self
        if alpha != 1:
            check_alpha(self, other, utils.negated_alpha(alpha))
        return self._inplace(pointwise.Sub, other, alpha)

    def mul_(self, other):
        if _inplace_no_graph(self, np.multiply, other, 1):
            return self
        return self._inplace(pointwise.Mul, other)

    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return self._inplace(pointwise.Div, other)
        return self._inplace(pointwise.DivRounded, other, rounding_mode)

    def pow_(self, exponent):
        fn = pointwise.PowTensor if isinstance(exponent, utils._Tensor) else pointwise.Pow
        return self._inplace(fn, exponent)

    __iadd__ = add_

    __isub__ = sub_

    __imul__ = mul_

    __itruediv__ = div_

    def __ipow__(self, exponent):
        return self.pow_(exponent)

    def lerp_(self, end, weight):
        return self._inplace(pointwise.LerpTensor if isinstance(weight, utils._Tensor) else pointwise.Lerp, end, weight)

    def addcmul_(self, tensor1, tensor2, *, value=1):
        return self._inplace(pointwise.Addcmul, tensor1, tensor2, value)

    def addcdiv_(self, tensor1, tensor2, *, value=1):
        return self._inplace(pointwise.Addcdiv, tensor1, tensor2, value)

    def neg_(self):
        return self._inplace(pointwise.Neg)

    def exp_(self):
        return self._inplace(pointwise.Exp)

    def log_(self):
        return self._inplace(pointwise.Log)

    def sqrt_(self):
        return self._inplace(unary.Sqrt)

    def abs_(self):
        return self._inplace(unary.Abs)

    def sigmoid_(self):
        return self._inplace(pointwise.Sigmoid)

    def tanh_(self):
        return self._inplace(pointwise.Tanh)

    def relu_(self):
        return self._inplace(pointwise.Relu)

    def clamp_(self, min=None, max=None):
        if isinstance(min, utils._Tensor) or isinstance(max, utils._Tensor):
            return self._inplace(comparison.ClampTensor, min, max)
        return self._inplace(comparison.Clamp, min, max)

    clip_ = clamp_

    def clamp_min_(self, min):
        return self._inplace(comparison.ClampMin, min, None)

    def clamp_max_(self, max):
        return self._inplace(comparison.ClampMax, None, max)

    def masked_fill_(self, mask, value):
        fn = indexing.MaskedFillTensor if isinstance(value, utils._Tensor) else indexing.MaskedFill
        return self._inplace(fn, mask, value)

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        src = value if src is None else src
        fn = indexing.Scatter if isinstance(src, utils._Tensor) else indexing.ScatterValue
        return self._inplace(fn, dim, index, src, reduce)

    def scatter_add_(self, dim, index, src):
        return self._inplace(indexing.ScatterAdd, dim, index, src)

    def fill_(self, value):
        return self._inplace(FillTensor if isinstance(value, utils._Tensor) else Fill, value)

    def zero_(self):
        return self._inplace(Zero, 0)

    def copy_(self, src, non_blocking=False):
        return self._inplace(Copy, src)

    def triu_(self, diagonal=0):
        return self._inplace(linalg_fns.Triu, diagonal)

    def tril_(self, diagonal=0):
        return self._inplace(linalg_fns.Tril, diagonal)

    def sin_(self):
        return self._inplace(unary.Sin)

    def cos_(self):
        return self._inplace(unary.Cos)

    def log1p_(self):
        return self._inplace(unary.Log1p)

    def rsqrt_(self):
        return self._inplace(unary.Rsqrt)

    def reciprocal_(self):
        return self._inplace(unary.Reciprocal)

    def sign_(self):
        return self._inplace(unary.Sign)

    def floor_(self):
        return self._inplace(unary.Floor)

    def ceil_(self):
        return self._inplace(unary.Ceil)

    def trunc_(self):
        return self._inplace(unary.Trunc)

    def square_(self):
        return self.pow_(2)

    def erf_(self):
        return self._inplace(special.Erf)

    def erfinv_(self):
        return self._inplace(special.Erfinv)

    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        return self._inplace(unary.NanToNum, nan, posinf, neginf)

    def atan2_(self, other):
        return self._inplace(binary.Atan2, other)

    def hypot_(self, other):
        return self._inplace(binary.Hypot, other)

    def fmod_(self, other):
        return self._inplace(binary.Fmod, other)

    def cumprod_(self, dim, *, dtype=None):
        return self._inplace(reduction.Cumprod, wrap_dim(dim, self._data.ndim), dtype)

    def cumsum_(self, dim, *, dtype=None):
        return self._inplace(reduction.Cumsum, wrap_dim(dim, self._data.ndim), dtype)

    def tan_(self):
        return self._inplace(elementary.Tan)

    def asin_(self):
        return self._inplace(elementary.Asin)

    def acos_(self):
        return self._inplace(elementary.Acos)

    def atan_(self):
        return self._inplace(elementary.Atan)

    def sinh_(self):
        return self._inplace(elementary.Sinh)

    def cosh_(self):
        return self._inplace(elementary.Cosh)

    def asinh_(self):
        return self._inplace(elementary.AsinhInplace)  # its backward raises, as PyTorch's

    def acosh_(self):
        return self._inplace(elementary.AcoshInplace)  # its backward raises, as PyTorch's

    def atanh_(self):
        return self._inplace(elementary.AtanhInplace)  # its backward raises, as PyTorch's

    arcsin_, arccos_, arctan_, arcsinh_, arccosh_, arctanh_ = asin_, acos_, atan_, asinh_, acosh_, atanh_

    arctan2_ = atan2_

    def log2_(self):
        return self._inplace(elementary.Log2)

    def log10_(self):
        return self._inplace(elementary.Log10)

    def expm1_(self):
        return self._inplace(elementary.Expm1)

    def exp2_(self):
        return self._inplace(elementary.Exp2)

    def erfc_(self):
        return self._inplace(elementary.Erfc)

    def deg2rad_(self):
        return self._inplace(elementary.Deg2rad)

    def rad2deg_(self):
        return self._inplace(elementary.Rad2deg)
