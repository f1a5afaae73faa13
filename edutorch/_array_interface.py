"""The one internal interface for code outside the engine that must work on a tensor's array.

A few non-differentiable computations have no Tensor op that does them well:
pruning masks pick "the k smallest scores" with ``np.partition`` (linear time,
ties broken by position) on layers of millions of weights, where a full
``sort``/``topk`` would be many times slower.  Such code (``nn/utils/prune.py``)
reaches the NumPy (CPU) or CuPy (CUDA) array through these three names only,
so the engine's storage attribute stays private to the engine.
"""
from . import backend
from ._tensor import Tensor

__all__ = ["array_module", "array_of", "tensor_of"]


def array_of(t):
    """The array holding ``t``'s values (shares memory; outside autograd)."""
    return t._data


def tensor_of(array):
    """A tensor around ``array``, without copying and without history (``from_numpy`` for any device)."""
    return Tensor._make(array)


def array_module(*arrays):
    """``numpy`` or ``cupy``: the module whose functions work on ``arrays``."""
    return backend.get_array_module(*arrays)
