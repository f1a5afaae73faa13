"""``nn.Conv1d``, ``nn.Conv2d`` and ``nn.ConvTranspose2d``: learned filters slid over the input.

The work happens in ``F.conv2d`` (im2col + one matmul, see
``nn/_functions/conv.py``); the module holds ``weight`` of shape
(out_channels, in_channels // groups, *kernel_size) and ``bias``; a transposed
convolution's ``weight`` is (in_channels, out_channels // groups, *kernel_size).
"""
import math

from ... import Size, empty
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module


class _ConvNd(Module):
    """What Conv1d and Conv2d share: argument checks, parameters, init and repr."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                 padding_mode, dims, device=None, dtype=None, transposed=False, output_padding=0):
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
        self.transposed = transposed
        self.output_padding = F._ntuple(output_padding, dims)
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = _padding_for_pad(self.padding, self.kernel_size, self.dilation)
        channels = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(empty(channels + self.kernel_size, device=device, dtype=dtype))
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
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
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
            return conv(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                        self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


def _padding_for_pad(padding, kernel_size, dilation):
    """``F.pad``'s list for a ``padding_mode`` other than zeros (PyTorch's
    ``_reversed_padding_repeated_twice``): last dim first, (left, right) each; ``'same'`` puts
    ``dilation * (k - 1) // 2`` on the left and the rest on the right, ``'valid'`` pads nothing."""
    pads = []
    for i in reversed(range(len(kernel_size))):
        if padding == "same":
            total = dilation[i] * (kernel_size[i] - 1)
            pads += [total // 2, total - total // 2]
        else:
            p = 0 if padding == "valid" else padding[i]
            pads += [p, p]
    return pads if isinstance(padding, str) else tuple(pads)  # as PyTorch: a list for a string, else a tuple


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


class ConvTranspose2d(_ConvNd):
    """2-D transposed convolution (N, C_in, H, W) -> (N, C_out, H_out, W_out): ``conv2d``'s adjoint,
    the usual learned upsampling of decoders and GANs."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 2, device, dtype, transposed=True, output_padding=output_padding)

    def _output_padding(self, input, output_size):
        """The ``output_padding`` that makes the result ``output_size`` (stride > 1 leaves a choice)."""
        if output_size is None:
            return self.output_padding
        wanted = list(output_size)[-2:]
        spatial = input.shape[-2:]
        smallest = [(spatial[d] - 1) * self.stride[d] - 2 * self.padding[d]
                    + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(2)]
        largest = [lo + s - 1 for lo, s in zip(smallest, self.stride)]
        if any(not lo <= n <= hi for lo, n, hi in zip(smallest, wanted, largest)):
            raise ValueError(f"requested an output size of {wanted}, but valid sizes range from {smallest} "
                             f"to {largest} (for an input of {Size(spatial)})")
        return tuple(n - lo for n, lo in zip(wanted, smallest))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)


class LazyConv2d(LazyModuleMixin, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` is read from the first input (then it becomes a ``Conv2d``)."""

    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                         device=device, dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        """``in_channels`` from the input's channel dim (dim 1, or 0 when unbatched)."""
        from ... import no_grad

        if self.has_uninitialized_params():
            with no_grad():
                self.in_channels = input.shape[1] if input.ndim == 4 else input.shape[0]
                if self.in_channels % self.groups != 0:
                    raise ValueError("in_channels must be divisible by groups")
                self.weight.materialize((self.out_channels, self.in_channels // self.groups) + self.kernel_size)
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()
