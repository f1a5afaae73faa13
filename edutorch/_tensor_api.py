"""More Tensor methods: special functions, scans, rolls, products, counting, sampling.

Like ``_tensor_ops.py``: one-liners over the ``Function`` of each op
(``autograd/_functions``), or short compositions of differentiable ops where
PyTorch composes them too (``movedim``, ``tile``, ``kron``, ``median``...).
"""
import builtins

import numpy as np

from . import _dtype, backend
from .autograd._functions import binary, blas, elementary, reduction, shape, special, unary
from .autograd._functions import utils
from .autograd._functions.utils import wrap_dim as _wrap_dim
from ._dtype import is_floating as _is_floating
from .amp.autocast_mode import autocast_op  # composite ops cast once, at entry


def _make(array):
    return utils._Tensor._make(array)


def _tuple(x):
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


class TensorApiOps:
    __slots__ = ()

    # -- elementary functions (table in autograd/_functions/elementary.py) ---------------
    def tan(self):
        return elementary.Tan.apply(self)

    def asin(self):
        return elementary.Asin.apply(self)

    def acos(self):
        return elementary.Acos.apply(self)

    def atan(self):
        return elementary.Atan.apply(self)

    def sinh(self):
        return elementary.Sinh.apply(self)

    def cosh(self):
        return elementary.Cosh.apply(self)

    def asinh(self):
        return elementary.Asinh.apply(self)

    def acosh(self):
        return elementary.Acosh.apply(self)

    def atanh(self):
        return elementary.Atanh.apply(self)

    arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh

    def log2(self):
        return elementary.Log2.apply(self)

    def log10(self):
        return elementary.Log10.apply(self)

    def expm1(self):
        return elementary.Expm1.apply(self)

    def exp2(self):
        return elementary.Exp2.apply(self)

    def erfc(self):
        return elementary.Erfc.apply(self)

    def deg2rad(self):
        return elementary.Deg2rad.apply(self)

    def rad2deg(self):
        return elementary.Rad2deg.apply(self)

    # -- special functions and binary math ------------------------------------------
    def erf(self):
        return special.Erf.apply(self)

    def erfinv(self):
        return special.Erfinv.apply(self)

    def atan2(self, other):
        return binary.Atan2.apply(self, other)

    arctan2 = atan2

    def hypot(self, other):
        return binary.Hypot.apply(self, other)

    def fmod(self, other):
        return binary.Fmod.apply(self, other)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return unary.NanToNum.apply(self, nan, posinf, neginf)

    # -- scans, rolls, matrix products -------------------------------------------------
    def cumprod(self, dim, *, dtype=None):
        return reduction.Cumprod.apply(self, _wrap_dim(dim, self._data.ndim), dtype)

    def roll(self, shifts, dims=None):
        shifts = _tuple(shifts)
        if dims is None:
            if len(shifts) != 1:
                raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
            return shape.Roll.apply(self, shifts, None)
        dims = _tuple(dims)
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
        return shape.Roll.apply(self, shifts, tuple(_wrap_dim(d, self._data.ndim) for d in dims))

    def trace(self):
        return blas.Trace.apply(self)

    @autocast_op("addmm")
    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        """``beta * self + alpha * (mat1 @ mat2)``; with ``beta=0`` ``self`` is ignored (NaN too)."""
        return _scaled_sum(self, mat1.mm(mat2), beta, alpha)

    @autocast_op("baddbmm")
    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """``beta * self + alpha * (batch1 @ batch2)``, batch by batch."""
        return _scaled_sum(self, batch1.bmm(batch2), beta, alpha)

    def kron(self, other):
        """The Kronecker product: every entry of ``self`` times the whole of ``other``."""
        n = builtins.max(self.ndim, other.ndim)
        a = self.reshape((1,) * (n - self.ndim) + tuple(self.shape))
        b = other.reshape((1,) * (n - other.ndim) + tuple(other.shape))
        # a[i] * b[j] laid out at i * b.shape + j: interleave the dims, then merge pairs
        prod = a.reshape([s for d in a.shape for s in (d, 1)]) * b.reshape([s for d in b.shape for s in (1, d)])
        return prod.reshape([x * y for x, y in zip(a.shape, b.shape)])

    # -- moving and repeating ---------------------------------------------------------
    def movedim(self, source, destination):
        """Move the dims in ``source`` to the positions ``destination``; the others keep their order."""
        src = [_wrap_dim(d, self.ndim) for d in _tuple(source)]
        dst = [_wrap_dim(d, self.ndim) for d in _tuple(destination)]
        if len(src) != len(dst):
            raise RuntimeError(
                f"movedim: Invalid source or destination dims: source ({list(_tuple(source))} dims) should "
                f"contain the same number of dims as destination ({list(_tuple(destination))} dims)")
        order = [None] * self.ndim
        for s, d in zip(src, dst):
            order[d] = s
        rest = iter(d for d in range(self.ndim) if d not in src)
        return self.permute([o if o is not None else next(rest) for o in order])

    moveaxis = movedim

    def tile(self, dims):
        """``repeat`` with ``dims`` padded with leading 1s to the tensor's rank."""
        dims = _tuple(dims)
        if len(dims) < self.ndim:
            dims = (1,) * (self.ndim - len(dims)) + dims
        return self.repeat(*dims)

    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
        """Repeat each element ``repeats`` times (one count for all, or one per element) along ``dim``."""
        if repeats is None:  # torch.repeat_interleave(counts): each index i, counts[i] times
            counts = self._data
            return _make(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
        x = self if dim is not None else self.reshape(-1)
        axis = 0 if dim is None else _wrap_dim(dim, self.ndim)
        counts = repeats._data if isinstance(repeats, utils._Tensor) else repeats
        index = np.repeat(np.arange(x.shape[axis], dtype=np.int64), counts)
        return x.index_select(axis, _make(index))

    def take_along_dim(self, indices, dim=None):
        """``gather`` with broadcasting; without ``dim`` on the flattened tensor."""
        if dim is None:
            return self.reshape(-1).gather(0, indices.reshape(-1))
        axis = _wrap_dim(dim, self.ndim)
        shape_self = list(self.shape)
        shape_idx = list(indices.shape)
        shape_self[axis] = shape_idx[axis] = 1
        common = list(np.broadcast_shapes(tuple(shape_self), tuple(shape_idx)))
        s = common.copy()
        s[axis] = self.shape[axis]
        i = common.copy()
        i[axis] = indices.shape[axis]
        return self.expand(*s).gather(axis, indices.expand(*i))

    # -- shapes: broadcasting, flipping, splitting, differences ------------------------
    def broadcast_to(self, size):
        """``expand`` to ``size`` (a view)."""
        return self.expand(*size)

    def select(self, dim, index):
        """The slice at ``index`` along ``dim``, that dim removed (``x.select(0, i)`` is ``x[i]``)."""
        axis = _wrap_dim(dim, self.ndim)
        size = self.shape[axis]
        if not -size <= index < size:
            raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} at "
                             f"dimension {axis}")
        return self.narrow(axis, index % size, 1).squeeze(axis)

    def fliplr(self):
        """Reverse the columns (dim 1)."""
        if self.ndim < 2:
            raise RuntimeError("Input must be >= 2-d.")
        return self.flip(1)

    def flipud(self):
        """Reverse the rows (dim 0)."""
        if self.ndim < 1:
            raise RuntimeError("Input must be >= 1-d.")
        return self.flip(0)

    def tensor_split(self, indices_or_sections, dim=0):
        """Split into ``n`` nearly equal parts (the first ones one longer), or at the given indices."""
        axis = _wrap_dim(dim, self.ndim)
        size = self.shape[axis]
        if isinstance(indices_or_sections, int):
            n = indices_or_sections
            if n <= 0:
                raise RuntimeError(f"number of sections must be larger than 0, got {n}")
            bounds = [i * (size // n) + builtins.min(i, size % n) for i in range(n + 1)]
        else:
            cuts = [builtins.min(builtins.max(int(i), 0), size) for i in indices_or_sections]
            bounds = [0] + cuts + [size]
        return tuple(self.narrow(axis, lo, builtins.max(hi - lo, 0)) for lo, hi in zip(bounds, bounds[1:]))

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        """``x[i + 1] - x[i]`` along ``dim``, ``n`` times (after joining ``prepend``/``append``)."""
        from ._functional import cat

        x = self
        axis = _wrap_dim(dim, self.ndim)
        if prepend is not None or append is not None:
            x = cat([t for t in (prepend, x, append) if t is not None], axis)
        for _ in range(n):
            length = x.shape[axis]
            if length == 0:
                break
            after, before = x.narrow(axis, 1, length - 1), x.narrow(axis, 0, length - 1)
            x = (after ^ before) if x.dtype == _dtype.bool else after - before
        return x

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        """Put the last dim on the ``offset`` diagonal of new matrices in dims (``dim1``, ``dim2``)."""
        out = _diag_embed(self, offset)
        ndim = out.ndim
        d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
        if (d1, d2) != (ndim - 2, ndim - 1):
            out = out.movedim((ndim - 2, ndim - 1), (d1, d2))
        return out

    # -- reductions that skip NaN, moments together --------------------------------------
    def nansum(self, dim=None, keepdim=False, *, dtype=None):
        """``sum`` counting NaN as 0 (infinities stay)."""
        from ._functional import where

        x = where(self.isnan(), self.new_zeros(()), self) if self.is_floating_point() else self
        return x.sum(dim, keepdim, dtype=dtype)

    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        """``mean`` over the non-NaN values."""
        count = (~self.isnan()).sum(dim, keepdim)
        return self.nansum(dim, keepdim, dtype=dtype) / count

    def logaddexp(self, other):
        """``log(exp(x) + exp(y))`` without overflow: ``max + log1p(exp(-|x - y|))``."""
        high = self.maximum(other)
        return high + (-(self - other).abs()).exp().log1p()

    def logaddexp2(self, other):
        """``log2(2**x + 2**y)``."""
        import math

        return self.mul(math.log(2)).logaddexp(other * math.log(2)) / math.log(2)

    def xlogy(self, other):
        """``x * log(y)``, 0 where ``x == 0`` (even for ``y == 0``)."""
        from ._functional import where

        return where(self == 0, self * 0, self * other.log() if isinstance(other, utils._Tensor) else
                     self * np.log(other))

    def isin(self, test_elements, *, assume_unique=False, invert=False):
        from ._functional_api import isin

        return isin(self, test_elements, assume_unique=assume_unique, invert=invert)

    def argwhere(self):
        """Indices of the non-zero elements, one row each (``nonzero()``)."""
        return self.nonzero()

    def true_divide(self, other):
        return self.div(other)

    # -- in-place forms: ``x.op_()`` writes ``x.op()`` into x (see ``TensorOps._inplace``) ----------
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
        return self._inplace(reduction.Cumprod, _wrap_dim(dim, self._data.ndim), dtype)

    def cumsum_(self, dim, *, dtype=None):
        return self._inplace(reduction.Cumsum, _wrap_dim(dim, self._data.ndim), dtype)

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

    # -- in-place sampling (like ``uniform_``: no autograd history) -------------------------
    def random_(self, from_=0, to=None, *, generator=None):
        """Integers in [from, to) (``random_(n)``: [0, n))."""
        from . import random
        from ._tensor_ops import _check_leaf_inplace

        return random.random_(_check_leaf_inplace(self), from_, to, generator=generator)

    def exponential_(self, lambd=1.0, *, generator=None):
        from . import random
        from ._tensor_ops import _check_leaf_inplace

        return random.exponential_(_check_leaf_inplace(self), lambd, generator=generator)

    def geometric_(self, p, *, generator=None):
        from . import random
        from ._tensor_ops import _check_leaf_inplace

        return random.geometric_(_check_leaf_inplace(self), p, generator=generator)

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        from . import random
        from ._tensor_ops import _check_leaf_inplace

        return random.log_normal_(_check_leaf_inplace(self), mean, std, generator=generator)

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        from . import random
        from ._tensor_ops import _check_leaf_inplace

        return random.cauchy_(_check_leaf_inplace(self), median, sigma, generator=generator)

    # -- small facts about a tensor ---------------------------------------------------------
    @property
    def itemsize(self):
        """Bytes per element."""
        return self._data.itemsize

    @property
    def nbytes(self):
        """Bytes of all elements."""
        return self._data.nbytes

    @property
    def is_cpu(self):
        return not self.is_cuda

    @property
    def output_nr(self):
        """Which output of its ``grad_fn`` this tensor is."""
        return self._output_nr

    def get_device(self):
        """-1 on the CPU, the GPU index on CUDA."""
        return -1 if not self.is_cuda else 0

    def is_signed(self):
        return self._data.dtype.kind in "if"

    def is_inference(self):
        """False: edutorch's ``inference_mode`` makes ordinary tensors."""
        return False

    def is_same_size(self, other):
        return tuple(self.shape) == tuple(other.shape)

    def is_nonzero(self):
        """The truth of a one-element tensor (``bool(t)``)."""
        return bool(self)

    def take(self, index):
        """Elements of the flattened tensor at ``index`` (shaped like ``index``)."""
        return self.reshape(-1).gather(0, index.reshape(-1)).reshape(tuple(index.shape))

    def kthvalue(self, k, dim=-1, keepdim=False):
        """The ``k``-th smallest value along ``dim`` and its index (a named tuple)."""
        from . import return_types

        axis = _wrap_dim(dim, self.ndim)
        size = self.shape[axis] if self.ndim else 1
        if not 1 <= k <= size:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
        x = self if self.ndim else self.reshape(1)
        order = np.argsort(x._data, axis=axis, kind="stable")
        index = _make(np.take(order, [k - 1], axis=axis).astype(np.int64))
        values = x.gather(axis, index)
        if not keepdim:
            values, index = values.squeeze(axis), index.squeeze(axis)
        if not self.ndim:
            values, index = values.reshape(()), index.reshape(())
        return return_types.kthvalue(values, index)

    def cummax(self, dim):
        """Running maximum along ``dim`` and where it was reached (a named tuple)."""
        return _cumulative_extreme(self, dim, np.maximum, "cummax")

    def cummin(self, dim):
        """Running minimum along ``dim`` and where it was reached (a named tuple)."""
        return _cumulative_extreme(self, dim, np.minimum, "cummin")

    # -- order statistics and counting -------------------------------------------------
    def median(self, dim=None, keepdim=False):
        """The lower median (of all values, or along ``dim`` with its index); NaN if a NaN is there."""
        from . import return_types

        if dim is None:
            flat = self.reshape(-1)
            if flat.shape[0] == 0:
                return self.new_tensor(float("nan")).reshape(())
            return flat.gather(0, _make(_median_positions(flat._data, 0).reshape(1))).reshape(())
        axis = _wrap_dim(dim, self.ndim)
        index = _make(np.expand_dims(_median_positions(self._data, axis), axis) if self.ndim else
                      _median_positions(self._data, 0).reshape(1))
        values = self.gather(axis, index) if self.ndim else self.reshape(1)[index].reshape(())
        if not keepdim and self.ndim:
            values, index = values.squeeze(axis), index.squeeze(axis)
        return return_types.median(values, index if self.ndim else index.reshape(()))

    def count_nonzero(self, dim=None):
        counted = self._data != 0
        axis = None if dim is None else tuple(_wrap_dim(d, self.ndim) for d in _tuple(dim))
        return _make(np.asarray(counted.sum(axis=axis), dtype=np.int64))

    def bincount(self, weights=None, minlength=0):
        """How often each non-negative integer occurs (or the sum of its ``weights``)."""
        x = self._data
        if x.dtype.kind not in "iu":
            raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_scalar_name(x)}'")
        if x.ndim != 1 or (x.size and x.min() < 0):
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        if weights is None:
            return _make(np.bincount(x, minlength=minlength).astype(np.int64))
        w = weights._data
        dtype = w.dtype if _is_floating(w.dtype) else np.float64
        return _make(np.bincount(x, weights=w, minlength=minlength).astype(dtype))

    def histc(self, bins=100, min=0, max=0):
        """A histogram of ``bins`` equal bins over [min, max] (the data's range when both are 0)."""
        x = self._data
        if not _is_floating(x.dtype):
            raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_scalar_name(x)}'")
        lo, hi = float(min), float(max)
        if lo == hi and x.size:
            lo, hi = float(x.min()), float(x.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        counts, _ = np.histogram(x[(x >= lo) & (x <= hi)], bins=bins, range=(lo, hi))
        return _make(counts.astype(x.dtype))

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        from .functional import unique

        return unique(self, sorted, return_inverse, return_counts, dim)

    # -- sampling -------------------------------------------------------------------
    def bernoulli(self, p=None, *, generator=None):
        """0/1 samples, each 1 with probability ``self`` (or ``p``)."""
        from .random import _rng

        probs = self._data if p is None else np.broadcast_to(p, self._data.shape)
        if ((probs < 0) | (probs > 1)).any():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        draws = _rng(generator).random(self._data.shape) < backend.to_device(np.asarray(probs), "cpu")
        return _make(backend.to_device(draws.astype(self._data.dtype), backend.device_of(self._data)))

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """Indices drawn with probabilities proportional to each row of ``self`` (1-D or 2-D)."""
        from .random import _rng

        w = backend.to_device(self._data, "cpu").astype(np.float64)
        if w.ndim not in (1, 2):
            raise RuntimeError("prob_dist must be 1 or 2 dim")
        if (w < 0).any() or not np.isfinite(w).all():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        rows = w.reshape(-1, w.shape[-1])
        if (rows.sum(-1) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not replacement and num_samples > rows.shape[-1]:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        rng = _rng(generator)
        out = np.stack([rng.choice(r.size, num_samples, replace=replacement, p=r / r.sum())
                        if replacement or num_samples <= np.count_nonzero(r) else _fail_zero() for r in rows])
        return _make(out.reshape(w.shape[:-1] + (num_samples,)).astype(np.int64))


def _diag_embed(t, offset):
    """(..., n) -> (..., m, m), m = n + |offset|: ``t`` on the ``offset`` diagonal, a sum of outer products."""
    n = t.shape[-1]
    m = n + abs(offset)
    eye = _make(np.eye(m, dtype=t._data.dtype))
    rows = eye[max(-offset, 0): max(-offset, 0) + n]  # (n, m): the one-hot row of value i
    cols = eye[max(offset, 0): max(offset, 0) + n]    # (n, m): its one-hot column
    return (t.unsqueeze(-1).unsqueeze(-1) * rows.unsqueeze(-1) * cols.unsqueeze(-2)).sum(-3)


def _cumulative_extreme(t, dim, ufunc, name):
    """``cummax``/``cummin``: the index of the running extreme (the latest on ties, as PyTorch), then a gather."""
    from . import return_types

    axis = _wrap_dim(dim, t.ndim)
    x = t._data if t.ndim else t._data.reshape(1)
    running = ufunc.accumulate(x, axis=axis)
    positions = np.arange(x.shape[axis]).reshape([-1 if d == axis else 1 for d in range(x.ndim)])
    # where the element itself is the running extreme (the latest on ties); a NaN is one too, and
    # once the running value is NaN no later element equals it
    itself = (x == running) | (np.isnan(x) if _is_floating(x.dtype) else False)
    hit = np.where(itself, positions, -1)
    index = np.maximum.accumulate(hit, axis=axis).astype(np.int64)
    values = (t if t.ndim else t.reshape(1)).gather(axis, _make(index))
    if not t.ndim:
        values, index = values.reshape(()), index.reshape(())
    return getattr(return_types, name)(values, _make(index))


def _scalar_name(x):
    return _dtype.scalar_type_name(_dtype.from_numpy_dtype(x.dtype))


def _fail_zero():
    raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)")


def _scaled_sum(input, product, beta, alpha):
    """``beta * input + alpha * product``, as ``addmm``/``baddbmm`` compute it."""
    product = product if alpha == 1 else product * alpha
    if beta == 0:  # PyTorch ignores ``input`` then (a NaN in it does not propagate); its gradient is 0
        from ._functional import where

        return where(input.new_zeros((), dtype=_dtype.bool), input, product)
    return (input if beta == 1 else input * beta) + product


def _median_positions(x, axis):
    """Where the lower median of each slice along ``axis`` sits (the first NaN if the slice has one)."""
    xp = backend.get_array_module(x)
    order = xp.argsort(x, axis=axis, kind="stable")  # NaN sorts last
    k = (x.shape[axis] - 1) // 2
    positions = xp.take(order, k, axis=axis)
    has_nan = xp.isnan(x).any(axis=axis) if _is_floating(x.dtype) else xp.zeros(positions.shape, bool)
    first_nan = xp.argmax(xp.isnan(x), axis=axis) if _is_floating(x.dtype) else positions
    return xp.where(has_nan, first_nan, positions).astype(np.int64)
