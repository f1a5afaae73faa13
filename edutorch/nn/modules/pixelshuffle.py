"""``nn.PixelShuffle`` / ``nn.PixelUnshuffle``: trade channels for resolution (sub-pixel convolution)."""
from .. import functional as F
from .module import Module


class PixelShuffle(Module):
    """(N, C r², H, W) -> (N, C, H r, W r)."""

    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(N, C, H r, W r) -> (N, C r², H, W)."""

    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
