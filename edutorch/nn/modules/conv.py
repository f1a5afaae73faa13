"""``nn.Conv1d`` and ``nn.Conv2d``: learned filters slid over the input.

The work happens in ``F.conv2d`` (im2col + one matmul, see
``nn/_functions/conv.py``); the module holds ``weight`` of shape
(out_channels, in_channels // groups, *kernel_size) and ``bias``.
"""
import math

from ... import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class _ConvNd(Module):
    """What Conv1d and Conv2d share: argument checks, parameters, init and repr."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                 padding_mode, dims, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
            if padding == "same" and any(s != 1 for s in F._ntuple(stride, dims)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(
                f"padding_mode must be one of {{'zeros', 'reflect', 'replicate', 'circular'}}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = F._ntuple(kernel_size, dims)
        self.stride = F._ntuple(stride, dims)
        self.padding = padding if isinstance(padding, str) else F._ntuple(padding, dims)
        self.dilation = F._ntuple(dilation, dims)
        self.transposed = False
        self.output_padding = (0,) * dims
        self.groups = groups
        self.padding_mode = padding_mode
        self.weight = Parameter(empty((out_channels, in_channels // groups) + self.kernel_size,
                                      device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """PyTorch's default: ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``, fan_in = in/groups * k."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def _conv_forward(self, input, weight, bias, conv):
        if self.padding_mode != "zeros":
            # pad with reflected/replicated/circular values first, then convolve unpadded
            pads = []
            for p in reversed(self.padding):
                pads += [p, p]
            return conv(F.pad(input, pads, mode=self.padding_mode), weight, bias, self.stride, 0,
                        self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) -> (N, C_out, L_out)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 1, device, dtype)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias, F.conv1d)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) -> (N, C_out, H_out, W_out)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 2, device, dtype)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias, F.conv2d)
