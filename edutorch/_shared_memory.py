"""Shared memory for ``Tensor.share_memory_()``: the storage half of ``torch.multiprocessing``.

A tensor's array is moved into a block of shared memory: a ``memfd`` file (an
anonymous file in RAM) mapped with ``mmap``, viewed by NumPy without copying.
Every process that maps the same file sees the same bytes.  As in PyTorch,
where sharing is a feature of the storage, this lives beside the Tensor;
``multiprocessing/reductions.py`` sends such a block to another process.
"""
import mmap
import os
import tempfile
import weakref

import numpy as np

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


def map_block(fd, nbytes):
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
    block = map_block(_new_fd(nbytes), nbytes)
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


def block_fd(block):
    """The file descriptor behind a shared block (``shared_block``'s result)."""
    return _FDS[id(block)]
