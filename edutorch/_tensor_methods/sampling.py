"""Random sampling: ``uniform_``, ``normal_``, ``bernoulli_``, ``random_``..., ``bernoulli``, ``multinomial``.

The in-place samplers fill a tensor without autograd history, as PyTorch's
do; the numbers come from ``edutorch/random.py`` (NumPy's PCG64).
"""
import numpy as np

from .. import backend
from ..autograd import grad_mode
from ..autograd._functions import utils
from .inplace import leaf_inplace_error


def _check_leaf_inplace(t):
    if grad_mode.is_grad_enabled() and t._requires_grad and t.grad_fn is None:
        raise leaf_inplace_error(t)
    return t


def _fail_zero():
    raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)")


class SamplingMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        from .. import random

        return random.uniform_(_check_leaf_inplace(self), a, b, generator=generator)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        from .. import random

        return random.normal_(_check_leaf_inplace(self), mean, std, generator=generator)

    def bernoulli_(self, p=0.5, *, generator=None):
        from .. import random

        return random.bernoulli_(_check_leaf_inplace(self), p, generator=generator)

    def random_(self, from_=0, to=None, *, generator=None):
        """Integers in [from, to) (``random_(n)``: [0, n))."""
        from .. import random

        return random.random_(_check_leaf_inplace(self), from_, to, generator=generator)

    def exponential_(self, lambd=1.0, *, generator=None):
        from .. import random

        return random.exponential_(_check_leaf_inplace(self), lambd, generator=generator)

    def geometric_(self, p, *, generator=None):
        from .. import random

        return random.geometric_(_check_leaf_inplace(self), p, generator=generator)

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        from .. import random

        return random.log_normal_(_check_leaf_inplace(self), mean, std, generator=generator)

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        from .. import random

        return random.cauchy_(_check_leaf_inplace(self), median, sigma, generator=generator)

    def bernoulli(self, p=None, *, generator=None):
        """0/1 samples, each 1 with probability ``self`` (or ``p``)."""
        from ..random import _rng

        probs = self._data if p is None else np.broadcast_to(p, self._data.shape)
        if ((probs < 0) | (probs > 1)).any():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        draws = _rng(generator).random(self._data.shape) < backend.to_device(np.asarray(probs), "cpu")
        return utils._Tensor._make(backend.to_device(draws.astype(self._data.dtype), backend.device_of(self._data)))

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """Indices drawn with probabilities proportional to each row of ``self`` (1-D or 2-D)."""
        from ..random import _rng

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
