"""The one internal interface for code outside the engine that must work on a tensor's array.

A few non-differentiable computations have no Tensor op that does them well:
pruning masks pick "the k smallest scores" with ``np.partition`` (linear time,
ties broken by position) on layers of millions of weights, where a full
``sort``/``topk`` would be many times slower.  Such code (``nn/utils/prune.py``)
reaches the NumPy (CPU) or CuPy (CUDA) array through these three names only.

``._data`` itself is read by the engine only: the modules at the top of the package
(the Tensor, creation, the ``torch.*`` functions, printing, ``save``/``load``), the
Tensor's methods, autograd and the ops' ``forward`` (``autograd/_functions``,
``nn/_functions``), and the parts that are kernels in PyTorch: ``nn/functional.py``'s checks and dropout mask,
``nn/_interpolate.py``, ``nn.Parameter``, autocast and ``GradScaler``'s
unscale-and-check-for-inf (``amp/``), and shared memory (``multiprocessing/``).
Nothing else does (``tests/test_layering_imports.py`` checks it).
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
