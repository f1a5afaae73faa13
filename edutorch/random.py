"""Random numbers: ``manual_seed``, ``Generator``, ``rand``, ``randn``, ``randint``...

edutorch draws from NumPy's PCG64 generator, so a seed gives the same numbers
on every run (but not the same numbers as PyTorch's Mersenne Twister: parity
tests copy weights instead of relying on seeds).
"""
import numpy as np

from . import _creation, _dtype, backend
from ._tensor import Tensor
from ._tensor_methods.inplace import EXPANDED_INPLACE_ERROR
from ._tensor_methods.views import has_internal_overlap


class Generator:
    """``torch.Generator``: an independent, seedable random stream."""

    def __init__(self, device="cpu"):
        self.device = device
        self._seed = 67280421310721  # PyTorch's default seed
        self._rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed):
        self._seed = int(seed)
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self):
        self._seed = int(np.random.SeedSequence().entropy % (2**63))
        self._rng = np.random.default_rng(self._seed)
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The generator state as a uint8 tensor (a JSON dump of NumPy's bit generator)."""
        import json

        raw = json.dumps(self._rng.bit_generator.state).encode()
        return _creation.tensor(list(raw), dtype=_dtype.uint8)

    def set_state(self, state):
        import json

        self._rng.bit_generator.state = json.loads(bytes(state._data.astype(np.uint8).tolist()).decode())
        return self


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator: the same seed gives the same numbers."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


def _rng(generator):
    return (generator or default_generator)._rng


_CHUNK = 1 << 20  # samples drawn at a time by ``rand``/``randn``: 8 MiB of float64


def _sample(values, dtype, device, requires_grad):
    dtype = dtype or _dtype.get_default_dtype()
    return _creation._finish(values.astype(dtype.np, copy=False), dtype, device, requires_grad)


def _size(size):
    return _creation._size(size)


def _checked(size, dtype, name):
    """The shape, refused as PyTorch refuses it (negative, or too many bytes to count)."""
    return _creation.checked_shape(name, _size(size), (dtype or _dtype.get_default_dtype()).np)


def rand(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples on [0, 1)."""
    dtype = _floating(dtype, "check_uniform_bounds")
    shape = _checked(_creation._size_args("rand", args, size), dtype, "rand")
    out = _drawn(shape, dtype, _rng(generator).random)
    return _creation._finish(out, dtype, device, requires_grad)


def randn(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples."""
    dtype = _floating(dtype, "normal_kernel_cpu")
    shape = _checked(_creation._size_args("randn", args, size), dtype, "randn")
    out = _drawn(shape, dtype, _rng(generator).standard_normal)
    return _creation._finish(out, dtype, device, requires_grad)


def _floating(dtype, kernel):
    """``dtype`` (the default float if None); PyTorch has no kernel drawing integers or bools here."""
    dtype = dtype or _dtype.get_default_dtype()
    if not _dtype.is_floating(dtype.np):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(dtype)}\'')
    return dtype


