"""The op methods and operators of ``Tensor`` (``x + y``, ``x.sum()``, ``x.add_()``...).

Each is a one-liner that calls the op's ``Function``.  In-place ops
(``add_``, ``mul_``...) compute the op, write the result into this tensor's
storage, bump the version counter and make this tensor the op's output.
"""
import numpy as np

from . import _dtype
from .autograd import grad_mode
from .autograd._functions import blas, indexing, pointwise, reduction, shape, utils

_state = grad_mode._state

LEAF_INPLACE_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."


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
        return pointwise.Mul.apply(pointwise.Pow.apply(self, -1), other)

    def __neg__(self):
        return pointwise.Neg.apply(self)

    def __pow__(self, exponent):
        return pointwise.Pow.apply(self, exponent)

    def __matmul__(self, other):
        return self.matmul(other)

    def __rmatmul__(self, other):
        return utils._Tensor._make(np.asarray(other)).matmul(self)

    def add(self, other, *, alpha=1):
        return pointwise.Add.apply(self, other, alpha)

    def sub(self, other, *, alpha=1):
        return pointwise.Sub.apply(self, other, alpha)

    def mul(self, other):
        return pointwise.Mul.apply(self, other)

    def div(self, other):
        return pointwise.Div.apply(self, other)

    def neg(self):
        return pointwise.Neg.apply(self)

    def pow(self, exponent):
        return pointwise.Pow.apply(self, exponent)

    def exp(self):
        return pointwise.Exp.apply(self)

    def log(self):
        return pointwise.Log.apply(self)

    def tanh(self):
        return pointwise.Tanh.apply(self)

    def sigmoid(self):
        return pointwise.Sigmoid.apply(self)

    def relu(self):
        return pointwise.Relu.apply(self)

    # -- matrix products ----------------------------------------------------
    def mm(self, other):
        return blas.Mm.apply(self, other)

    def matmul(self, other):
        if self.data.ndim == 2 and getattr(other, "ndim", 0) == 2:
            return blas.Mm.apply(self, other)
        return blas.Matmul.apply(self, other)

    # -- reductions ---------------------------------------------------------
    def sum(self, dim=None, keepdim=False, *, dtype=None):
        if dim is None:
            return reduction.SumAll.apply(self, None, False, dtype)
        return reduction.Sum.apply(self, dim, keepdim, dtype)

    def mean(self, dim=None, keepdim=False, *, dtype=None):
        if dim is None:
            return reduction.MeanAll.apply(self, None, False, dtype)
        return reduction.Mean.apply(self, dim, keepdim, dtype)

    def sum_to_size(self, *size):
        size = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
        if tuple(size) == self.data.shape:
            return self
        return reduction.SumToSize.apply(self, tuple(size))

    # -- shape ops ----------------------------------------------------------
    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
            raise NotImplementedError("view(dtype) is not supported by edutorch")
        return shape_mod.View.apply(self, _sizes(shape))

    def reshape(self, *shape):
        return shape_mod.Reshape.apply(self, _sizes(shape))

    def permute(self, *dims):
        return shape_mod.Permute.apply(self, _sizes(dims))

    def transpose(self, dim0, dim1):
        return shape_mod.Transpose.apply(self, dim0, dim1)

    def t(self):
        if self.data.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.data.ndim}D")
        return shape_mod.Transpose.apply(self, 0, 1) if self.data.ndim == 2 else self.view(self.data.shape)

    @property
    def T(self):
        return self.permute(*reversed(range(self.data.ndim)))

    def expand(self, *sizes):
        return shape_mod.Expand.apply(self, _sizes(sizes))

    def expand_as(self, other):
        return self.expand(other.shape)

    def unsqueeze(self, dim):
        from ._tensor import _wrap_dim

        dim = _wrap_dim(dim, self.data.ndim + 1)
        new = list(self.data.shape)
        new.insert(dim, 1)
        return shape_mod.View.apply(self, tuple(new))

    def squeeze(self, dim=None):
        from ._tensor import _wrap_dim

        old = self.data.shape
        if dim is None:
            new = tuple(s for s in old if s != 1)
        else:
            dims = {_wrap_dim(d, self.data.ndim) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
            new = tuple(s for i, s in enumerate(old) if not (i in dims and s == 1))
        return shape_mod.View.apply(self, new)

    def flatten(self, start_dim=0, end_dim=-1):
        from ._tensor import _wrap_dim

        old = self.data.shape
        if not old:
            return self.reshape(1)
        s, e = _wrap_dim(start_dim, len(old)), _wrap_dim(end_dim, len(old))
        return self.reshape(old[:s] + (-1,) + old[e + 1:])

    def __getitem__(self, idx):
        return indexing.Index.apply(self, indexing.to_index(idx))

    # -- copies and conversions ---------------------------------------------------
    def clone(self):
        return Clone.apply(self)

    def contiguous(self):
        return self

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
        if device is not None:
            out = ToDevice.apply(out, str(device).split(":")[0])
        if dtype is not None and out.data.dtype != dtype.np:
            out = ToDtype.apply(out, dtype)
        return out

    def float(self):
        return self.to(_dtype.float32)

    def double(self):
        return self.to(_dtype.float64)

    def half(self):
        return self.to(_dtype.float16)

    def long(self):
        return self.to(_dtype.int64)

    def int(self):
        return self.to(_dtype.int32)

    def bool(self):
        return self.to(_dtype.bool)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda")

    # -- in-place ops ---------------------------------------------------------
    def _inplace(self, fn, *args):
        """Run ``fn`` out of place, then write the result into this tensor's storage."""
        recording = _state["enabled"]
        if recording and self._requires_grad and self.grad_fn is None:
            raise RuntimeError(LEAF_INPLACE_ERROR)
        result = fn.apply(self, *args)
        try:
            np.copyto(self.data, result.data, casting="same_kind") if type(self.data) is np.ndarray \
                else self.data.__setitem__(Ellipsis, result.data)
        except TypeError:
            raise RuntimeError(
                f"result type {_type_word(result.dtype)} can't be cast to the desired output type "
                f"{_type_word(self.dtype)}"
            ) from None
        self._version_counter[0] += 1
        if result.grad_fn is not None:
            self.grad_fn, self._output_nr, self._requires_grad = result.grad_fn, result._output_nr, True
        return self

    def add_(self, other, *, alpha=1):
        return self._inplace(pointwise.Add, other, alpha)

    def sub_(self, other, *, alpha=1):
        return self._inplace(pointwise.Sub, other, alpha)

    def mul_(self, other):
        return self._inplace(pointwise.Mul, other)

    def div_(self, other):
        return self._inplace(pointwise.Div, other)

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    def fill_(self, value):
        return self._inplace(Fill, value)

    def zero_(self):
        return self._inplace(Fill, 0)

    def copy_(self, src, non_blocking=False):
        return self._inplace(Copy, src)

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        from . import random

        return random.uniform_(_check_leaf_inplace(self), a, b, generator=generator)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        from . import random

        return random.normal_(_check_leaf_inplace(self), mean, std, generator=generator)

    def __setitem__(self, idx, value):
        self._inplace(IndexPut, indexing.to_index(idx), value)


shape_mod = shape


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
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
    return names[d.name]


# -- small Functions that only make sense as Tensor methods -------------------
from .autograd.function import Function  # noqa: E402


class Clone(Function):
    _backward_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a):
        return a.data.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad


