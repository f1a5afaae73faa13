"""``default_collate``: turn a list of samples into one batch.

The rule is recursive and follows the structure of one sample:

* tensors are stacked along a new first dimension;
* NumPy arrays become tensors, then are stacked;
* Python floats become a float64 tensor, ints an int64 tensor;
* strings stay a list;
* a dict is collated key by key, a tuple/list position by position
  (so ``[(x0, y0), (x1, y1)]`` becomes ``[stack(x), stack(y)]``).
"""
import collections.abc

import numpy as np

from .... import Tensor, as_tensor, float64, stack, tensor

__all__ = ["default_collate", "default_convert"]

_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _stack(tensors):
    return stack(tensors, 0)


def default_collate(batch):
    """Collate a list of samples into a batch (see the module docstring)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OSUV":
            raise TypeError(_ERROR.format(elem.dtype))
        return _stack([as_tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        return as_tensor(np.array(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(list(samples)) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        return [default_collate(list(samples)) for samples in transposed]
    raise TypeError(_ERROR.format(type(elem)))


def default_convert(data):
    """``batch_size=None``: no batching, only NumPy arrays become tensors."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OSUV":
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return type(data)({key: default_convert(value) for key, value in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):  # a tuple comes back as a list, as in PyTorch
        return [default_convert(d) for d in data]
    return data