def _drawn(shape, dtype, draw):
    """An array of ``dtype`` filled by ``draw(n)`` (NumPy draws float64), ``_CHUNK`` samples at a time.

    So the peak is the result plus one chunk, not the result plus a float64
    copy of it (three times a float32 result).  The numbers are those of one
    float64 draw, chunked or not.
    """
    with _creation.allocating(_creation.nbytes_of(shape, dtype.np)):
        out = np.empty(shape, dtype.np)
    flat = out.reshape(-1)  # a view: writing into it fills ``out``
    for start in range(0, flat.size, _CHUNK):
        flat[start:start + _CHUNK] = draw(min(_CHUNK, flat.size - start))
    return out


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Integers in [low, high) (int64 by default)."""
    if high is None:
        low, high = 0, low
    shape = _creation.checked_shape("randint", tuple(size), (dtype or _dtype.int64).np)
    with _creation.allocating(_creation.nbytes_of(shape, np.int64)):
        values = _rng(generator).integers(low, high, size=shape)
    return _creation._finish(values.astype((dtype or _dtype.int64).np), dtype, device, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of 0..n-1."""
    _creation.checked_shape("randperm", (n,), (dtype or _dtype.int64).np)
    with _creation.allocating(_creation.nbytes_of((n,), np.int64)):
        values = _rng(generator).permutation(n)
    return _creation._finish(values.astype((dtype or _dtype.int64).np), dtype, device, requires_grad)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Normal samples; ``mean``/``std`` may be tensors (broadcast) or numbers with ``size``."""
    m = mean._data if isinstance(mean, Tensor) else mean
    s = std._data if isinstance(std, Tensor) else std
    if size is None:
        size = np.broadcast_shapes(np.shape(m), np.shape(s))
        dtype = dtype or (mean.dtype if hasattr(mean, "dtype") else std.dtype if hasattr(std, "dtype") else None)
    shape = _creation.checked_shape("normal", tuple(size), (dtype or _dtype.get_default_dtype()).np)
    with _creation.allocating(_creation.nbytes_of(shape, np.float64)):
        values = _rng(generator).normal(backend.to_device(np.asarray(m), "cpu") if not np.isscalar(m) else m,
                                        s if np.isscalar(s) else np.asarray(s), size=shape)
    return _sample(values, dtype, device, requires_grad)


# -- in-place initialisers (``Tensor.uniform_`` and friends) --------------------
def _fill_inplace(t, values):
    """Write sampled values into ``t`` without recording history (like PyTorch's init)."""
    xp = backend.get_array_module(t._data)
    if has_internal_overlap(t._data):  # an expand (PyTorch's check)
        raise RuntimeError(EXPANDED_INPLACE_ERROR)
    t._data[...] = xp.asarray(values, dtype=t._data.dtype) if xp is not np else values
    t._version_counter[0] += 1
    return t


def _keeps_meta(sample_):
    """An in-place sampler that leaves a ``meta`` tensor as it is (it has no data to fill), drawing nothing."""
    import functools

    @functools.wraps(sample_)
    def sample_unless_meta(t, *args, **kwargs):
        return t if type(t._data) is backend.MetaArray else sample_(t, *args, **kwargs)

    return sample_unless_meta


@_keeps_meta
def uniform_(t, a=0.0, b=1.0, *, generator=None):
    return _fill_inplace(t, _rng(generator).uniform(a, b, t._data.shape))


@_keeps_meta
def normal_(t, mean=0.0, std=1.0, *, generator=None):
    return _fill_inplace(t, _rng(generator).normal(mean, std, t._data.shape))


@_keeps_meta
def bernoulli_(t, p=0.5, *, generator=None):
    return _fill_inplace(t, _rng(generator).random(t._data.shape) < p)


@_keeps_meta
def random_(t, low=0, high=None, *, generator=None):
    if high is None:
        low, high = 0, low if low else 2**24
    return _fill_inplace(t, _rng(generator).integers(low, high, t._data.shape))


@_keeps_meta
def exponential_(t, lambd=1.0, *, generator=None):
    return _fill_inplace(t, _rng(generator).exponential(1.0 / lambd, t._data.shape))


@_keeps_meta
def geometric_(t, p, *, generator=None):
    return _fill_inplace(t, _rng(generator).geometric(p, t._data.shape))


@_keeps_meta
def log_normal_(t, mean=1.0, std=2.0, *, generator=None):
    return _fill_inplace(t, _rng(generator).lognormal(mean, std, t._data.shape))


@_keeps_meta
def cauchy_(t, median=0.0, sigma=1.0, *, generator=None):
    return _fill_inplace(t, median + sigma * _rng(generator).standard_cauchy(t._data.shape))


# -- samples shaped like a tensor, and from a tensor of probabilities ---------------
def rand_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """``rand`` with ``input``'s shape (and dtype and device unless given)."""
    return rand(*input.shape, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """``randn`` with ``input``'s shape (and dtype and device unless given)."""
    return randn(*input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False,
                 memory_format=None):
    """``randint(low, high)`` with ``input``'s shape; ``randint_like(x, high)`` means ``low=0``."""
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                   device=device or input.device, requires_grad=requires_grad)


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples, 1 with probability ``input`` (element-wise)."""
    return input.bernoulli(p, generator=generator)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices sampled from the rows of ``input`` (non-negative weights, not necessarily summing to 1)."""
    return input.multinomial(num_samples, replacement, generator=generator)
