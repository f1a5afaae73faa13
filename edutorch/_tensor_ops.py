"""The op methods and operators of ``Tensor`` (``x + y``, ``x.sum()``, ``x.add_()``...).

Each is a one-liner that calls the op's ``Function``.  In-place ops
(``add_``, ``mul_``...) compute the op, write the result into this tensor's
storage, bump the version counter and make this tensor the op's output.
"""
import builtins
import weakref

import numpy as np

from . import _dtype, backend, return_types
from .autograd import _saved_tensor, grad_mode
from .autograd.function import Function
from .autograd._functions import (
    blas, comparison, indexing, pointwise, reduction, shape, softmax, sorting, unary, utils,
)
from .autograd._functions.tensor import Clone, Copy, CopySlices, Fill, IndexPut, ToDevice, ToDtype, Zero
from .autograd._functions import linalg as linalg_fns  # triu, diagonal, det, ... (matrix ops)
from ._dtype import is_floating as _is_floating

_state = grad_mode._state

LEAF_INPLACE_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE_ERROR = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)


class TensorOps:
    """Mixed into ``Tensor``: arithmetic, reductions, shape ops, in-place ops."""

    __slots__ = ()

    # -- arithmetic -------------------------------------------------------
    def __add__(self, other):
        return pointwise.Add.apply(self, other)

    __radd__ = __add__

    def __sub__(self, other):
        return pointwise.Sub.apply(self, other)

    def __rsub__(self, other):
        return pointwise.RSub.apply(self, other)

    def __mul__(self, other):
        return pointwise.Mul.apply(self, other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        return pointwise.Div.apply(self, other)

    def __rtruediv__(self, other):
        # PyTorch computes ``2 / x`` as ``reciprocal(x) * 2`` (a MulBackward0 node)
        return pointwise.Mul.apply(unary.Reciprocal.apply(self), other)

    def __neg__(self):
        return pointwise.Neg.apply(self)

    def __pow__(self, exponent):
        return self.pow(exponent)

    def __rpow__(self, base):
        return pointwise.RPow.apply(self, base)

    def __mod__(self, other):
        return self.remainder(other)

    def __rmod__(self, other):
        return pointwise.Remainder.apply(utils._Tensor._make(np.asarray(other, dtype=_scalar_dtype(self, other))), self)

    def __floordiv__(self, other):
        return self.div(other, rounding_mode="floor")

    def __rfloordiv__(self, other):
        return utils._Tensor._make(np.asarray(other, dtype=_scalar_dtype(self, other))).div(self, rounding_mode="floor")

    def remainder(self, other):
        fn = pointwise.Remainder if isinstance(other, utils._Tensor) else pointwise.RemainderScalar
        return fn.apply(self, other)

    def __matmul__(self, other):
        if self._data.ndim == 2 and other._data.ndim == 2:  # x @ W: straight to mm
            return blas.Mm.apply(self, other)
        return self.matmul(other)

    def __rmatmul__(self, other):
        return utils._Tensor._make(np.asarray(other)).matmul(self)

    def __abs__(self):
        return self.abs()

    def add(self, other, *, alpha=1):
        return pointwise.Add.apply(self, other, alpha)

    def sub(self, other, *, alpha=1):
        return pointwise.Sub.apply(self, other, alpha)

    def mul(self, other):
        return pointwise.Mul.apply(self, other)

    def div(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return pointwise.Div.apply(self, other)
        return _rounded_division(self, other, rounding_mode)

    def neg(self):
        return pointwise.Neg.apply(self)

    def pow(self, exponent):
        if isinstance(exponent, utils._Tensor):
            return pointwise.PowTensor.apply(self, exponent)
        if isinstance(exponent, int) and exponent < 0 and self._data.dtype.kind in "iub":
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return pointwise.Pow.apply(self, exponent)

    multiply, divide, subtract, negative = mul, div, sub, neg

    def lerp(self, end, weight):
        return pointwise.Lerp.apply(self, end, weight)

    def addcmul(self, tensor1, tensor2, *, value=1):
        return pointwise.Addcmul.apply(self, tensor1, tensor2, value)

    def addcdiv(self, tensor1, tensor2, *, value=1):
        return pointwise.Addcdiv.apply(self, tensor1, tensor2, value)

    def outer(self, vec2):
        return self.unsqueeze(1) * vec2.unsqueeze(0)

    # -- element-wise math ------------------------------------------------------
    def exp(self):
        return pointwise.Exp.apply(self if _is_floating(self._data.dtype) else _float(self))

    def log(self):
        return pointwise.Log.apply(self if _is_floating(self._data.dtype) else _float(self))

    def log1p(self):
        return unary.Log1p.apply(self)

    def sqrt(self):
        return unary.Sqrt.apply(self)

    def rsqrt(self):
        return unary.Rsqrt.apply(self)

    def abs(self):
        return unary.Abs.apply(self)

    def sign(self):
        return unary.Sign.apply(self)

    def sin(self):
        return unary.Sin.apply(self)

    def cos(self):
        return unary.Cos.apply(self)

    def tanh(self):
        return pointwise.Tanh.apply(self if _is_floating(self._data.dtype) else _float(self))

    def sigmoid(self):
        return pointwise.Sigmoid.apply(self if _is_floating(self._data.dtype) else _float(self))

    def relu(self):
        return pointwise.Relu.apply(self)

    def reciprocal(self):
        return unary.Reciprocal.apply(self)

    def round(self, *, decimals=0):
        if decimals:
            return (self * 10.0 ** decimals).round() / 10.0 ** decimals
        return self if not _is_floating(self._data.dtype) else unary.Round.apply(self)

    def floor(self):
        return self if not _is_floating(self._data.dtype) else unary.Floor.apply(self)

    def ceil(self):
        return self if not _is_floating(self._data.dtype) else unary.Ceil.apply(self)

    def trunc(self):
        return self if not _is_floating(self._data.dtype) else unary.Trunc.apply(self)

    def square(self):
        return self * self

    def clamp(self, min=None, max=None):
        if isinstance(min, utils._Tensor) or isinstance(max, utils._Tensor):
            return comparison.ClampTensor.apply(self, min, max)
        return comparison.Clamp.apply(self, min, max)

    clip = clamp

    def clamp_min(self, min):
        return comparison.ClampMin.apply(self, min, None)

    def clamp_max(self, max):
        return comparison.ClampMax.apply(self, None, max)

    def maximum(self, other):
        _check_other_is_tensor("maximum", other)
        return comparison.Maximum.apply(self, other)

    def minimum(self, other):
        _check_other_is_tensor("minimum", other)
        return comparison.Minimum.apply(self, other)

    def where(self, condition, other):
        return comparison.Where.apply(condition, self, other)

    def softmax(self, dim, dtype=None):
        return softmax.Softmax.apply(self if dtype is None else self.to(dtype), dim)

    def log_softmax(self, dim, dtype=None):
        return softmax.LogSoftmax.apply(self if dtype is None else self.to(dtype), dim)

    # -- comparison and logic: bool tensors, never part of the graph ------------
    def __eq__(self, other):
        return _compare(np.equal, self, other)

    def __ne__(self, other):
        return _compare(np.not_equal, self, other)

    def __lt__(self, other):
        return _compare(np.less, self, other)

    def __le__(self, other):
        return _compare(np.less_equal, self, other)

    def __gt__(self, other):
        return _compare(np.greater, self, other)

    def __ge__(self, other):
        return _compare(np.greater_equal, self, other)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__
    greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne

    def __and__(self, other):
        return _bitwise(np.bitwise_and, "bitwise_and", self, other)

    def __or__(self, other):
        return _bitwise(np.bitwise_or, "bitwise_or", self, other)

    def __xor__(self, other):
        return _bitwise(np.bitwise_xor, "bitwise_xor", self, other)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__
    bitwise_and, bitwise_or, bitwise_xor = __and__, __or__, __xor__

    def __invert__(self):
        if _is_floating(self._data.dtype):
            raise TypeError("ufunc 'invert' not supported for the input types") from None
        return utils._Tensor._make(np.invert(self._data))

    bitwise_not = __invert__

    def logical_and(self, other):
        return _compare(np.logical_and, self, other)

    def logical_or(self, other):
        return _compare(np.logical_or, self, other)

    def logical_xor(self, other):
        return _compare(np.logical_xor, self, other)

    def logical_not(self):
        return utils._Tensor._make(np.logical_not(self._data))

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        x, y = utils.binary_arrays(self, other)
        xp = backend.get_array_module(x)
        return utils._Tensor._make(xp.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(self.isclose(other, rtol, atol, equal_nan)._data.all())

    def equal(self, other):
        return self._data.shape == other._data.shape and bool((self._data == other._data).all())

    def isnan(self):
        return utils._Tensor._make(np.isnan(self._data))

    def isinf(self):
        return utils._Tensor._make(np.isinf(self._data))

    def isfinite(self):
        return utils._Tensor._make(np.isfinite(self._data))

    def all(self, dim=None, keepdim=False):
        return _logical_reduce(np.all, self, dim, keepdim)

    def any(self, dim=None, keepdim=False):
        return _logical_reduce(np.any, self, dim, keepdim)

    # -- matrix products ----------------------------------------------------
    def mm(self, other):
        return blas.Mm.apply(self, other)

    def bmm(self, other):
        return blas.Bmm.apply(self, other)

    def matmul(self, other):
        if self._data.ndim == 2 and other._data.ndim == 2:  # the common case, without the lookup
            return blas.Mm.apply(self, other)
        return blas.matmul_function(self._data.ndim, other._data.ndim).apply(self, other)

    def dot(self, other):
        if self._data.ndim != 1 or other._data.ndim != 1:
            raise RuntimeError(
                f"1D tensors expected, but got {self._data.ndim}D and {other._data.ndim}D tensors"
            )
        return blas.Dot.apply(self, other)

    def mv(self, vec):
        return blas.Mv.apply(self, vec)

    # -- reductions ---------------------------------------------------------
    def sum(self, dim=None, keepdim=False, *, dtype=None):
        if dim is None:
            return reduction.SumAll.apply(self, dtype)
        return reduction.Sum.apply(self, dim, keepdim, dtype)

    def mean(self, dim=None, keepdim=False, *, dtype=None):
        if dim is None:
            return reduction.MeanAll.apply(self, dtype)
        return reduction.Mean.apply(self, dim, keepdim, dtype)

    def prod(self, dim=None, keepdim=False, *, dtype=None):
        if dim is None:
            return reduction.ProdAll.apply(self, None, False, dtype)
        return reduction.Prod.apply(self, dim, keepdim, dtype)

    def var(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        return reduction.Var.apply(self, *_var_args(dim, unbiased, keepdim, correction))

    def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        return reduction.Std.apply(self, *_var_args(dim, unbiased, keepdim, correction))

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        if p == "fro" or p is None:
            if isinstance(dim, (tuple, list)) and len(dim) > 2:  # PyTorch sends these to matrix_norm
                raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got " + " ".join(map(str, dim)))
            p = 2
        return reduction.Norm.apply(self if dtype is None else self.to(dtype), p, dim, keepdim)

    def logsumexp(self, dim, keepdim=False):
        return reduction.LogSumExp.apply(self, dim, keepdim)

    def amax(self, dim=(), keepdim=False):
        return reduction.Amax.apply(self, dim, keepdim)

    def amin(self, dim=(), keepdim=False):
        return reduction.Amin.apply(self, dim, keepdim)

    def max(self, dim=None, keepdim=False):
        """``max()`` → value; ``max(dim)`` → (values, indices); ``max(other)`` → maximum."""
        if isinstance(dim, utils._Tensor):
            return self.maximum(dim)
        if dim is None:
            return reduction.MaxAll.apply(self)
        return return_types.max(*reduction.MaxDim.apply(self, dim, keepdim))

    def min(self, dim=None, keepdim=False):
        if isinstance(dim, utils._Tensor):
            return self.minimum(dim)
        if dim is None:
            return reduction.MinAll.apply(self)
        return return_types.min(*reduction.MinDim.apply(self, dim, keepdim))

    def cumsum(self, dim, *, dtype=None):
        return reduction.Cumsum.apply(self, _wrap_dim(dim, self._data.ndim), dtype)

    def sort(self, dim=-1, descending=False, stable=False):
        return return_types.sort(*sorting.Sort.apply(self, _wrap_dim(dim, self._data.ndim), descending))

    def argsort(self, dim=-1, descending=False, stable=False):
        return self.sort(dim, descending).indices

    def topk(self, k, dim=-1, largest=True, sorted=True):
        return return_types.topk(*sorting.TopK.apply(self, k, _wrap_dim(dim, self._data.ndim), largest))

    def argmax(self, dim=None, keepdim=False):
        return _arg_reduce(np.argmax, "argmax", self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return _arg_reduce(np.argmin, "argmin", self, dim, keepdim)

    def sum_to_size(self, *size):
        size = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
        if tuple(size) == self._data.shape:
            return self
        return reduction.SumToSize.apply(self, tuple(size))

    # -- shape ops ----------------------------------------------------------
    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
            raise TypeError("view(dtype) reinterprets bits; edutorch supports view(*shape) only")
        shape = _sizes(shape)
        return _view(self, shape_mod.View.apply(self, shape), lambda base: base.view(shape))

    def view_as(self, other):
        return self.view(other.shape)

    def reshape(self, *shape):
        shape = _sizes(shape)
        if not shape_mod.can_view(self._data, shape):
            return shape_mod.UnsafeView.apply(self, shape)  # a copy: not a view
        return _view(self, shape_mod.View.apply(self, shape), lambda base: base.reshape(shape))

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def permute(self, *dims):
        dims = _sizes(dims)
        return _view(self, shape_mod.Permute.apply(self, dims), lambda base: base.permute(dims))

    def transpose(self, dim0, dim1):
        return _view(self, shape_mod.Transpose.apply(self, dim0, dim1), lambda base: base.transpose(dim0, dim1))

    swapaxes = swapdims = transpose

    def t(self):
        if self._data.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D")
        dims = (0, 1) if self._data.ndim == 2 else (0, 0)
        return _view(self, shape_mod.T.apply(self, *dims), lambda base: base.t())

    @property
    def T(self):
        if self._data.ndim not in (0, 2):
            import warnings

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
        return _view(self, shape_mod.Expand.apply(self, sizes), lambda base: base.expand(sizes))

    def expand_as(self, other):
        return self.expand(other.shape)

    def unsqueeze(self, dim):
        dim = _wrap_dim(dim, self._data.ndim + 1)
        new = list(self._data.shape)
        new.insert(dim, 1)
        return _view(self, shape_mod.Unsqueeze.apply(self, tuple(new)), lambda base: base.unsqueeze(dim))

    def squeeze(self, dim=None):
        old = self._data.shape
        if dim is None:
            out = shape_mod.Squeeze.apply(self, tuple(s for s in old if s != 1))
        else:
            fn = shape_mod.SqueezeDims if isinstance(dim, (tuple, list)) else shape_mod.SqueezeDim
            dims = {_wrap_dim(d, self._data.ndim) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
            out = fn.apply(self, tuple(s for i, s in enumerate(old) if not (i in dims and s == 1)))
        return _view(self, out, lambda base: base.squeeze(dim))

    def flatten(self, start_dim=0, end_dim=-1):
        old = self._data.shape
        if not old:
            return self.reshape(1)
        s, e = _wrap_dim(start_dim, len(old)), _wrap_dim(end_dim, len(old))
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if s == e:
            return self
        return self.reshape(old[:s] + (-1,) + old[e + 1:])

    def unflatten(self, dim, sizes):
        old = self._data.shape
        d = _wrap_dim(dim, len(old))
        return self.view(old[:d] + tuple(sizes) + old[d + 1:])

    def flip(self, *dims):
        dims = tuple(_wrap_dim(d, self._data.ndim) for d in _sizes(dims))
        return shape_mod.Flip.apply(self, dims)

    def repeat(self, *sizes):
        return shape_mod.Repeat.apply(self, _sizes(sizes))

    def narrow(self, dim, start, length):
        axis = _wrap_dim(dim, self._data.ndim)
        size = self._data.shape[axis]
        start = start + size if start < 0 else start
        if start + length > size:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
        out = shape_mod.Narrow.apply(self, axis, start, length)
        if _state["enabled"]:  # a slice: an in-place op on it writes back like ``base[idx] = ...``
            _track_view(self, out, (slice(None),) * axis + (slice(start, start + length),), None)
        return out

    def split(self, split_size, dim=0):
        axis = _wrap_dim(dim, self._data.ndim)
        size = self._data.shape[axis]
        if isinstance(split_size, int):
            if split_size <= 0 and size:
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
            sizes = [min(split_size, size - i) for i in range(0, size, split_size)] if size else [0]
            return _multi_view(self, shape_mod.Split.apply(self, tuple(sizes), axis), "Split",
                               lambda base: base.split(split_size, dim))
        sizes = tuple(split_size)
        if builtins.sum(sizes) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                f"dimension {axis}), but got split_sizes={list(sizes)}"
            )
        return _multi_view(self, shape_mod.SplitWithSizes.apply(self, sizes, axis), "SplitWithSizes",
                           lambda base: base.split(sizes, dim))

    def chunk(self, chunks, dim=0):
        if chunks <= 0:
            raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
        size = self._data.shape[_wrap_dim(dim, self._data.ndim)]
        return self.split(-(-size // chunks) if size else 1, dim)

    def unbind(self, dim=0):
        return _multi_view(self, shape_mod.Unbind.apply(self, _wrap_dim(dim, self._data.ndim)), "Unbind",
                           lambda base: base.unbind(dim))

    # -- indexing -----------------------------------------------------------------
    def __getitem__(self, index):
        idx = indexing.to_index(index)
        parts = indexing.integers_first(idx, self._data.ndim)
        if parts is not None:  # PyTorch's order: the integers, then the arrays
            return self[parts[0]][parts[1]]
        if indexing.is_basic(idx):
            out = indexing.basic_index_class(idx).apply(self, idx)
            if _state["enabled"]:
                _track_view(self, out, idx, None)  # so an in-place op on the view can update the base's graph
            return out
        return indexing.Index.apply(self, idx, saved=indexing.index_tensors(index))

    def nonzero(self, *, as_tuple=False):
        """Positions of the non-zero entries: an (N, ndim) int64 tensor, or one per dim."""
        positions = np.nonzero(self._data if self._data.ndim else self._data.reshape(1))
        make = utils._Tensor._make
        if as_tuple:
            return tuple(make(p.astype(np.int64)) for p in positions)
        xp = backend.get_array_module(self._data)
        return make(xp.stack(positions, axis=1).astype(np.int64) if self._data.ndim
                    else xp.zeros((len(positions[0]), 0), dtype=np.int64))

    def index_select(self, dim, index):
        return indexing.IndexSelect.apply(self, _wrap_dim(dim, self._data.ndim), index)

    def masked_select(self, mask):
        return indexing.MaskedSelect.apply(self, mask)

    def masked_fill(self, mask, value):
        fn = indexing.MaskedFillTensor if isinstance(value, utils._Tensor) else indexing.MaskedFill
        return fn.apply(self, mask, value)

    def gather(self, dim, index):
        return indexing.Gather.apply(self, dim, index)

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        src = value if src is None else src
        if isinstance(src, utils._Tensor):
            return indexing.Scatter.apply(self, dim, index, src, reduce)
        return indexing.ScatterValue.apply(self, dim, index, src, reduce)

    def scatter_add(self, dim, index, src):
        return indexing.ScatterAdd.apply(self, dim, index, src)

    # -- new tensors like this one --------------------------------------------------
    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        from . import _creation

        return _creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                                requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        from . import _creation

        return _creation.zeros(*size, dtype=dtype or self.dtype, device=device or self.device,
                               requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        from . import _creation

        return _creation.ones(*size, dtype=dtype or self.dtype, device=device or self.device,
                              requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        from . import _creation

        return _creation.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                              requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        from . import _creation

        return _creation.empty(*size, dtype=dtype or self.dtype, device=device or self.device,
                               requires_grad=requires_grad)

    # -- copies and conversions ---------------------------------------------------
    def clone(self):
        return Clone.apply(self)

    def contiguous(self):
        if self._data.flags.c_contiguous:
            return self
        return Clone.apply(self)

    def is_contiguous(self):
        return bool(self._data.flags.c_contiguous)

    def to(self, *args, **kwargs):
        """``to(dtype)``, ``to(device)``, ``to(other)``, ``to(device, dtype)``."""
        dtype, device = kwargs.get("dtype"), kwargs.get("device")
        for a in args:
            if isinstance(a, _dtype.dtype):
                dtype = a
            elif isinstance(a, utils._Tensor):
                dtype, device = a.dtype, a.device
            elif a is not None:
                device = a
        out = self
        if device is not None and str(device).split(":")[0] != self.device.type:
            out = ToDevice.apply(out, str(device).split(":")[0])
        if dtype is not None and out._data.dtype != dtype.np:
            out = ToDtype.apply(out, dtype)
        return out

    def type_as(self, other):
        return self.to(other.dtype)

    def float(self):
        return self.to(_dtype.float32)

    def double(self):
        return self.to(_dtype.float64)

    def half(self):
        return self.to(_dtype.float16)

    def bfloat16(self):
        return self.to(_dtype.bfloat16)

    def long(self):
        return self.to(_dtype.int64)

    def int(self):
        return self.to(_dtype.int32)

    def short(self):
        return self.to(_dtype.int16)

    def char(self):
        return self.to(_dtype.int8)

    def byte(self):
        return self.to(_dtype.uint8)

    def bool(self):
        return self.to(_dtype.bool)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda")

    # -- in-place ops ---------------------------------------------------------
    def _inplace(self, fn, *args):
        """Run ``fn`` out of place, then write the result into this tensor's storage."""
        _check_writable(self)
        recording = _state["enabled"]
        if recording and self._requires_grad and self.grad_fn is None:
            raise RuntimeError(LEAF_INPLACE_ERROR)
        view_of = self.__dict__.get("_view_of") if recording else None
        if view_of is not None and (self._requires_grad or _any_requires_grad(args)):
            return self._inplace_on_view(view_of, fn, args)
        source = self
        if recording and (self._requires_grad or _any_requires_grad(args)):
            # the input as a tensor of its own (same array, own version counter), so that
            # backward can save it without seeing the write below
            # under saved-tensor hooks the pack hook keeps the input before the write below: give it
            # a copy of the old values (PyTorch saves a clone of self), not the array about to change
            data = self._data.copy() if _saved_tensor._stack else self._data
            source = utils._Tensor._make(data, self._requires_grad, self.grad_fn, self._output_nr)
        result = fn.apply(source, *args)
        if source is not self and _saved_by(result.grad_fn, source):
            source._data = source._data.copy()  # saved for backward: keep the old values
        if result._data.shape != self._data.shape:
            raise RuntimeError(
                f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                f"{list(result._data.shape)}"
            )
        try:
            np.copyto(self._data, result._data, casting="same_kind") if type(self._data) is np.ndarray \
                else self._data.__setitem__(Ellipsis, result._data)
        except TypeError:
            raise RuntimeError(
                f"result type {_type_word(result.dtype)} can't be cast to the desired output type "
                f"{_type_word(self.dtype)}"
            ) from None
        self._version_counter[0] += 1
        if result.grad_fn is not None:
            self.grad_fn, self._output_nr, self._requires_grad = result.grad_fn, result._output_nr, True
            _saved_output_is_now(result, self)
            _refresh_views(self)
        return self

    def _inplace_on_view(self, view_of, fn, args):
        """An in-place op on a view (``y[0].mul_(2)``, ``y.t().mul_(2)``) is recorded on the base.

        The view shares memory with its base, so the base's values change too; its
        graph must change with them.  For an indexed view, ``base[idx] = fn(view)``
        says exactly that (PyTorch's ``CopySlices``).  A reshaped / transposed view
        covers every element of the base: the new values, put back in the base's
        order, replace the whole base.  Then the view is made again from the new base.
        """
        base, idx, remake = view_of
        if "_multi_view" in self.__dict__:  # one of several views returned by split/unbind
            raise RuntimeError(_multi_view_error(self))
        if base._requires_grad and base.grad_fn is None:
            raise RuntimeError(VIEW_OF_LEAF_INPLACE_ERROR)
        source = utils._Tensor._make(self._data.copy(), self._requires_grad, self.grad_fn, self._output_nr)
        result = fn.apply(source, *args)
        if result._data.shape != self._data.shape:
            raise RuntimeError(
                f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                f"{list(result._data.shape)}"
            )
        if remake is None:  # ``base[idx]``: ``idx`` itself may be None (``x[None]``)
            base[idx] = result  # writes through the shared memory and bumps the shared version
            fresh = base[idx]  # this view, now computed from the updated base
        else:
            base[...] = _in_base_order(result, base, remake)
            fresh = remake(base)
        self.grad_fn, self._output_nr, self._requires_grad = fresh.grad_fn, fresh._output_nr, fresh._requires_grad
        if result.grad_fn is not None:
            _saved_output_is_now(result, self)
        return self

    def add_(self, other, *, alpha=1):
        if _inplace_no_graph(self, np.add, other, alpha):
            return self
        return self._inplace(pointwise.Add, other, alpha)

    def sub_(self, other, *, alpha=1):
        if _inplace_no_graph(self, np.subtract, other, alpha):
            return self
        return self._inplace(pointwise.Sub, other, alpha)

    def mul_(self, other):
        if _inplace_no_graph(self, np.multiply, other, 1):
            return self
        return self._inplace(pointwise.Mul, other)

    def div_(self, other):
        return self._inplace(pointwise.Div, other)

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
        return self._inplace(pointwise.Lerp, end, weight)

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
        return self._inplace(Fill, value)

    def zero_(self):
        return self._inplace(Zero, 0)

    def copy_(self, src, non_blocking=False):
        return self._inplace(Copy, src)

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        from . import random

        return random.uniform_(_check_leaf_inplace(self), a, b, generator=generator)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        from . import random

        return random.normal_(_check_leaf_inplace(self), mean, std, generator=generator)

    def bernoulli_(self, p=0.5, *, generator=None):
        from . import random

        return random.bernoulli_(_check_leaf_inplace(self), p, generator=generator)

    def __setitem__(self, index, value):
        idx = indexing.to_index(index)
        parts = indexing.integers_first(idx, self._data.ndim)
        if parts is not None:  # PyTorch's order: write into the view the integers select
            if _state["enabled"] and self._requires_grad and self.grad_fn is None:
                raise RuntimeError(LEAF_INPLACE_ERROR)
            self[parts[0]][parts[1]] = value
            return
        if indexing.is_basic(idx):
            self._inplace(CopySlices, idx, value)
        else:
            self._inplace(IndexPut, idx, value, indexing.index_tensors(index))

    # -- matrices (autograd/_functions/linalg.py) ------------------------------
    def triu(self, diagonal=0):
        return linalg_fns.Triu.apply(self, diagonal)

    def tril(self, diagonal=0):
        return linalg_fns.Tril.apply(self, diagonal)

    def triu_(self, diagonal=0):
        return self._inplace(linalg_fns.Triu, diagonal)

    def tril_(self, diagonal=0):
        return self._inplace(linalg_fns.Tril, diagonal)

    def diagonal(self, offset=0, dim1=0, dim2=1):
        return linalg_fns.Diagonal.apply(self, offset, dim1, dim2)

    def diag(self, diagonal=0):
        from ._linalg_functional import diag

        return diag(self, diagonal)

    def dist(self, other, p=2):
        return linalg_fns.Dist.apply(self, other, p)

    def det(self):
        return linalg_fns.Det.apply(self)

    def inverse(self):
        return linalg_fns.Inv.apply(self)

    def matrix_exp(self):
        return linalg_fns.MatrixExp.apply(self)


shape_mod = shape


_wrap_dim = utils.wrap_dim


def _float(t):
    """Integer tensors enter float-only math (exp, log, 1/x...) as the default float dtype."""
    if _is_floating(t._data.dtype):
        return t
    return utils._Tensor._make(t._data.astype(_dtype.get_default_dtype().np))


def _compare(ufunc, a, b):
    """``a == b`` and friends: compared after PyTorch's type promotion; a bool tensor."""
    if not isinstance(b, (utils._Tensor, builtins.int, builtins.float, builtins.bool)):
        return NotImplemented
    x, y = utils.binary_arrays(a, b)
    return utils._Tensor._make(ufunc(x, y))


def _bitwise(ufunc, name, a, b):
    """``&``, ``|``, ``^``: logical on bool tensors, bitwise on integers."""
    x, y = utils.binary_arrays(a, b)
    if getattr(x, "dtype", np.dtype(type(x))).kind == "f" or getattr(y, "dtype", np.dtype(type(y))).kind == "f":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'Float\'')
    return utils._Tensor._make(ufunc(x, y))


def _logical_reduce(fn, t, dim, keepdim):
    """``all``/``any``: reduce to a bool tensor (no graph)."""
    axis = None if dim is None else tuple(_wrap_dim(d, t._data.ndim) for d in
                                          (dim if isinstance(dim, (tuple, list)) else (dim,)))
    return utils._Tensor._make(np.asarray(fn(t._data, axis=axis, keepdims=keepdim)))


def _arg_reduce(fn, name, t, dim, keepdim):
    """``argmax``/``argmin``: int64 positions; with no dim, into the flattened tensor."""
    x = t._data
    if x.size == 0 and (dim is None or x.shape[_wrap_dim(dim, x.ndim)] == 0):  # nothing to pick from
        raise IndexError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            if dim is None else f"{name}(): Expected reduction dim {dim} to have non-zero size."
        )
    if dim is None:
        out = fn(x.reshape(-1))
        if keepdim:
            out = np.reshape(out, (1,) * x.ndim)
    else:
        out = fn(x, axis=_wrap_dim(dim, x.ndim), keepdims=keepdim) if x.ndim else fn(x.reshape(1))
    return utils._Tensor._make(np.asarray(out).astype(np.int64))


def _var_args(dim, unbiased, keepdim, correction):
    """``var``/``std`` accept ``var(dim, unbiased, keepdim)`` and ``correction=``."""
    if isinstance(dim, builtins.bool):  # var(False): the old ``unbiased`` positional form
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased else 0
    return dim, correction, keepdim


def _scalar_dtype(t, scalar):
    """The dtype a Python number takes next to ``t`` (PyTorch's promotion)."""
    return _dtype.result_type(t, scalar).np


def _rounded_division(a, b, mode):
    """``div(..., rounding_mode='floor'|'trunc')``: a step function, so no gradient flows."""
    if mode not in ("floor", "trunc"):
        raise ValueError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" + str(mode) + "'"
        )
    x, y = utils.binary_arrays(a, b)
    if x.dtype.kind in "biu":
        utils.check_integer_divisor(x, y, f"div_{mode}_cpu")
        out = np.floor_divide(x, y) if mode == "floor" else np.trunc(np.true_divide(x, y)).astype(x.dtype)
    else:
        with utils.quiet_fp():  # x // 0 is inf or nan for floats, silently
            out = np.floor(x / y) if mode == "floor" else np.trunc(x / y)
    return utils._Tensor._make(np.asarray(out))


def _inplace_no_graph(t, ufunc, other, alpha):
    """``t op= alpha * other`` written straight into ``t``'s array, when no graph is recorded.

    The optimizers' path (``p.add_(grad, alpha=-lr)`` under ``no_grad``): one NumPy
    call with ``out=``.  Only a float CPU tensor with a same-dtype tensor or a
    Python number qualifies; returns False for anything else (a graph to record,
    dtype promotion, shapes that do not fit), and the general path takes over
    with PyTorch's errors.
    """
    x = t._data
    if type(x) is not np.ndarray or not _is_floating(x.dtype) or not x.flags.writeable:
        return False
    recording = _state["enabled"]
    if isinstance(other, utils._Tensor):
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
    except (ValueError, OverflowError):  # checked before anything is written
        return False
    t._version_counter[0] += 1
    return True


def _saved_by(node, t):
    """Did ``node`` save ``t`` for backward?  (The in-place ops copy their input only then.)"""
    if node is None:
        return False
    for entry in node._saved:
        if entry[0] is t:
            return True
    return False


def _check_other_is_tensor(name, other):
    """``t.maximum(2)``: PyTorch takes only a Tensor here (``clamp`` takes numbers)."""
    if not isinstance(other, utils._Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")


def _saved_output_is_now(result, t):
    """The op saved its output ``result`` (``relu_``, ``exp_``...): that output now is ``t``.

    In PyTorch the saved result of an in-place op is the tensor itself, so a later
    in-place change of ``t`` makes backward raise; point the saved entry at ``t``'s
    memory and version counter so the same check fires here.
    """
    node = result.grad_fn
    saved = node._saved
    for i, entry in enumerate(saved):
        if len(entry) == 4 and entry[0] is result._data:  # (array, counter, version, output_nr)
            saved[i] = (t._data, t._version_counter, t._version_counter[0], entry[3])


def _any_requires_grad(args):
    return any(isinstance(a, utils._Tensor) and a._requires_grad for a in args)


# -- views: what an in-place op on a view must know about its base ----------------
def _view(base, out, remake):
    """Remember that ``out`` is a view of ``base`` that ``remake(base)`` makes again.

    An in-place op on ``out`` then rewrites ``base``'s graph too (PyTorch's view
    tracking).  Only a real view counts: it shares the base's version counter
    (``reshape`` of a non-contiguous tensor copies, and is not one).
    """
    if _state["enabled"] and out._version_counter is base._version_counter:
        _track_view(base, out, None, remake)
    return out


def _track_view(base, view, idx, remake):
    """Link ``view`` to ``base`` both ways: the view knows how it was made (``base[idx]``
    or ``remake(base)``), the base knows its live views (weakly, so they can still die)."""
    view._view_of = (base, idx, remake)
    views = base.__dict__.get("_views")
    if views is None:
        views = base._views = weakref.WeakSet()
    views.add(view)


def _refresh_views(base):
    """After an in-place op gave ``base`` a new ``grad_fn``, remake its views' graph.

    An older view shares the new values (same memory) and must share the new
    graph too: PyTorch regenerates a view's ``grad_fn`` when its base changed.
    Views of views are refreshed in turn.
    """
    views = base.__dict__.get("_views")
    if not views:
        return
    # split/unbind outputs from the highest down: output 0's error node is then the
    # newest, so backward raises its error, the one PyTorch raises (output 0 is used first).
    for view in sorted(views, key=lambda v: v.__dict__.get("_multi_view", ("", -1))[1], reverse=True):
        _, idx, remake = view._view_of
        if "_multi_view" in view.__dict__:  # PyTorch refuses such a view once its base changed
            fresh = _ModifiedMultiView.apply(view, _multi_view_error(view, base_modified=True))
        else:
            fresh = base[idx] if remake is None else remake(base)
        view.grad_fn, view._output_nr, view._requires_grad = fresh.grad_fn, fresh._output_nr, fresh._requires_grad
        _refresh_views(view)


def _multi_view(base, outs, name, remake_all):
    """``split``/``unbind`` return several views: PyTorch forbids in-place ops on them
    (but each is still remade when its base changes)."""
    if _state["enabled"]:
        for nr, out in enumerate(outs):
            _track_view(base, out, None, lambda b, nr=nr: remake_all(b)[nr])
            out._multi_view = (name, nr)
    return outs


def _multi_view_error(view, base_modified=False):
    name, nr = view._multi_view
    what = "its base or another view of its base has been modified inplace" if base_modified \
        else "is being modified inplace"
    return (
        f"Output {nr} of {name} is a view and {what}. This view is the output of "
        "a function that returns multiple views. Such functions do not allow the output views to be "
        "modified inplace. You should replace the inplace operation by an out-of-place one."
    )


class _ModifiedMultiView(Function):
    """The graph of a split/unbind output whose base changed in place: its backward raises
    PyTorch's error (PyTorch raises it when the view is next used; here, at backward)."""

    _backward_name = "Error"

    @staticmethod
    def forward(ctx, view, message):
        ctx.message = message
        return view._data

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(ctx.message)


def _in_base_order(values, base, remake):
    """``values`` (shaped like the view ``remake(base)``) rearranged into ``base``'s shape.

    Which base element each view element is: make the same view of the base's
    positions ``0 .. n-1``; sorting by position puts every value back in place.
    The rearrangement is an index op, so gradients flow through it.
    """
    with grad_mode.no_grad():
        positions = remake(utils._Tensor._make(np.arange(base._data.size).reshape(base._data.shape)))._data
    order = np.argsort(positions.reshape(-1), kind="stable")
    return values.reshape(-1)[utils._Tensor._make(order)].reshape(base._data.shape)


EXPANDED_INPLACE_ERROR = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory "
    "location. Please clone() the tensor before performing the operation."
)


def _check_writable(t):
    """An expanded tensor (0-stride broadcast view) cannot be written: PyTorch's error, not NumPy's."""
    data = t._data
    if type(data) is np.ndarray and not data.flags.writeable:
        raise RuntimeError(EXPANDED_INPLACE_ERROR)


def _check_leaf_inplace(t):
    if _state["enabled"] and t._requires_grad and t.grad_fn is None:
        raise RuntimeError(LEAF_INPLACE_ERROR)
    return t


def _sizes(args):
    """Accept ``f(2, 3)`` and ``f((2, 3))`` alike, as PyTorch's size arguments do."""
    if len(args) == 1 and not isinstance(args[0], int):
        return tuple(args[0])
    return args


def _type_word(d):
    return _dtype.scalar_type_name(d)