class ToDtype(Function):
    _backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, a, dtype):
        ctx.in_dtype = a.dtype
        return a.data.astype(dtype.np)

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.in_dtype), None


class ToDevice(Function):
    _backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, a, device_type):
        from . import backend

        ctx.in_device = a.device.type
        return backend.to_device(a.data, device_type)

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.in_device), None


class Fill(Function):
    """``fill_``: every element becomes ``value``; no gradient flows to the old values."""

    _backward_name = "FillBackward0"

    @staticmethod
    def forward(ctx, a, value):
        from . import backend

        xp = backend.get_array_module(a.data)
        v = value.data if isinstance(value, utils._Tensor) else value
        return xp.full(a.data.shape, v, dtype=a.data.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, None


class Copy(Function):
    """``copy_(src)``: the values of ``src`` (broadcast, cast); the gradient goes to ``src``."""

    _backward_name = "CopyBackwards"

    @staticmethod
    def forward(ctx, a, src):
        from . import backend

        ctx.src_meta = (src.data.shape, src.data.dtype)
        data = backend.to_device(src.data, backend.device_of(a.data))
        xp = backend.get_array_module(a.data)
        return xp.broadcast_to(data, a.data.shape).astype(a.data.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, utils.grad_for(grad, ctx.src_meta)


class IndexPut(Function):
    """``x[idx] = value``: the gradient of ``x`` is zero at ``idx``; ``value`` gets the rest."""

    _backward_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, a, idx, value):
        out = a.data.copy()
        v = value.data if isinstance(value, utils._Tensor) else value
        out[idx] = v
        ctx.idx = idx
        ctx.value_meta = (v.shape, v.dtype) if isinstance(value, utils._Tensor) else None
        return out

    @staticmethod
    def backward(ctx, grad):
        keep = grad.clone()
        keep.data[ctx.idx] = 0
        gv = None
        if ctx.needs_input_grad[2]:
            gv = utils.grad_for(grad[ctx.idx], ctx.value_meta)
        return keep, None, gv
