"""``torch.multiprocessing``: Python's ``multiprocessing``, with tensors shared, not copied.

Everything of ``multiprocessing`` is here (``Process``, ``Queue``, ``Pool``,
``get_context``, ...). What edutorch adds, as PyTorch does:

* tensors sent to another process (``Queue.put``, ``spawn`` arguments) travel
  as a handle to shared memory (``reductions.py``), so both sides see one array;
* ``Tensor.share_memory_()`` / ``Module.share_memory()`` move storage into
  shared memory beforehand, which ``fork``ed children then inherit: the
  Hogwild pattern of PyTorch's multiprocessing notes;
* ``spawn``/``start_processes`` run ``fn(rank, *args)`` in several processes
  and raise a child's exception in the parent.
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions
from .spawn import (
    ProcessContext, ProcessException, ProcessExitedException, ProcessRaisedException, spawn,
    start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
           "ProcessExitedException"] + list(multiprocessing.__all__)

# shared memory is passed by file descriptor (PyTorch's default strategy on Linux)
_sharing_strategy = "file_descriptor"
_all_sharing_strategies = {"file_descriptor"}


def set_sharing_strategy(new_strategy):
    """Only ``"file_descriptor"`` exists here (PyTorch also has ``"file_system"``)."""
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"Invalid sharing strategy: {new_strategy}")
    global _sharing_strategy
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    return _sharing_strategy


def get_all_sharing_strategies():
    return set(_all_sharing_strategies)


init_reductions()
