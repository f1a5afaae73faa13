"""Tensors in shared memory, and how they travel to other processes.

``Tensor.share_memory_()`` moves a tensor's array into a block of shared
memory: a ``memfd`` file (an anonymous file in RAM) mapped with ``mmap``,
viewed by NumPy without copying. Every process that maps the same file sees
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
import mmap
import os
import tempfile
import weakref
from multiprocessing.reduction import DupFd, ForkingPickler

import numpy as np

__all__ = ["init_reductions", "reduce_tensor", "rebuild_tensor", "shared_array", "shared_block"]

_FDS = {}  # id(mmap) -> the file descriptor behind it, while the mapping lives


def _new_fd(nbytes):
    """A file in RAM of ``nbytes`` bytes, by descriptor (never on disk, no name to clean up)."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("edutorch-shared", os.MFD_CLOEXEC)
    else:  # other POSIX systems: an unlinked temporary file in /dev/shm or /tmp
        directory = "/dev/shm" if os.path.isdir("/dev/shm") else None
        fd, path = tempfile.mkstemp(prefix="edutorch-shared-", dir=directory)
        os.unlink(path)
    os.ftruncate(fd, nbytes)
    return fd


def _map(fd, nbytes):
    """Map the file shared (MAP_SHARED, the default) and remember its descriptor."""
    block = mmap.mmap(fd, nbytes)
    _FDS[id(block)] = fd
    weakref.finalize(block, _forget, id(block), fd)
    return block


def _forget(key, fd):
    _FDS.pop(key, None)
    os.close(fd)


def shared_array(array):
    """A copy of ``array`` whose memory is a new shared block."""
    nbytes = max(array.nbytes, 1)  # mmap cannot map 0 bytes
    block = _map(_new_fd(nbytes), nbytes)
    out = np.frombuffer(block, dtype=array.dtype, count=array.size).reshape(array.shape)
    np.copyto(out, array)
    return out


def shared_block(array):
    """The shared ``mmap`` an array views, or None (follows ``.base`` through views)."""
    base = array
    while base is not None:
        if isinstance(base, mmap.mmap) and id(base) in _FDS:
            return base
        base = base.obj if isinstance(base, memoryview) else getattr(base, "base", None)
    return None


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
    return rebuild_tensor, (type(tensor), DupFd(_FDS[id(block)]), layout, tensor.requires_grad)


def rebuild_tensor(cls, dup_fd, layout, requires_grad):
    """The receiving side: map the same block and view it with the sender's layout."""
    from .._tensor import Tensor
    from ..nn.parameter import Parameter

    nbytes, dtype, shape, strides, offset = layout
    block = _map(dup_fd.detach(), nbytes)
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
