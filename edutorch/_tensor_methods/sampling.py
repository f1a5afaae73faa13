"""Random sampling: ``uniform_``, ``normal_``, ``bernoulli_``, ``random_``..., ``bernoulli``, ``multinomial``.

The in-place samplers fill a tensor with new numbers; the numbers come from the
generator beneath the Tensor (``edutorch/_generator.py``, NumPy's PCG64), the one
``edutorch/random.py`` seeds.  Without a graph to record (``nn.init`` runs under
``no_grad``) they write straight into the array; on a tensor that requires grad,
with grad mode on, PyTorch records the write as a node whose gradient is zero
(``NormalBackward0``...): the new values do not depend on the old ones.
"""
import numpy as np

from .. import backend
from .._generator import _rng
from ..autograd import grad_mode
from ..autograd.function import Function
from ..autograd._functions import utils
from .inplace import EXPANDED_INPLACE_ERROR, leaf_inplace_error
from .views import has_internal_overlap


class _Sampled(Function):
    """An in-place sampler in the graph: ``forward`` draws the numbers, no gradient reaches the old
    values (each sampler has its own node name: ``_sampled``)."""

    overwrites = True  # the result does not depend on the old values (see ``_inplace_on_view``)

    @staticmethod
    def forward(ctx, t, draw, generator):
        values = draw(_rng(generator), t._data.shape)
        return backend.get_array_module(t._data).asarray(values, dtype=t._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad.new_zeros(grad.shape), None, None

    @staticmethod
    def jvp(ctx, tangent, *_):
        return tangent.new_zeros(tangent.shape)


def _sampled(name):
    return type(name, (_Sampled,), {"_backward_name": name})


_NODES = {"uniform_": _sampled("UniformBackward0"), "normal_": _sampled("NormalBackward0"),
          "bernoulli_": _sampled("BernoulliBackward2"), "random_": _sampled("RandomBackward0"),
          "exponential_": _sampled("ExponentialBackward0"), "geometric_": _sampled("GeometricBackward0"),
          "log_normal_": _sampled("LogNormalBackward0"), "cauchy_": _sampled("CauchyBackward0")}


def _fill(t, name, draw, generator):
    """Write ``draw(rng, shape)`` into ``t`` in place (``name``: the sampler); a ``meta`` tensor has no
    data to fill: nothing is drawn."""
    recording = grad_mode.is_grad_enabled() and t._requires_grad
    if type(t._data) is backend.MetaArray:
        if recording and t._grad_fn is None:
            raise leaf_inplace_error(t)
        return t
    if recording:  # a node in the graph (refused on a leaf and on a view of one, as any in-place op)
        return t._inplace(_NODES[name], draw, generator)
    if has_internal_overlap(t._data):  # an expand (PyTorch's check)
        raise RuntimeError(EXPANDED_INPLACE_ERROR)
    values = draw(_rng(generator), t._data.shape)
    xp = backend.get_array_module(t._data)
    t._data[...] = xp.asarray(values, dtype=t._data.dtype) if xp is not np else values
    t._version_counter[0] += 1
    if t._fw_grad is not None:  # forward-mode AD: the new values do not depend on the old (PyTorch: zeros)
        with grad_mode.no_grad():
            t._fw_grad.zero_()
    return t


def _fail_zero():
    raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)")


class SamplingMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        return _fill(self, "uniform_", lambda rng, shape: rng.uniform(a, b, shape), generator)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        return _fill(self, "normal_", lambda rng, shape: rng.normal(mean, std, shape), generator)

    def bernoulli_(self, p=0.5, *, generator=None):
        return _fill(self, "bernoulli_", lambda rng, shape: rng.random(shape) < p, generator)

    def random_(self, from_=0, to=None, *, generator=None):
        """Integers in [from, to) (``random_(n)``: [0, n))."""
        if to is None:
            from_, to = 0, from_ if from_ else 2**24
        return _fill(self, "random_", lambda rng, shape: rng.integers(from_, to, shape), generator)

    def exponential_(self, lambd=1.0, *, generator=None):
        return _fill(self, "exponential_", lambda rng, shape: rng.exponential(1.0 / lambd, shape), generator)

    def geometric_(self, p, *, generator=None):
        return _fill(self, "geometric_", lambda rng, shape: rng.geometric(p, shape), generator)

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        return _fill(self, "log_normal_", lambda rng, shape: rng.lognormal(mean, std, shape), generator)

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        return _fill(self, "cauchy_", lambda rng, shape: median + sigma * rng.standard_cauchy(shape), generator)

    def bernoulli(self, p=None, *, generator=None):
        """0/1 samples, each 1 with probability ``self`` (or ``p``)."""
        probs = self._data if p is None else np.broadcast_to(p, self._data.shape)
        if ((probs < 0) | (probs > 1)).any():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        draws = _rng(generator).random(self._data.shape) < backend.to_device(np.asarray(probs), "cpu")
        return utils._Tensor._make(backend.to_device(draws.astype(self._data.dtype), backend.device_of(self._data)))

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """Indices drawn with probabilities proportional to each row of ``self`` (1-D or 2-D)."""
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
        return utils._Tensor._make(out.reshape(w.shape[:-1] + (num_samples,)).astype(np.int64))
