"""Tensors in shared memory, and how they travel to other processes.

``Tensor.share_memory_()`` moves a tensor's array into a block of shared
memory (``edutorch/_shared_memory.py``, beside the Tensor, as PyTorch's
storage does it): a ``memfd`` file (an anonymous file in RAM) mapped with
``mmap``, viewed by NumPy without copying. Every process that maps the same file sees
the same bytes, so an in-place update in one (``p -= lr * grad``) is seen by
all: that is what Hogwild training relies on.

How another process gets the block:

* ``fork`` (the default start method on Linux): the child inherits the
  mapping itself; nothing is copied.
* pickling (``spawn``, or any tensor put on a ``multiprocessing.Queue``):
  ``reduce_tensor`` sends the file descriptor (``DupFd``, PyTorch's
  ``file_descriptor`` sharing strategy) plus shape, dtype, strides and offset,
  and ``rebuild_tensor`` maps the same file in the receiver. As in PyTorch, a
  tensor that is not shared yet is moved to shared memory when it is sent.
"""
from multiprocessing.reduction import DupFd, ForkingPickler

import numpy as np

from .._shared_memory import block_fd, map_block, shared_array, shared_block

__all__ = ["init_reductions", "reduce_tensor", "rebuild_tensor", "shared_array", "shared_block"]


def _address(array):
    return array.__array_interface__["data"][0]


def reduce_tensor(tensor):
    """Pickle a tensor as (descriptor of its shared block, where in it, and how to read it)."""
    if tensor.is_cuda:
        raise RuntimeError("edutorch.multiprocessing shares CPU tensors only")
    tensor.share_memory_()
    array = tensor._data
    block = shared_block(array)
    offset = _address(array) - _address(np.frombuffer(block, dtype=np.uint8))
    layout = (len(block), array.dtype.str, array.shape, array.strides, offset)
    return rebuild_tensor, (type(tensor), DupFd(block_fd(block)), layout, tensor.requires_grad)


def rebuild_tensor(cls, dup_fd, layout, requires_grad):
    """The receiving side: map the same block and view it with the sender's layout."""
    from .._tensor import Tensor
    from ..nn.parameter import Parameter

    nbytes, dtype, shape, strides, offset = layout
    block = map_block(dup_fd.detach(), nbytes)
    array = np.ndarray(shape, np.dtype(dtype), buffer=block, offset=offset, strides=strides)
    if issubclass(cls, Parameter):
        return cls(Tensor._make(array), requires_grad)
    return Tensor._make(array, requires_grad)


def init_reductions():
    """Teach ``multiprocessing``'s pickler to send edutorch tensors through shared memory."""
    from .._tensor import Tensor
    from ..nn.parameter import Parameter

    for cls in (Tensor, Parameter):  # the pickler looks reducers up by exact type
        ForkingPickler.register(cls, reduce_tensor)
