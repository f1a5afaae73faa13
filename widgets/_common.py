"""Small helpers shared by the widget models (no ipywidgets, no matplotlib).

The widgets only use the public API that PyTorch and edutorch share, so the
same model class works on an ``edutorch.nn.Module`` and on a real
``torch.nn.Module``. ``framework_of`` finds which of the two a module is.
"""
from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass

import numpy as np


def framework_of(module):
    """The top-level package (``edutorch`` or ``torch``) that defines ``module``'s class.

    A user's ``class MLP(nn.Module)`` lives in ``__main__``, so we walk the
    class hierarchy until we meet a class defined inside a real package.
    """
    for klass in type(module).__mro__:
        package = klass.__module__.split(".")[0]
        if package in ("edutorch", "torch"):
            return importlib.import_module(package)
    raise TypeError(f"expected an edutorch or torch nn.Module, got {type(module).__name__}")


def prune_module_of(module):
    """``torch.nn.utils.prune`` or ``edutorch.nn.utils.prune``, matching ``module``."""
    return importlib.import_module(framework_of(module).__name__ + ".nn.utils.prune")


def to_numpy(tensor):
    """A NumPy copy of ``tensor``'s values (works for grad-requiring and GPU tensors)."""
    return np.array(tensor.detach().cpu().numpy(), copy=True)


def numpy_view(tensor):
    """``tensor``'s values as NumPy without a copy where possible: read it, never write it.

    Only the conversions a tensor needs (``detach`` when it requires grad, ``cpu``
    off the CPU): a backward hook reads thousands of small gradients this way.
    """
    if tensor.requires_grad:
        tensor = tensor.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.cpu()
    return np.asarray(tensor.numpy())


def dtype_name(tensor):
    """``'float32'`` for ``torch.float32`` (the repr of both frameworks' dtypes)."""
    return str(tensor.dtype).replace("torch.", "")


@dataclass(frozen=True)
class Stats:
    """Summary statistics of one tensor, as shown next to every tensor in the widgets."""

    mean: float
    std: float
    min: float
    max: float
    norm: float
    zeros: float  # fraction of exactly-zero entries (sparsity)

    def __str__(self):
        return (
            f"mean={self.mean:.4g} std={self.std:.4g} min={self.min:.4g} "
            f"max={self.max:.4g} norm={self.norm:.4g}"
        )


#: entries converted to float64 at a time by ``stats_of`` (8 MB): a huge tensor is read in
#: slices, never copied whole
STATS_CHUNK = 1 << 20


def stats_of(array):
    """Mean, std (unbiased, like ``Tensor.std()``), min, max, L2 norm and sparsity.

    One pass over the values, summed in float64 one slice of ``STATS_CHUNK``
    entries at a time: a 16.8 M-entry gradient costs 8 MB of scratch, not a
    float64 copy of itself. The variance comes from the sums of x and x²
    (``(Σx² - n·mean²) / (n - 1)``); in float64 that loses digits only when
    |mean| is a million times the std, far beyond any weight or gradient.
    """
    flat = np.asarray(array).reshape(-1)
    if flat.size == 0:
        nan = float("nan")
        return Stats(nan, nan, nan, nan, 0.0, 0.0)
    part = np.empty(min(flat.size, STATS_CHUNK))  # one slice in float64
    total = squares = 0.0
    low, high, zeros = np.inf, -np.inf, 0
    for start in range(0, flat.size, STATS_CHUNK):
        piece = flat[start:start + STATS_CHUNK]
        values = part[:piece.size]
        np.copyto(values, piece, casting="unsafe")  # unsafe: also integer and bool tensors
        total += float(values.sum())
        squares += float(np.dot(values, values))
        low, high = min(low, float(values.min())), max(high, float(values.max()))
        zeros += int(np.count_nonzero(values == 0))
    n = flat.size
    mean = total / n
    if np.isnan(mean):  # a NaN anywhere: every statistic that reads it is NaN, as in NumPy
        low = high = float("nan")
    variance = max(squares - n * mean * mean, 0.0) / (n - 1) if n > 1 else float("nan")
    return Stats(mean=mean, std=float(np.sqrt(variance)), min=low, max=high,
                 norm=float(np.sqrt(squares)), zeros=zeros / n)


def norm_of(array):
    """The L2 norm of ``array`` (what ``stats_of(array).norm`` gives), and nothing else.

    The same float64 sum of squares, one slice of ``STATS_CHUNK`` entries at a
    time, without the mean, extremes and zero count: a third of the work, for
    the tables that show only norms.
    """
    flat = np.asarray(array).reshape(-1)
    part = np.empty(min(flat.size, STATS_CHUNK))
    squares = 0.0
    for start in range(0, flat.size, STATS_CHUNK):
        piece = flat[start:start + STATS_CHUNK]
        values = part[:piece.size]
        np.copyto(values, piece, casting="unsafe")
        squares += float(np.dot(values, values))
    return float(np.sqrt(squares))


def max_abs(array):
    """Largest finite |value| (the scale of every value picture), 0.0 when none.

    Two passes without a copy (max and min) when every value is finite, which
    is the usual case; a copy of the finite values only when some are not.
    """
    array = np.asarray(array)
    if array.size == 0:
        return 0.0
    high, low = float(array.max()), float(array.min())
    if np.isfinite(high) and np.isfinite(low):
        return max(abs(high), abs(low))
    finite = np.abs(array[np.isfinite(array)])
    return float(finite.max()) if finite.size else 0.0


SAMPLE_SEED = 0  # the generator seed of ``sample_of`` (stated in the pictures that use it)


def sample_of(array, limit, seed=SAMPLE_SEED):
    """``array``'s entries, flattened; for more than ``limit``, a random sample of ``limit``
    of them (positions drawn with replacement by ``np.random.default_rng(seed)``).

    A histogram of a million sampled entries looks like the histogram of all of them,
    at a fraction of the cost; the same seed draws the same positions every time.
    """
    flat = np.asarray(array).reshape(-1)
    if flat.size <= limit:
        return flat
    return flat[_sample_positions(flat.size, limit, seed)]


@functools.lru_cache(maxsize=4)  # a million positions are 8 MB: a few sizes at most
def _sample_positions(size, limit, seed):
    """The positions ``sample_of`` reads, sorted (memory order): drawn once per size, since
    the same seed draws the same positions every time (a read-only array)."""
    positions = np.sort(np.random.default_rng(seed).integers(0, size, size=limit))
    positions.flags.writeable = False
    return positions
