"""More of ``torch.Tensor``'s API, each op a short composition of ops edutorch already has.

Written with Tensor ops, every one of these gets its gradient from the ops it
is made of (no new formula): ``frac`` is ``x - trunc(x)``, ``logit`` is
``log(x / (1 - x))``, ``fmax`` picks with ``where``, ``cross`` is
``linalg.cross``, ``svd`` is ``linalg.svd`` with ``V = Vh.mH``.  A few return
values without a gradient (``signbit``, ``gcd``, ``heaviside``), as in PyTorch.

The in-place variants PyTorch has for them, and the spellings it keeps as
aliases (``multiply_``, ``greater_``...), are made at the end by
:func:`_inplace_of`: ``x.name_(...)`` computes ``x.name(...)`` and writes it
into ``x`` through ``InplaceMethods._inplace`` (its checks, version counter
and graph), as every in-place op does.
"""
import math
import warnings

import numpy as np

from .. import _dtype, return_types
from ..autograd._functions import binary, pointwise, unary, utils
from ..autograd._functions.utils import wrap_dim

_CROSS_DIM_WARNING = (
    "Using torch.cross without specifying the dim arg is deprecated.\n"
    "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
    "The default value of dim will change to agree with that of linalg.cross in a future release.")


def _values(array):
    """A new tensor of ``array``, without a graph."""
    return utils._Tensor._make(array)


def _scaled_sum(t, product, beta, alpha):
    """``beta * t + alpha * product`` as PyTorch's ``addmv``/``addr``/``addbmm``: ``beta=0`` ignores
    ``t`` (a NaN in it does not spread), keeping only its shape."""
    if np.broadcast_shapes(t.shape, product.shape) != product.shape:  # PyTorch expands t to the product's shape
        t.detach().expand(product.shape)  # raises PyTorch's RuntimeError
    product = product if alpha == 1 else product * alpha
    if beta == 0:
        return product.expand(np.broadcast_shapes(t.shape, product.shape)).clone()
    return (t if beta == 1 else t * beta) + product


class CompositeMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    # -- aliases and small compositions -------------------------------------------------------
    def absolute(self):
        return self.abs()

    def positive(self):
        if self.dtype is _dtype.bool:
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    def sgn(self):
        """``sign`` for a real tensor (PyTorch's ``sgn`` is ``x/|x|`` for complex ones)."""
        return unary.Sgn.apply(self)

    def fix(self):
        return self.trunc()

    def frac(self):
        """The fractional part, ``x - trunc(x)`` (its gradient is 1)."""
        return self - self.trunc()

    def ravel(self):
        return self.reshape(-1)

    def diagflat(self, offset=0):
        return self.flatten().diag(offset)

    def ger(self, vec2):
        return self.outer(vec2)

    def vdot(self, other):
        if self.ndim != 1 or other.ndim != 1:
            raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors")
        return self.dot(other)

    def inner(self, other):
        """The sum of products over the last dimension of both (a product with a scalar)."""
        if self.ndim == 0 or other.ndim == 0:
            return self * other
        if self.shape[-1] != other.shape[-1]:
            raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                               f"{list(self.shape)} and {list(other.shape)}")
        from ..functional import tensordot

        return tensordot(self, other, dims=([-1], [-1]))

    def msort(self):
        return self.sort(0).values

    def rot90(self, k=1, dims=(0, 1)):
        """Rotate by 90° ``k`` times in the plane ``dims``: flips and a transpose."""
        if len(dims) != 2:
            raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
        if self.ndim < 2:
            raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.ndim}")
        d0, d1 = wrap_dim(dims[0], self.ndim), wrap_dim(dims[1], self.ndim)
        if d0 == d1:
            raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
        k %= 4
        if k == 1:
            return self.flip(d1).transpose_(d0, d1)  # in place on the flipped copy: not a view, as PyTorch
        if k == 2:
            return self.flip(d0, d1)
        if k == 3:
            return self.flip(d0).transpose_(d0, d1)
        return self.clone()

    def logit(self, eps=None):
        """``log(x / (1 - x))``, the inverse of ``sigmoid``; with ``eps``, ``x`` clamped to ``[eps, 1 - eps]``."""
        x = self if eps is None else self.clamp(eps, 1 - eps)
        return (x / (1 - x)).log()

    def sinc(self):
        """``sin(πx) / (πx)``, 1 at 0 (where the gradient is 0): the division runs on a safe copy."""
        zero = self == 0
        safe = self.masked_fill(zero, 1.0) * math.pi
        return (safe.sin() / safe).masked_fill(zero, 1.0)

    def copysign(self, other):
        """``|x|`` with the sign of ``other`` (a float result; -0.0 counts as negative)."""
        x = self if self.is_floating_point() else self.float()
        return (pointwise.Copysign if isinstance(other, utils._Tensor) else pointwise.CopysignScalar).apply(x, other)

    def fmax(self, other):
        """The larger of the two, ignoring a NaN unless both are (the gradient to the one chosen)."""
        return binary.Fmax.apply(self, other)

    def fmin(self, other):
        return binary.Fmin.apply(self, other)

    def float_power(self, exponent):
        """``pow`` in float64."""
        exponent = exponent.double() if isinstance(exponent, utils._Tensor) else exponent
        return self.double().pow(exponent)

    def floor_divide(self, other):
        return self // other

    def ldexp(self, other):
        """``x * 2 ** other``."""
        x = self if self.is_floating_point() else self.float()
        return x * (2.0 ** other if not isinstance(other, utils._Tensor) else other.float().exp2())

    def logcumsumexp(self, dim):
        """``log(cumsum(exp(x)))`` along ``dim``, without overflow."""
        from ..autograd._functions import reduction

        return reduction.Logcumsumexp.apply(self, wrap_dim(dim, self.ndim))

    def aminmax(self, *, dim=None, keepdim=False):
        from ..autograd._functions import reduction

        return return_types.aminmax(reduction.Aminmax.apply(self, dim, keepdim))

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        """``beta * self + alpha * (mat @ vec)``: ``self`` is a vector (or one element) of ``mat``'s rows."""
        if self.ndim > 1 or mat.ndim != 2 or vec.ndim != 1:
            raise RuntimeError(f"vector + matrix @ vector expected, got {self.ndim}, {mat.ndim}, {vec.ndim}")
        if mat.shape[1] != vec.shape[0] or self.ndim and self.shape[0] not in (1, mat.shape[0]):
            if not self.ndim:  # PyTorch's message reads self.size(0)
                raise IndexError("Dimension specified as 0 but tensor has no dimensions")
            raise RuntimeError(f"size mismatch, got input ({self.shape[0]}), mat ({mat.shape[0]}x{mat.shape[1]}), "
                               f"vec ({vec.shape[0]})")
        return _scaled_sum(self, mat.mv(vec), beta, alpha)

    def addr(self, vec1, vec2, *, beta=1, alpha=1):
        return _scaled_sum(self, vec1.outer(vec2), beta, alpha)

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return _scaled_sum(self, batch1.bmm(batch2).sum(0), beta, alpha)

    def matrix_power(self, n):
        from .. import linalg

        return linalg.matrix_power(self, n)

    def slogdet(self):
        from .. import linalg

        return linalg.slogdet(self)

    def logdet(self):
        """``log(det(A))``: NaN for a negative determinant, -inf for a singular matrix."""
        sign, logabs = self.slogdet()
        return logabs.masked_fill(sign < 0, float("nan"))

    # -- the older linear algebra API ---------------------------------------------------------------
    def cross(self, other, dim=None):
        """``torch.cross``: ``linalg.cross`` along ``dim``; without ``dim``, the first dimension of size 3
        (deprecated in PyTorch, with its warning)."""
        from .. import linalg

        if dim is None:
            warnings.warn(_CROSS_DIM_WARNING, UserWarning, stacklevel=2)
            if self.ndim != other.ndim:
                raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
            sizes = [i for i, (a, b) in enumerate(zip(self.shape, other.shape)) if a == 3 and b == 3]
            if not sizes:
                raise RuntimeError("no dimension of size 3 in input")
            dim = sizes[0]
        return linalg.cross(self, other, dim=dim)

    def svd(self, some=True, compute_uv=True):
        """``U, S, V`` with ``A = U diag(S) V^T`` (``torch.svd``; ``linalg.svd`` gives ``Vh = V^T``).
        ``compute_uv=False``: ``U`` and ``V`` are zero-filled (m, m) and (n, n) matrices."""
        from .. import linalg

        if not compute_uv:
            m, n = self.shape[-2:]
            S = linalg.svdvals(self)
            return return_types.svd((self.new_zeros((*self.shape[:-2], m, m)), S,
                                     self.new_zeros((*self.shape[:-2], n, n))))
        U, S, Vh = linalg.svd(self, full_matrices=not some)
        return return_types.svd((U, S, Vh.mT))

    # -- values without a gradient -------------------------------------------------------------
    def signbit(self):
        return _values(np.signbit(self._data))

    def isposinf(self):
        return _values(np.isposinf(self._data))

    def isneginf(self):
        return _values(np.isneginf(self._data))

    def isreal(self):
        """True everywhere: a real tensor has no imaginary part."""
        return _values(np.ones(self._data.shape, dtype=bool))

    def heaviside(self, values):
        """0 where ``x < 0``, 1 where ``x > 0``, ``values`` where ``x == 0``."""
        if values.dtype != self.dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
        return _values(np.heaviside(self._data, values._data).astype(self._data.dtype))

    def nextafter(self, other):
        return _values(np.nextafter(*utils.binary_arrays(self, other)))

    def gcd(self, other):
        return _values(np.gcd(*_integer_arrays("gcd", self, other)))

    def lcm(self, other):
        return _values(np.lcm(*_integer_arrays("lcm", self, other)))

    def bitwise_left_shift(self, other):
        return _values(np.left_shift(*_integer_arrays("lshift", self, other)))

    def bitwise_right_shift(self, other):
        return _values(np.right_shift(*_integer_arrays("rshift", self, other)))

    def hsplit(self, sections):
        if self.ndim < 1:
            raise RuntimeError("torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 "
                               "dimensions!")
        return _split(self, sections, 1 if self.ndim > 1 else 0, "hsplit")

    def vsplit(self, sections):
        if self.ndim < 2:
            raise RuntimeError(f"torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with "
                               f"{self.ndim} dimensions!")
        return _split(self, sections, 0, "vsplit")

    def dsplit(self, sections):
        if self.ndim < 3:
            raise RuntimeError(f"torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with "
                               f"{self.ndim} dimensions!")
        return _split(self, sections, 2, "dsplit")


