"""Small helpers shared by the widget models (no ipywidgets, no matplotlib).

The widgets only use the public API that PyTorch and edutorch share, so the
same model class works on an ``edutorch.nn.Module`` and on a real
``torch.nn.Module``. ``framework_of`` finds which of the two a module is.
"""
from __future__ import annotations

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
    """``tensor``'s values as NumPy without a copy where possible: read it, never write it."""
    return np.asarray(tensor.detach().cpu().numpy())


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


def stats_of(array):
    """Mean, std (unbiased, like ``Tensor.std()``), min, max, L2 norm and sparsity."""
    a = np.asarray(array, dtype=np.float64)
    if a.size == 0:
        nan = float("nan")
        return Stats(nan, nan, nan, nan, 0.0, 0.0)
    std = float(a.std(ddof=1)) if a.size > 1 else float("nan")
    return Stats(
        mean=float(a.mean()),
        std=std,
        min=float(a.min()),
        max=float(a.max()),
        norm=float(np.sqrt(np.sum(a * a))),
        zeros=float(np.count_nonzero(a == 0) / a.size),
    )
