"""Random numbers: ``manual_seed``, ``Generator``, ``rand``, ``randn``, ``randint``...

The generator itself (``Generator``, ``default_generator``) is in ``_generator.py``,
below the Tensor, as PyTorch's is in its C++ core; this module seeds it and makes
new tensors from it.  The in-place samplers (``x.uniform_()``...) are Tensor
methods (``_tensor_methods/sampling.py``).
"""
import numpy as np

from . import _creation, _dtype, backend
from ._generator import Generator, _rng, default_generator  # noqa: F401  (torch.Generator...)
from ._tensor import Tensor


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
