"""``nn.Dropout`` and ``nn.Dropout2d``: random zeroing in training, identity in eval.

In training each element (Dropout) or each whole channel (Dropout2d) is
zeroed with probability ``p`` and the survivors are scaled by ``1 / (1 - p)``
so the expected value of every output equals its input.  ``model.eval()``
switches this off.
"""
from .. import functional as F
from .module import Module


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability ``p`` (training only)."""

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) with probability ``p`` (training only)."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)
