"""Padding layers (``nn.ZeroPad2d``, ``nn.ReflectionPad1d``, ...): ``F.pad`` with a fixed mode and size.

``padding`` is one int (every side) or a tuple ``(left, right[, top, bottom])``
for the last dims, as ``F.pad`` takes it.
"""
from .. import functional as F
from .module import Module


def _expand(padding, dims):
    return (padding,) * (2 * dims) if isinstance(padding, int) else tuple(padding)


class _PadNd(Module):
    """A padding layer: ``mode`` and the number of padded dims are fixed by the subclass."""

    mode, dims = "constant", 1
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = _expand(padding, self.dims)
        self.value = value

    def forward(self, input):
        if self.mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding, value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    dims = 1


class ConstantPad2d(_ConstantPadNd):
    dims = 2


class ConstantPad3d(_ConstantPadNd):
    dims = 3


class _ZeroPadNd(_PadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ZeroPad1d(_ZeroPadNd):
    dims = 1


class ZeroPad2d(_ZeroPadNd):
    dims = 2


class ZeroPad3d(_ZeroPadNd):
    dims = 3


class _ModePadNd(_PadNd):
    """Padding by a mode other than a constant: reflect, replicate, circular."""


class ReflectionPad1d(_ModePadNd):
    mode, dims = "reflect", 1


class ReflectionPad2d(_ModePadNd):
    mode, dims = "reflect", 2


class ReflectionPad3d(_ModePadNd):
    mode, dims = "reflect", 3


class ReplicationPad1d(_ModePadNd):
    mode, dims = "replicate", 1


class ReplicationPad2d(_ModePadNd):
    mode, dims = "replicate", 2


class ReplicationPad3d(_ModePadNd):
    mode, dims = "replicate", 3


class CircularPad1d(_ModePadNd):
    mode, dims = "circular", 1


class CircularPad2d(_ModePadNd):
    mode, dims = "circular", 2


class CircularPad3d(_ModePadNd):
    mode, dims = "circular", 3
