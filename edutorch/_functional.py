"""The ``torch.<op>`` functions (``torch.add(x, y)``, ``torch.exp(x)``...).

Each calls the Tensor method of the same name, so there is one definition
of every op.  Ops that take several tensors (``cat``, ``stack``, ``where``)
live here and call their ``Function`` directly.
"""

from ._tensor import Tensor
from .autograd._functions import comparison, shape


# -- arithmetic ------------------------------------------------------------------
def add(input, other, *, alpha=1):
    if not isinstance(input, Tensor):
        return other.add(input, alpha=alpha) if alpha == 1 else (other * alpha).add(input)
    return input.add(other, alpha=alpha)


def sub(input, other, *, alpha=1):
    if not isinstance(input, Tensor):
        return other.mul(-alpha).add(input)
    return input.sub(other, alpha=alpha)


def mul(input, other):
    return input.mul(other) if isinstance(input, Tensor) else other.mul(input)


def div(input, other, *, rounding_mode=None):
    if not isinstance(input, Tensor):
        return other.__rtruediv__(input) if rounding_mode is None else other.new_tensor(input).div(other, rounding_mode=rounding_mode)
    return input.div(other, rounding_mode=rounding_mode)


def pow(input, exponent):
    return input.pow(exponent) if isinstance(input, Tensor) else exponent.__rpow__(input)


def remainder(input, other):
    return input.remainder(other) if isinstance(input, Tensor) else other.__rmod__(input)


def floor_divide(input, other):
    return input // other


multiply, divide, subtract = mul, div, sub


def neg(input):
    return input.neg()


negative = neg


# -- element-wise math -------------------------------------------------------------
def exp(input):
    return input.exp()


def log(input):
    return input.log()


def log1p(input):
    return input.log1p()


def sqrt(input):
    return input.sqrt()


def rsqrt(input):
    return input.rsqrt()


def abs(input):
    return input.abs()


def sign(input):
    return input.sign()


def sin(input):
    return input.sin()


def cos(input):
    return input.cos()


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def relu(input):
    return input.relu()


def reciprocal(input):
    return input.reciprocal()


def square(input):
    return input.square()


def round(input, *, decimals=0):
    return input.round(decimals=decimals)


def floor(input):
    return input.floor()


def ceil(input):
    return input.ceil()


def trunc(input):
    return input.trunc()


def clamp(input, min=None, max=None):
    return input.clamp(min, max)


clip = clamp


def clamp_min(input, min):
    return input.clamp_min(min)


def clamp_max(input, max):
    return input.clamp_max(max)


def maximum(input, other):
    _check_tensor_args("maximum", input, other)
    return input.maximum(other)


def minimum(input, other):
    _check_tensor_args("minimum", input, other)
    return input.minimum(other)