def _split(t, sections, dim, name):
    """``hsplit``/``vsplit``/``dsplit``: ``tensor_split`` along ``dim``; an int must divide the size."""
    if isinstance(sections, int) and (sections == 0 or t.shape[dim] % sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{t.shape[dim]} is not divisible by the split_size {sections}!")
    return t.tensor_split(sections, dim)


def _integer_arrays(name, a, b):
    """The two operands as arrays, refusing floating ones as PyTorch's integer kernels do."""
    x, y = utils.binary_arrays(a, b)
    dtype = np.result_type(x, y)
    if dtype.kind == "f":
        raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                  f"'{_dtype.scalar_type_name(_dtype.from_numpy_dtype(dtype))}'")
    return x, y


# -- in-place variants ---------------------------------------------------------------------------
class _OutOfPlace:
    """``InplaceMethods._inplace`` takes an op with ``apply(source, *args)``: this one calls a Tensor
    method, so ``x.name_(*args)`` is ``x.name(*args)`` written into ``x``."""

    def __init__(self, name, kwargs):
        self.name, self.kwargs = name, kwargs

    def apply(self, source, *args):
        # a composition may save ``source`` deep inside its graph, where ``_inplace`` cannot see it:
        # under autograd it works on a copy, so that writing the result into ``x`` spoils nothing saved
        source = source.clone() if source.requires_grad else source
        return getattr(source, self.name)(*args, **self.kwargs)


def _inplace_of(name):
    def inplace(self, *args, **kwargs):
        return self._inplace(_OutOfPlace(name, kwargs), *args)

    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = f"In-place ``{name}``: ``x.{name}_(...)`` writes ``x.{name}(...)`` into ``x``."
    return inplace


# the in-place ops PyTorch has, for methods that edutorch computes out of place
INPLACE = ("absolute copysign fix frac gcd lcm ldexp logit nextafter sgn sinc heaviside xlogy round remainder "
           "floor_divide float_power eq ne lt le gt ge logical_and logical_or logical_xor logical_not bitwise_and "
           "bitwise_or bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift addmv addr addbmm addmm "
           "baddbmm").split()
for _name in INPLACE:
    setattr(CompositeMethods, _name + "_", _inplace_of(_name))



def _alias_of(name, alias):
    def same(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)

    same.__name__ = same.__qualname__ = alias
    same.__doc__ = f"``{alias}``: PyTorch's other name of ``{name}``."
    return same


# PyTorch's other spellings of in-place ops edutorch has
for _alias, _name in {"multiply_": "mul_", "subtract_": "sub_", "divide_": "div_", "true_divide_": "div_",
                      "negative_": "neg_", "greater_": "gt_", "greater_equal_": "ge_", "less_": "lt_",
                      "less_equal_": "le_", "not_equal_": "ne_"}.items():
    setattr(CompositeMethods, _alias, _alias_of(_name, _alias))
