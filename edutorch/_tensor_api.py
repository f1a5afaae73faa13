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

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        """``beta * self + alpha * (mat1 @ mat2)``; with ``beta=0`` ``self`` is ignored (NaN too)."""
        return _scaled_sum(self, mat1.mm(mat2), beta, alpha)

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
        dtype = w.dtype if w.dtype.kind == "f" else np.float64
        return _make(np.bincount(x, weights=w, minlength=minlength).astype(dtype))

    def histc(self, bins=100, min=0, max=0):
        """A histogram of ``bins`` equal bins over [min, max] (the data's range when both are 0)."""
        x = self._data
        if x.dtype.kind != "f":
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
    has_nan = xp.isnan(x).any(axis=axis) if x.dtype.kind == "f" else xp.zeros(positions.shape, bool)
    first_nan = xp.argmax(xp.isnan(x), axis=axis) if x.dtype.kind == "f" else positions
    return xp.where(has_nan, first_nan, positions).astype(np.int64)