def _check_tensor_args(name, input, other):
    """``torch.maximum(2, t)``: PyTorch's TypeError for an argument that is not a Tensor."""
    for position, (arg_name, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg_name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")


def where(condition, input=None, other=None):
    """``where(cond, a, b)``; ``where(cond)`` alone gives the indices of True entries."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    return comparison.Where.apply(condition, input, other)


def softmax(input, dim, dtype=None):
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    return input.log_softmax(dim, dtype=dtype)


# -- comparison and logic ----------------------------------------------------------
def eq(input, other):
    return input.eq(other)


def ne(input, other):
    return input.ne(other)


def lt(input, other):
    return input.lt(other)


def le(input, other):
    return input.le(other)


def gt(input, other):
    return input.gt(other)


def ge(input, other):
    return input.ge(other)


greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne


def logical_and(input, other):
    return input.logical_and(other)


def logical_or(input, other):
    return input.logical_or(other)


def logical_xor(input, other):
    return input.logical_xor(other)


def logical_not(input):
    return input.logical_not()


def bitwise_and(input, other):
    return input & other


def bitwise_or(input, other):
    return input | other


def bitwise_xor(input, other):
    return input ^ other


def bitwise_not(input):
    return ~input


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return input.isclose(other, rtol, atol, equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return input.allclose(other, rtol, atol, equal_nan)


def equal(input, other):
    return input.equal(other)


def isnan(input):
    return input.isnan()


def isinf(input):
    return input.isinf()


def isfinite(input):
    return input.isfinite()


def all(input, dim=None, keepdim=False):
    return input.all(dim, keepdim)


def any(input, dim=None, keepdim=False):
    return input.any(dim, keepdim)


# -- matrix products ------------------------------------------------------------------
def mm(input, mat2):
    return input.mm(mat2)


def bmm(input, mat2):
    return input.bmm(mat2)


def matmul(input, other):
    return input.matmul(other)


def dot(input, other):
    return input.dot(other)


def mv(input, vec):
    return input.mv(vec)


# -- reductions -----------------------------------------------------------------------
def sum(input, dim=None, keepdim=False, *, dtype=None):
    return input.sum(dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    return input.mean(dim, keepdim, dtype=dtype)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    return input.prod(dim, keepdim, dtype=dtype)


def var(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    return input.var(dim, unbiased, keepdim, correction=correction)


def std(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    return input.std(dim, unbiased, keepdim, correction=correction)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    return input.norm(p, dim, keepdim, dtype)


def logsumexp(input, dim, keepdim=False):
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' (position 2) must be tuple of ints, not NoneType")
    return input.logsumexp(dim, keepdim)


def amax(input, dim=(), keepdim=False):
    return input.amax(dim, keepdim)


def amin(input, dim=(), keepdim=False):
    return input.amin(dim, keepdim)


def max(input, dim=None, keepdim=False):
    return input.max(dim, keepdim)


def min(input, dim=None, keepdim=False):
    return input.min(dim, keepdim)


def argmax(input, dim=None, keepdim=False):
    return input.argmax(dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    return input.argmin(dim, keepdim)


def cumsum(input, dim, *, dtype=None):
    return input.cumsum(dim, dtype=dtype)


def sort(input, dim=-1, descending=False, stable=False):
    return input.sort(dim, descending, stable)


def argsort(input, dim=-1, descending=False, stable=False):
    return input.argsort(dim, descending, stable)


def topk(input, k, dim=-1, largest=True, sorted=True):
    return input.topk(k, dim, largest, sorted)


def lerp(input, end, weight):
    return input.lerp(end, weight)


def addcmul(input, tensor1, tensor2, *, value=1):
    return input.addcmul(tensor1, tensor2, value=value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    return input.addcdiv(tensor1, tensor2, value=value)


def outer(input, vec2):
    return input.outer(vec2)


# -- shape ops -------------------------------------------------------------------------
def reshape(input, shape):
    return input.reshape(shape)


def transpose(input, dim0, dim1):
    return input.transpose(dim0, dim1)


swapaxes = swapdims = transpose


def permute(input, dims):
    return input.permute(dims)


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def unflatten(input, dim, sizes):
    return input.unflatten(dim, sizes)


def unsqueeze(input, dim):
    return input.unsqueeze(dim)


def squeeze(input, dim=None):
    return input.squeeze(dim)


def t(input):
    return input.t()


def narrow(input, dim, start, length):
    return input.narrow(dim, start, length)


def split(tensor, split_size_or_sections, dim=0):
    return tensor.split(split_size_or_sections, dim)


def chunk(input, chunks, dim=0):
    return input.chunk(chunks, dim)


def unbind(input, dim=0):
    return input.unbind(dim)


def cat(tensors, dim=0):
    """Join tensors along an existing dimension."""
    if isinstance(tensors, Tensor):
        raise TypeError("cat() argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    return shape.Cat.apply(dim, *tensors)


concat = concatenate = cat


def stack(tensors, dim=0):
    """Join same-shaped tensors along a new dimension."""
    if isinstance(tensors, Tensor):
        raise TypeError("stack(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    return shape.Stack.apply(dim, *tensors)


# -- indexing ----------------------------------------------------------------------
def index_select(input, dim, index):
    return input.index_select(dim, index)


def index_add(input, dim, index, source, *, alpha=1):
    return input.index_add(dim, index, source, alpha=alpha)


def masked_select(input, mask):
    return input.masked_select(mask)


def flip(input, dims):
    return input.flip(dims)


def masked_fill(input, mask, value):
    return input.masked_fill(mask, value)


def gather(input, dim, index):
    return input.gather(dim, index)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    return input.scatter(dim, index, src, value=value, reduce=reduce)


def scatter_add(input, dim, index, src):
    return input.scatter_add(dim, index, src)


# -- copies ---------------------------------------------------------------------------
def clone(input):
    return input.clone()


def numel(input):
    return input.numel()


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


__all__ = [name for name, value in list(globals().items())
           if callable(value) and not name.startswith("_") and name not in ("Tensor", "builtins")]


from ._numpy_compat import patch_module as _patch_module  # noqa: E402

_patch_module(globals())  # torch.sum(x, axis=0): NumPy's argument names too
