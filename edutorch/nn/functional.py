"""``torch.nn.functional``: the layers and losses as plain functions.

Each function checks its arguments the way PyTorch does (same error types and
messages) and calls an autograd ``Function`` from ``nn/_functions`` or a short
composition of Tensor ops.  Modules in ``nn/modules`` hold the parameters and
call these.
"""
import math
import warnings

import numpy as np

from .. import _dtype, backend
from .._tensor import Tensor
from ..autograd._functions.utils import wrap_dim
from ..autograd import forward_ad as _forward_ad
from ..autograd.grad_mode import is_grad_enabled
from ..autograd._functions import pointwise
from ..autograd._functions import shape as _shape_fns
from ..autograd._functions import softmax as _softmax
from ._functions import activation as _act
from ._functions import conv as _convolution
from ._functions import linear as _linear
from ._functions import loss as _loss
from ._functions import normalization as _norm
from ._functions import pooling as _pool
from ._functions import sparse as _sparse
from ..autograd.function import composite_op  # autocast casts a composite op once, at entry


def _ntuple(value, n):
    """``3`` -> ``(3, 3)``; a tuple stays as it is (``_pair`` in PyTorch)."""
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


def _shape_list(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


# ---------------------------------------------------------------- linear ----
def linear(input, weight, bias=None):
    """``y = x @ W.T + b``, one fused op (``addmm``) for a 2-D input, as in PyTorch."""
    if weight.ndim != 2:
        if weight.ndim == 1 and bias is None:  # PyTorch: a weight vector gives x @ w
            return input.matmul(weight)
        raise RuntimeError(f"mat2 must be a matrix, got {weight.ndim}-D tensor")
    ndim = input._data.ndim
    if ndim == 2 and bias is not None:
        return _linear.Linear.apply(bias, input, weight)
    if ndim == 2:
        return _linear.LinearNoBias.apply(None, input, weight)
    if ndim > 2 and bias is not None and not input.is_contiguous():  # PyTorch: matmul, then add the bias
        return linear(input, weight) + bias
    if ndim > 2:  # flatten the batch dims, one product, restore them
        out = linear(input.flatten(0, -2), weight, bias)  # (not reshape(-1, in): in may be 0)
        shape = (*input.shape[:-1], weight.shape[0])
        # PyTorch: a view of addmm's result; without a bias, matmul's _unsafe_view of mm's
        return out.view(*shape) if bias is not None else _shape_fns.UnsafeView.apply(out, shape)
    # a single vector: (in,) -> (out,), as PyTorch's addmm and view, or matmul's mm and squeeze_
    out = linear(input.unsqueeze(0), weight, bias)
    return out.view(weight.shape[0]) if bias is not None else out.squeeze_(0)


def bilinear(input1, input2, weight, bias=None):
    """``y = x1^T W x2 + b`` for every output feature."""
    if input1.shape[:-1] != input2.shape[:-1]:
        for d, (a, b) in enumerate(zip(input1.shape, input2.shape)):
            if a != b:
                raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: got {a} and {b}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected "
                           f"{weight.shape[0]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected {weight.shape[1]}"
        )
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected {weight.shape[2]}"
        )
    dtypes = [("input1", input1), ("input2", input2), ("weight", weight)]
    dtypes += [("bias", bias)] if bias is not None else []
    if any(t.dtype != input1.dtype for _, t in dtypes):
        got = ", ".join(f"{name}: {_dtype.cpp_type_name(t.dtype)}" for name, t in dtypes)
        raise RuntimeError(f"All tensors must have the same dtype, got {got}")
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    out = _linear.Bilinear.apply(x1, x2, weight, bias)
    return out.reshape(*lead, weight.shape[0])


# ------------------------------------------------------------ convolution ----
def _conv(input, weight, bias, stride, padding, dilation, groups, dims):
    """Shared by conv1d/conv2d: check shapes, resolve ``padding``, run ``Convolution``."""
    name = f"conv{dims}d"
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, "
            f"but got input of size: {_shape_list(input)}"
        )
    unbatched = input.ndim == dims + 1
    if unbatched:
        input = input.unsqueeze(0)
    stride, dilation = _ntuple(stride, dims), _ntuple(dilation, dims)
    _check_conv_args(stride, padding, dilation, groups, dims)
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if weight.ndim != input.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{_shape_list(weight)}, but got {input.ndim}-dimensional input of size "
                           f"{_shape_list(input)} instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"Given weight of size {_shape_list(weight)}, expected bias to be 1-dimensional with "
                           f"{weight.shape[0]} elements, but got bias of size {_shape_list(bias)} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{_shape_list(weight)}] instead")
    if input.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {_shape_list(weight)}, expected "
            f"input{_shape_list(input)} to have {weight.shape[1] * groups} channels, but got "
            f"{input.shape[1]} channels instead"
        )
    kernel = tuple(weight.shape[2:])
    if min(kernel) <= 0:
        kh, kw = ((1,) + kernel)[-2:]
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kh} kernel_width: {kw}")
    if min(dilation) == 0:  # conv1d runs as a 2-D convolution of height 1: PyTorch lists that dilation
        raise RuntimeError(f"dilation should be greater than zero, but got {list(((1,) + dilation)[-2:])}")
    pads = _conv_padding(padding, kernel, dilation, dims)
    for size, k, d, (lo, hi) in zip(input.shape[2:], kernel, dilation, pads):
        if size + lo + hi < d * (k - 1) + 1:
            padded = " x ".join(str(s + lo + hi) for s, (lo, hi) in zip(input.shape[2:], pads))
            ks = " x ".join(str(d * (k - 1) + 1) for k, d in zip(kernel, dilation))
            raise RuntimeError(
                f"Calculated padded input size per channel: ({padded}). Kernel size: ({ks}). "
                "Kernel size can't be greater than actual input size"
            )
    _check_conv_dtypes(input, weight, bias)
    if any(lo != hi for lo, hi in pads):
        # padding='same' with an even span: as PyTorch, first a zero-padded copy with the
        # extra pixel at the end (which the convolution then saves), then even padding
        extra = tuple((0, hi - lo) for lo, hi in pads)
        input = _sparse.Pad.apply(input, ((0, 0), (0, 0)) + extra, "constant", 0.0)
        pads = tuple((lo, lo) for lo, _ in pads)
    if dims == 1:  # Convolution works on 2-D planes; a 1-D signal is a plane of height 1
        stride, dilation, pads = (1,) + stride, (1,) + dilation, ((0, 0),) + pads
    out = _convolution.Convolution.apply(input, weight, bias, stride, pads, dilation, groups)
    return out.squeeze(0) if unbatched else out


def _check_conv_args(stride, padding, dilation, groups, dims):
    """PyTorch's checks of a convolution's arguments, in its order (before any shape check)."""
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if not isinstance(padding, str) and min(_ntuple(padding, dims)) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 0:
        raise RuntimeError("dilation should be greater than zero")


def _check_conv_dtypes(input, weight, bias):
    """PyTorch's (CPU) errors for a convolution whose input, weight and bias dtypes differ."""
    dtype = input.dtype
    if bias is not None and bias.dtype != dtype:
        raise RuntimeError(
            f"Input type ({_dtype.cpp_type_name(dtype)}) and bias type ({_dtype.cpp_type_name(bias.dtype)}) "
            "should be the same"
        )
    if weight.dtype != dtype:
        raise _expected_scalar_type(dtype, weight.dtype)


def _expected_scalar_type(expected, found):
    return RuntimeError(f"expected scalar type {_dtype.scalar_type_name(expected)} but found "
                        f"{_dtype.scalar_type_name(found)}")


def _check_norm_dtypes(input, *params):
    """PyTorch's (CPU) rule for normalization parameters of another dtype than the input.

    The first defined parameter decides: if its dtype differs from the input's, the
    layer is "mixed dtype", allowed only for a float16 (or bfloat16) input with float32
    parameters; otherwise every parameter must have the input's dtype.
    """
    params = [p for p in params if p is not None]
    if not params:
        return
    dtype = input.dtype
    if params[0].dtype != dtype:  # mixed dtype
        if any(p.dtype != _dtype.float32 for p in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if dtype is not _dtype.float16:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    for p in params:
        if p.dtype != dtype:
            raise _expected_scalar_type(dtype, p.dtype)


def _conv_padding(padding, kernel, dilation, dims):
    """``padding`` as ``((before, after), ...)`` per spatial dim.

    ``'same'`` keeps the size: a total of ``d*(k-1)`` pixels, the odd one
    going after (as PyTorch does for even kernels).
    """
    if padding == "valid":
        return ((0, 0),) * dims
    if padding == "same":
        pads = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            pads.append((total // 2, total - total // 2))
        return tuple(pads)
    return tuple((p, p) for p in _ntuple(padding, dims))


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over (N, C, L) (or unbatched (C, L))."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over (N, C, H, W) (or unbatched (C, H, W)), via im2col + one matmul."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


# ------------------------------------------------------ unfold and fold ----
def _fold_pair(value, name):
    """PyTorch's ``_pair`` for unfold/fold: an int, or exactly two of them."""
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(pair)}")
    return pair


def _fold_args(input, op, kernel_size, dilation, padding, stride):
    """Check and pair up the geometry of ``F.unfold`` / ``F.fold`` (PyTorch's ``im2col`` / ``col2im`` checks)."""
    kernel, dilation = _fold_pair(kernel_size, "kernel_size"), _fold_pair(dilation, "dilation")
    padding, stride = _fold_pair(padding, "padding"), _fold_pair(stride, "stride")
    for what, key, (a, b), least in (("kernel size", "kernel", kernel, 1), ("stride", "stride", stride, 1),
                                     ("dilation", "dilation", dilation, 1), ("padding", "pad", padding, 0)):
        if min(a, b) < least:
            rule = "greater than zero" if least else "non-negative"
            raise RuntimeError(f"{what} should be {rule}, but got {key}_height: {a} {key}_width: {b}")
    if input._data.dtype.kind in "iu":  # integers (bool and floats are fine)
        raise NotImplementedError(f"\"{op}_out_cpu\" not implemented for '{_dtype.scalar_type_name(input.dtype)}'")
    return kernel, dilation, ((padding[0],) * 2, (padding[1],) * 2), stride


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks (im2col): (N, C, H, W) -> (N, C*kh*kw, L), L the number of blocks.

    Column ``l`` holds block ``l``'s pixels in (channel, kernel row, kernel column)
    order: what a convolution multiplies by its weights.  Its gradient is ``fold``.
    """
    if input.ndim not in (3, 4) or 0 in input.shape[-3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {_shape_list(input)}")
    kernel, dilation, pads, stride = _fold_args(input, "im2col", kernel_size, dilation, padding, stride)
    blocks = _convolution.out_hw([n + 2 * p for n, (p, _) in zip(input.shape[-2:], pads)], kernel, stride, dilation)
    if min(blocks) < 1:
        raise RuntimeError(
            f"Given input with spatial size {tuple(input.shape[-2:])}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={(pads[0][0], pads[1][0])}, calculated shape of the array of sliding blocks as {blocks}, "
            "but its components must be at least one.")
    return _convolution.Im2Col.apply(input, kernel, dilation, pads, stride, input.shape[-3], False)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine sliding local blocks into a tensor (col2im): (N, C*kh*kw, L) -> (N, C, H, W).

    The adjoint of ``unfold``: overlapping blocks add up.  Its gradient is ``unfold``.
    """
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {_shape_list(input)}")
    output_size = _fold_pair(output_size, "output_size")
    kernel, dilation, pads, stride = _fold_args(input, "col2im", kernel_size, dilation, padding, stride)
    rows, length = input.shape[-2:]
    if rows % (kernel[0] * kernel[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={rows} and kernel_size={kernel}.")
    blocks = _convolution.out_hw([n + 2 * p for n, (p, _) in zip(output_size, pads)], kernel, stride, dilation)
    if max(blocks[0], 0) * max(blocks[1], 0) != length:
        raise RuntimeError(
            f"Given output_size={output_size}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={(pads[0][0], pads[1][0])}, stride={stride}, expected size of input's dimension 2 to match "
            f"the calculated number of sliding blocks {max(blocks[0], 0)} * {max(blocks[1], 0)} = "
            f"{max(blocks[0], 0) * max(blocks[1], 0)}, but got input.size(2)={length}.")
    channels = rows // (kernel[0] * kernel[1])
    return _convolution.Col2Im.apply(input, output_size, kernel, dilation, pads, stride, channels, False)


# ---------------------------------------------------------------- pooling ----
def _check_pool_input(input, dims):
    """(N, C, *spatial) or unbatched (C, *spatial); only the batch may be empty, as in PyTorch."""
    batched = input.ndim == dims + 2
    if dims == 2 and not batched and input.ndim != 3:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if (not batched and input.ndim != dims + 1) or 0 in tuple(input.shape)[int(batched):]:
        prefix = "max_pool1d: " if dims == 1 else ""
        raise RuntimeError(
            f"{prefix}Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{list(input.shape)}"
        )


def _pool_args(kernel_size, stride, padding, dilation):
    kernel = _ntuple(kernel_size, 2)
    stride = kernel if stride is None or stride == [] or stride == () else _ntuple(stride, 2)
    return kernel, stride, _ntuple(padding, 2), _ntuple(dilation, 2)


def _check_pool_args(kernel, stride, padding, dilation):
    """PyTorch's checks of a 2-D pooling's arguments, in its order (``stride`` defaults to the kernel)."""
    if 0 in stride:
        raise RuntimeError("stride should not be zero")
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}")
    if min(padding) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(padding)}")
    if min(stride) < 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {stride[0]} dW: {stride[1]}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dilation[0]} "
                           f"dilationW: {dilation[1]}")


def _check_pool_sizes(input, kernel, stride, padding, dilation, ceil_mode):
    _check_pool_args(kernel, stride, padding, dilation)
    for k, p, d in zip(kernel, padding, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={k} and dilation={d}"
            )
    out = [_pool.out_size(s, k, st, p, d, ceil_mode)
           for s, k, st, p, d in zip(input.shape[-2:], kernel, stride, padding, dilation)]
    if min(out) < 1:
        c = input.shape[-3]
        raise RuntimeError(
            f"Given input size: ({c}x{input.shape[-2]}x{input.shape[-1]}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}). Output size is too small"
        )


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over ``kernel_size`` windows; with ``return_indices`` also where each max was."""
    _check_pool_input(input, 2)
    kernel, stride, padding, dilation = _pool_args(kernel_size, stride, padding, dilation)
    _check_pool_sizes(input, kernel, stride, padding, dilation, ceil_mode)
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    out = _pool.MaxPool2d.apply(x, kernel, stride, padding, dilation, ceil_mode)
    if unbatched:
        out = _unbatch(out)
    if not return_indices:
        return out
    indices = _max_pool_indices(x, kernel, stride, padding, dilation, ceil_mode)
    return out, (indices.squeeze(0) if unbatched else indices)


def _max_pool_indices(x, kernel, stride, padding, dilation, ceil_mode):
    """The flat input index (``h * W + w``) of each window's max, as ``return_indices`` gives."""
    from ..autograd.function import FunctionCtx

    ctx = FunctionCtx()  # a throwaway ctx: run the pooling forward once more to read its argmax
    _pool.MaxPool2d.forward(ctx, x, kernel, stride, padding, dilation, ceil_mode)
    return Tensor._make(_pool.MaxPool2d.indices(ctx))


def _check_pool1d_args(kernel, stride, padding, dilation):
    """PyTorch's own checks (and messages) for ``max_pool1d``."""
    for name, value, least in (("kernel_size", kernel, 1), ("stride", stride, 1), ("padding", padding, 0),
                               ("dilation", dilation, 1)):
        if value < least:
            rule = "be non-negative" if least == 0 else "be greater than zero"
            raise RuntimeError(f"max_pool1d() {name} must {rule}, but got {value}")
    if padding > kernel // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={padding} "
                           f"and kernel_size={kernel}")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-D max pooling over (N, C, L): 2-D pooling over a height of 1."""
    _check_pool_input(input, 1)
    stride = kernel_size if stride is None or stride == [] else stride
    _check_pool1d_args(*(_ntuple(v, 1)[0] for v in (kernel_size, stride, padding, dilation)))
    res = max_pool2d(input.unsqueeze(-2), (1, _ntuple(kernel_size, 1)[0]), (1, _ntuple(stride, 1)[0]),
                     (0, _ntuple(padding, 1)[0]), (1, _ntuple(dilation, 1)[0]), ceil_mode, return_indices)
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    # PyTorch computes through max_pool1d_with_indices (its result a view of the 2-D one) only when it
    # records a graph (or a tangent); otherwise its own kernel gives a new tensor (``detach_()`` allowed)
    if (input.requires_grad and is_grad_enabled()) or _forward_ad.tangent_of(input) is not None:
        return res.squeeze(-2)
    return _shape_fns.SqueezeDim.apply(res, tuple(res.shape[:-2]) + tuple(res.shape[-1:]))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over ``kernel_size`` windows."""
    _check_pool_input(input, 2)
    kernel, stride, padding, _ = _pool_args(kernel_size, stride, padding, 1)
    _check_pool_sizes(input, kernel, stride, padding, (1, 1), ceil_mode)
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    out = _pool.AvgPool2d.apply(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return _unbatch(out) if unbatched else out


def _unbatch(out):
    """``out.squeeze(0)`` of a pooling over an unbatched input, as a new tensor: PyTorch's result is
    not a view there (``detach_()`` of it is allowed)."""
    return _shape_fns.SqueezeDim.apply(out, tuple(out.shape[1:]))


def adaptive_avg_pool2d(input, output_size):
    """Average pooling whose windows are chosen to give ``output_size``."""
    if input.ndim <= 2 and isinstance(output_size, (tuple, list)):  # PyTorch's _list_with_default
        raise ValueError("Input dimension should be at least 3")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {_shape_list(input)}")
    for d in (input.ndim - 2, input.ndim - 1):  # (the channels of a batch may be empty)
        if input.shape[d] == 0:
            raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_shape_list(input)} with dimension {d} being empty")
    size = _ntuple(output_size, 2)
    size = tuple(s if o is None else o for s, o in zip(input.shape[-2:], size))
    if min(size) < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{size[0]}, {size[1]}}}")
    if size == (1, 1):  # PyTorch takes a plain mean here (grad_fn MeanBackward1)
        return input.mean((-2, -1), keepdim=True)
    return _pool.AdaptiveAvgPool2d.apply(input, size)


# ---------------------------------------------------------- normalization ----
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise each channel by batch statistics (training) or running ones (eval)."""
    if input.numel() == 0:
        # PyTorch's _batch_norm_impl_index: no statistics to take, the running ones are left as they
        # are; a copy (not the input itself), scaled and shifted so the parameters stay in the graph
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        return out + bias[0] if bias is not None else out
    channels = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    if training:
        size = input.numel() // channels
        if size == 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {input.shape}"
            )
    _check_norm_dtypes(input, weight, bias, running_mean, running_var)
    return _norm.BatchNorm.apply(input, weight, bias, running_mean, running_var, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the last ``len(normalized_shape)`` dims of each sample."""
    normalized_shape = tuple(_ntuple(normalized_shape, 1))
    k = len(normalized_shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
                           "one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{_shape_list(t)} and normalized_shape = {list(normalized_shape)}")
    if tuple(input.shape[input.ndim - k:]) != normalized_shape or input.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size{list(input.shape)}"
        )
    _check_norm_dtypes(input, weight, bias)
    return _norm.LayerNorm.apply(input, k, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise over each group of ``C // num_groups`` channels of each sample."""
    if input.shape[1] % num_groups != 0:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input of "
            f"shape {list(input.shape)} and num_groups={num_groups}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != input.shape[1]):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {_shape_list(t)} and input of shape {_shape_list(input)}")
    _check_norm_dtypes(input, weight, bias)
    return _norm.GroupNorm.apply(_contiguous_in_its_format(input), num_groups, weight, bias, eps)


def _contiguous_in_its_format(input):
    """``input.contiguous(input.suggest_memory_format())``, as PyTorch's ``group_norm`` takes it: a copy
    (``CloneBackward0``) unless laid out contiguously already, in C order or (4-D) channels last.  So
    the node saves that copy, and writing ``input`` in place later does not refuse backward."""
    if input.ndim == 4 and _channels_last_contiguous(input._data):
        return input
    return input.contiguous()


def _channels_last_contiguous(x):
    """Is a 4-D (N, C, H, W) array laid out as (N, H, W, C) in C order (dims of size 1 aside)?"""
    expected = 1
    for d in (1, 3, 2, 0):  # the channels innermost, then W, H, N
        if x.shape[d] != 1:
            if x.strides[d] != expected * x.itemsize:
                return False
            expected *= x.shape[d]
    return True


# ---------------------------------------------------------------- dropout ----
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_mask(input, mask_shape, p):
    """Keep each element with probability ``1 - p``, scaled by ``1 / (1 - p)``
    (``p = 1``: PyTorch multiplies by a 0-d zero, drawing nothing)."""
    from .. import random

    if p == 1:
        return Tensor._make(backend.to_device(np.zeros((), input._data.dtype), input.device.type))
    keep = random._rng(None).random(mask_shape) >= p  # drawn on the host by the one generator
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    mask = (keep * scale).astype(input._data.dtype)
    return Tensor._make(backend.to_device(mask, input.device.type))


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)`` (train only)."""
    _check_p(p)
    if not training or p == 0:
        return input
    mask = _dropout_mask(input, input.shape, p)
    return input.mul_(mask) if inplace else input * mask


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels (feature maps) of (N, C, H, W) with probability ``p``."""
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this warning, "
            "please use dropout instead. Note that dropout2d exists to provide channel-wise dropout on "
            "inputs with 2 spatial dimensions, a channel dimension, and an optional batch dimension "
            "(i.e. 3D or 4D inputs)."
        )
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
            "instead.")
    if not training or p == 0:
        return input
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    mask_shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)  # one draw per (sample, channel)
    mask = _dropout_mask(input, mask_shape, p)
    return input.mul_(mask) if inplace else input * mask


# --------------------------------------------------------------- sparse ----
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Row ``i`` of ``weight`` for each index ``i`` in ``input``."""
    if input._data.dtype not in (np.int64, np.int32):
        kind = "CPUBoolType" if input._data.dtype == np.bool_ else input.type()  # PyTorch's name for bool
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {kind} instead (while checking arguments for embedding)"
        )
    idx = input._data
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if sparse:
        raise RuntimeError("edutorch has no sparse tensors: use sparse=False (a dense gradient)")
    if max_norm is not None:
        _embedding_renorm_(weight, idx, max_norm, norm_type)
    return _sparse.Embedding.apply(weight, input, padding_idx, scale_grad_by_freq)


def _embedding_renorm_(weight, idx, max_norm, norm_type):
    """Rescale, in place, the looked-up rows whose norm exceeds ``max_norm``."""
    rows = np.unique(idx)
    w = weight._data
    norms = np.linalg.norm(w[rows], ord=norm_type, axis=1)
    big = norms > max_norm
    w[rows[big]] *= (max_norm / (norms[big] + 1e-7))[:, None].astype(w.dtype)
    weight._bump_version()


def one_hot(tensor, num_classes=-1):
    """int64 tensor with a 1 at each index: shape ``tensor.shape + (num_classes,)``."""
    if tensor._data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    idx = tensor._data
    if num_classes == -1:
        num_classes = int(idx.max()) + 1 if idx.size else 0
    if idx.size and idx.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if idx.size and idx.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._make((idx[..., None] == np.arange(num_classes)).astype(np.int64))


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims; ``pad`` lists (before, after) from the LAST dim.

    In ``'constant'`` mode a negative width crops that many elements instead."""
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension "
                           f"but got padding length {len(pad)} and input of dimension {input.ndim}")
    widths = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):  # pad[0:2] is the last dim, pad[2:4] the one before...
        widths[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if mode == "constant" and any(n + min(lo, 0) + min(hi, 0) < 0 for n, (lo, hi) in zip(input.shape, widths)):
        raise RuntimeError("narrow(): length must be non-negative.")  # a negative width crops (narrow)
    if mode in ("reflect", "replicate") and 0 in input.shape[1:]:  # nothing to reflect or repeat
        k = len(pad) // 2
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {_shape_list(input)}")
    return _sparse.Pad.apply(input, tuple(widths), mode, 0.0 if value is None else value)


# ------------------------------------------------------------ activations ----
def relu(input, inplace=False):
    """``max(0, x)``; ``inplace=True`` writes the result into ``input``."""
    return input.relu_() if inplace else pointwise.Relu.apply(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` where positive, ``negative_slope * x`` elsewhere."""
    if inplace:
        return input._inplace(_act.LeakyReluInplace, negative_slope)
    return _act.LeakyRelu.apply(input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    if inplace:
        return input._inplace(_act.EluInplace, alpha)
    return _act.Elu.apply(input, alpha)


def _activation(input, fn, *args, inplace=False):
    """``fn`` applied out of place, or written into ``input`` (``inplace=True``).

    In place, the op's node keeps what PyTorch's does: an op that saves its
    input (``hardswish_``, ``mish_``...) gets a copy of the old values
    (``_inplace``; PyTorch saves ``self.clone()``), so a later in-place op on
    ``input`` does not break its backward."""
    return input._inplace(fn, *args) if inplace else fn.apply(input, *args)


def gelu(input, approximate="none"):
    """``x * Phi(x)`` (Phi: standard normal CDF); ``approximate='tanh'`` uses the tanh formula."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _act.Gelu.apply(input, approximate)


def silu(input, inplace=False):
    """``x * sigmoid(x)``."""
    return _activation(input, _act.Silu, inplace=inplace)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: negative values times a slope drawn from [lower, upper] in
    training, times ``(lower + upper) / 2`` in eval."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if inplace:
        return input._inplace(_act.RreluWithNoiseInplace, lower, upper, training)
    return _act.RreluWithNoise.apply(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """``rrelu`` written into ``input``."""
    return rrelu(input, lower, upper, training, inplace=True)


def sigmoid(input):
    """``1 / (1 + exp(-x))``."""
    return pointwise.Sigmoid.apply(input)


def tanh(input):
    """``tanh(x)``."""
    return pointwise.Tanh.apply(input)


def softplus(input, beta=1, threshold=20):  # PyTorch's defaults are ints (grad_fn._saved_beta shows 1)
    """``log(1 + exp(beta x)) / beta``, and just ``x`` where ``beta x > threshold``."""
    return _act.Softplus.apply(input, beta, threshold)


def _softmax_dim(ndim):
    """PyTorch's legacy rule when ``dim`` is not given (it also warns)."""
    warnings.warn(
        "Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim``: non-negative values that sum to 1."""
    if dim is None:
        dim = _softmax_dim(input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return _softmax.Softmax.apply(input, dim)  # dim as given: the node's _saved_dim shows it


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``log(softmax(x))`` along ``dim``, computed without overflow."""
    if dim is None:
        dim = _softmax_dim(input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return _softmax.LogSoftmax.apply(input, dim)  # dim as given: the node's _saved_dim shows it


# ----------------------------------------------------------------- losses ----
_REDUCTIONS = ("none", "mean", "sum")


def _reduction(size_average, reduce, reduction):
    """Resolve the legacy ``size_average``/``reduce`` flags into ``reduction``."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else ("mean" if size_average else "sum")
        warnings.warn(
            "size_average and reduce args will be deprecated, please use reduction='"
            f"{reduction}' instead."
        )
    if reduction not in _REDUCTIONS and reduction != "batchmean":
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _warn_and_broadcast(input, target):
    """PyTorch warns when a loss would silently broadcast target against input, then expands both to
    their common shape (``torch.broadcast_tensors``: the loss's node saves and differentiates the
    expanded views); returns ``(input, target)`` as the loss sees them."""
    if target.shape == input.shape:
        return input, target
    warnings.warn(
        f"Using a target size ({target.shape}) that is different to the input size "
        f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
        "Please ensure they have the same size.",
        stacklevel=3,
    )
    _check_broadcast(input, target)
    from ..functional import broadcast_tensors

    return broadcast_tensors(input, target)


def _check_broadcast(a, b):
    """Raise PyTorch's message when two shapes cannot broadcast."""
    sa, sb = list(a.shape), list(b.shape)
    n = max(len(sa), len(sb))
    for i in range(1, n + 1):
        x = sa[-i] if i <= len(sa) else 1
        y = sb[-i] if i <= len(sb) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {n - i}"
            )


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error ``(x - y)**2``."""
    reduction = _reduction(size_average, reduce, reduction)
    input, target = _warn_and_broadcast(input, target)
    if weight is not None:
        return _apply_weight((input - target) * (input - target), weight, reduction)
    return _loss.MseLoss.apply(input, target, reduction)


def _apply_weight(per_element, weight, reduction):
    loss = per_element * weight
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


@composite_op("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error ``|x - y|``: composed of ops, as in PyTorch (MeanBackward0 <- AbsBackward0)."""
    reduction = _reduction(size_average, reduce, reduction)
    input, target = _warn_and_broadcast(input, target)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Quadratic for ``|x - y| < beta``, linear beyond."""
    reduction = _reduction(size_average, reduce, reduction)
    input, target = _warn_and_broadcast(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _loss.SmoothL1Loss.apply(input, target, reduction, beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Quadratic for ``|x - y| < delta``, linear (slope ``delta``) beyond."""
    reduction = _reduction(None, None, reduction)
    input, target = _warn_and_broadcast(input, target)
    if weight is not None:
        per = _loss.HuberLoss.apply(input, target, "none", delta)
        return _apply_weight(per, weight, reduction)
    return _loss.HuberLoss.apply(input, target, reduction, delta)


def _check_class_target(input, target):
    """Shape checks shared by nll_loss and cross_entropy (class-index targets)."""
    if input.ndim >= 2 and target.ndim >= 1 and input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]})."
        )
    if input.ndim == 2 and target.ndim != 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input.ndim > 2:
        expected = [input.shape[0]] + list(input.shape[2:])
        if list(target.shape) != expected:
            if target.ndim == input.ndim - 1:
                raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
            raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {target.type()[len('torch.'):-len('Tensor')]}"
        )


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of the target class: ``-input[n, target[n]]`` (weighted mean)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_class_target(input, target)
    _check_class_weight(weight, input)
    if input.ndim == 1:  # unbatched (C,): one sample
        out = nll_loss(input.unsqueeze(0), target.reshape(1), weight, None, ignore_index, None, reduction)
        return out.squeeze(0) if reduction == "none" else out
    if weight is not None and weight.requires_grad and is_grad_enabled():  # the loss has no gradient for it
        kernel = "nll_loss_forward" if input.ndim <= 2 else "nll_loss2d_forward"
        raise RuntimeError(f"The function '{kernel}' is not differentiable with respect to argument 'weight'. "
                           "This input cannot have requires_grad True.")
    return _loss.NllLoss.apply(input, target._data, None if weight is None else weight._data, reduction, ignore_index,
                               saved=(target, weight))


@composite_op("cross_entropy_loss")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """``nll_loss(log_softmax(input, 1), target)``; ``target`` holds indices or probabilities."""
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input._data.ndim == 1 else 1
    logp = log_softmax(input, class_dim)
    if target.shape == input.shape:  # class probabilities (PyTorch decides by the shapes)
        _check_class_weight(weight, input, "cross_entropy: ")
        return _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, class_dim)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing == 0.0:
        return nll
    return _label_smoothing(logp, target, weight, nll, reduction, ignore_index, label_smoothing, class_dim)


def _check_class_weight(weight, input, prefix=""):
    """A class ``weight`` must hold one number per class (PyTorch's error; a wrong length
    would otherwise weigh some classes by another class's number, or fail with an IndexError)."""
    n_classes = input.shape[0 if input.ndim == 1 else 1]
    if weight is None or (weight.ndim == 1 and weight.shape[0] == n_classes):
        return
    if input.ndim > 2 and not prefix:  # PyTorch's nll_loss2d words it without the numbers
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    raise RuntimeError(f"{prefix}weight tensor should be defined either for all {n_classes} classes or no classes "
                       f"but got weight tensor of shape: {_shape_list(weight)}")


def _class_weight(weight, ndim, class_dim):
    shape = [1] * ndim
    shape[class_dim] = -1
    return weight.reshape(shape)


def _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, class_dim):
    """``-sum_c target[c] * log p[c]`` (PyTorch's ``cross_entropy_loss_prob_target``)."""
    n_classes = logp.shape[class_dim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * _class_weight(weight, logp.ndim, class_dim)
    if reduction == "none":
        return -prod.sum(class_dim)
    if reduction == "sum":
        return -prod.sum()
    return -prod.sum() / (logp.numel() // n_classes if n_classes else math.nan)  # no classes: NaN, as PyTorch


def _label_smoothing(logp, target, weight, nll, reduction, ignore_index, eps, class_dim):
    """Mix the NLL with the mean over all classes: ``(1-eps) nll + eps/C * smooth``."""
    n_classes = logp.shape[class_dim]
    per_class = logp if weight is None else logp * _class_weight(weight, logp.ndim, class_dim)
    keep = Tensor._make((target._data != ignore_index).astype(logp._data.dtype))
    smooth = -per_class.sum(class_dim) * keep  # ignored samples add nothing
    if reduction == "mean":
        if weight is not None:
            t = target._data[target._data != ignore_index]
            smooth = smooth.sum() / float(weight._data[t].sum())
        else:
            smooth = smooth.sum() / float(keep._data.sum())
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - eps) * nll + smooth * (eps / n_classes)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """``-(t log p + (1 - t) log(1 - p))`` for probabilities ``p``."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
            "is deprecated. Please ensure they have the same size."
        )
    _check_not_differentiable("binary_cross_entropy", weight=weight)
    return _loss.BinaryCrossEntropy.apply(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """BCE on ``sigmoid(input)``, computed stably from the logits."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    _check_not_differentiable("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    return _loss.BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


def _check_not_differentiable(function, **tensors):
    """PyTorch refuses a gradient-requiring ``weight`` (or ``pos_weight``) for the BCE losses."""
    if not is_grad_enabled():
        return
    for name, t in tensors.items():
        if t is not None and t.requires_grad:
            raise RuntimeError(
                f"The function '{function}' is not differentiable with respect to argument '{name}'. "
                "This input cannot have requires_grad True."
            )


@composite_op("kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """``target * (log target - input)`` (input holds log-probabilities); 'batchmean' divides by N.

    As PyTorch's ``at::kl_div``: ``xlogy(target, target) - target * input``, or with ``log_target``
    ``exp(target) * (target - input)``."""
    reduction = _reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release."
        )
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # PyTorch's composite: xlogy(target, target) - target * input (0 * log 0 = 0), so a second
        # derivative w.r.t. the target goes through xlogy's own formula
        loss = target.xlogy(target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


# ------------------------------------------- in-place activations, PReLU ----
def relu_(input):
    """``relu`` written into ``input`` (PyTorch's ``F.relu_``)."""
    return relu(input, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    """``leaky_relu`` written into ``input``."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu_(input, alpha=1.0):
    """``elu`` written into ``input``."""
    return elu(input, alpha, inplace=True)


@composite_op("prelu")
def prelu(input, weight):
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` has one slope, or one per channel (dim 1)."""
    if weight.numel() != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                f"{weight.numel()} and channel size = {channels}.")
        weight = weight.reshape([1, -1] + [1] * (input.ndim - 2))
    else:
        weight = weight.reshape(())
    return _act.Prelu.apply(input, weight)


# ---------------------------------------------------- transposed convolution ----
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transposed ("fractionally strided") convolution: the gradient of ``conv2d`` w.r.t. its input.

    ``weight`` is (C_in, C_out / groups, kh, kw).  It runs as an ordinary
    convolution: spread the input with ``stride - 1`` zeros between pixels,
    pad it by ``dilation * (k - 1) - padding`` (``output_padding`` more at the
    end), and convolve with the kernel flipped and its in/out channels swapped.
    Output size: ``(H - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``.
    """
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got "
                           f"input of size: {_shape_list(input)}")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {_shape_list(weight)}, expected input{_shape_list(x)} to have "
            f"{weight.shape[0]} channels, but got {x.shape[1]} channels instead")
    stride, padding, dilation = _ntuple(stride, 2), _ntuple(padding, 2), _ntuple(dilation, 2)
    output_padding = _ntuple(output_padding, 2)
    _check_conv_args(stride, padding, dilation, groups, 2)
    if min(dilation) == 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {dilation[0]}, "
                           f"dilation_width: {dilation[1]}")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                               f"output_padding_height: {output_padding[0]} output_padding_width: "
                               f"{output_padding[1]} stride_height: {stride[0]} stride_width: {stride[1]} "
                               f"dilation_height: {dilation[0]} dilation_width: {dilation[1]}")
    n, c, h, w = x.shape
    (sh, sw), (kh, kw) = stride, weight.shape[2:]
    if (sh, sw) != (1, 1):  # stride - 1 zeros after every pixel, then drop the trailing ones
        x = pad(x.reshape(n, c, h, 1, w, 1), (0, sw - 1, 0, 0, 0, sh - 1))
        x = x.reshape(n, c, h * sh, w * sw)[:, :, :(h - 1) * sh + 1, :(w - 1) * sw + 1]
    before = [d * (k - 1) - p for d, k, p in zip(dilation, (kh, kw), padding)]
    after = [b + op for b, op in zip(before, output_padding)]
    x = pad(x, (max(before[1], 0), max(after[1], 0), max(before[0], 0), max(after[0], 0)))
    x = x[:, :, max(-before[0], 0): x.shape[2] - max(-after[0], 0), max(-before[1], 0): x.shape[3] - max(-after[1], 0)]
    cin, cout_g = weight.shape[:2]
    flipped = (weight.reshape(groups, cin // groups, cout_g, kh, kw).transpose(1, 2)
               .reshape(groups * cout_g, cin // groups, kh, kw).flip(2, 3))
    out = conv2d(x, flipped, bias, 1, 0, dilation, groups)
    return out.squeeze(0) if unbatched else out


from .._scope import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("torch.nn.functional", "edutorch.nn.functional")  # out-of-scope names say why


# ----------------------------------------------------------- more activations ----
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``clamp(x, min_val, max_val)``, with zero gradient at and beyond the limits."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _activation(input, _act.Hardtanh, min_val, max_val, inplace=inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """``min(max(0, x), 6)``."""
    return hardtanh(input, 0, 6, inplace)  # ints, as PyTorch's relu6 passes them (grad_fn._saved_max_val: 6)


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``: a piecewise-linear sigmoid."""
    return _activation(input, _act.Hardsigmoid, inplace=inplace)


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6`` (MobileNetV3)."""
    return _activation(input, _act.Hardswish, inplace=inplace)


def softsign(input):
    """``x / (1 + |x|)``."""
    return input / (1 + input.abs())


def logsigmoid(input):
    """``log(sigmoid(x))``, computed without overflow."""
    return _act.LogSigmoid.apply(input)


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``."""
    return _activation(input, _act.Mish, inplace=inplace)


def tanhshrink(input):
    """``x - tanh(x)``."""
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between."""
    return _act.Softshrink.apply(input, lambd)


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    return _act.Hardshrink.apply(input, lambd)


def threshold(input, threshold, value, inplace=False):
    """``x`` where ``x > threshold``, else ``value``."""
    if inplace:
        return input._inplace(_act.ThresholdInplace, threshold, value)
    return _act.Threshold.apply(input, threshold, value)


_threshold = threshold  # ``threshold_``'s argument of the same name hides the function


def threshold_(input, threshold, value):
    return _threshold(input, threshold, value, inplace=True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    if inplace:
        return input._inplace(_act.EluInplace, _SELU_ALPHA, _SELU_SCALE)
    return _act.Elu.apply(input, _SELU_ALPHA, _SELU_SCALE)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    return input._inplace(_act.CeluInplace, alpha) if inplace else _act.Celu.apply(input, alpha)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-x)``."""
    return softmax(-input, dim, _stacklevel, dtype)


def glu(input, dim=-1):
    """Gated linear unit: split ``input`` in halves ``a, b`` along ``dim``; ``a * sigmoid(b)``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {wrap_dim(dim, input.ndim)} is size "
                           f"{input.shape[dim]}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


# ------------------------------------------------------ similarity, normalize ----
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``x / max(||x||_p, eps)`` along ``dim``."""
    return input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)


@composite_op("cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim``, as PyTorch computes it: the
    operands themselves when their shapes agree (else both expanded), each divided by its norm, which is
    clamped to ``eps`` without recording the clamp (the gradient passes through the norm unchanged)."""
    from ..autograd.grad_mode import no_grad
    from ..functional import broadcast_tensors

    if x1.shape != x2.shape:  # (PyTorch's expand_outplace: the same tensors when they agree)
        x1, x2 = broadcast_tensors(x1, x2)
    n1 = x1.norm(2, dim, keepdim=True).clone()
    n2 = x2.norm(2, dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dim."""
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)


# ------------------------------------------------- pixel shuffle, attention ----
def pixel_shuffle(input, upscale_factor):
    """(..., C r², H, W) -> (..., C, H r, W r): each group of r² channels becomes an r x r block."""
    r = upscale_factor
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)  # (..., C, H, r, W, r)
    return _not_a_view(x.reshape(*batch, c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """(..., C, H r, W r) -> (..., C r², H, W): the inverse of ``pixel_shuffle``."""
    r = downscale_factor
    *batch, c, h, w = input.shape
    if h % r or w % r:
        which, size = ("height", h) if h % r else ("width", w)
        raise RuntimeError(f"pixel_unshuffle expects {which} to be divisible by downscale_factor, but input.size"
                           f"({-2 if which == 'height' else -1})={size} is not divisible by {r}")
    n = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)  # (..., C, r, r, H, W)
    return _not_a_view(x.reshape(*batch, c * r * r, h // r, w // r))


def _not_a_view(t):
    """PyTorch's pixel_shuffle/unshuffle give a new tensor even where a view would do (r = 1, a batch
    of 1...): a later in-place write to it must not be a write to a view of the input."""
    return t.clone() if "_view_of" in t.__dict__ else t  # a view knows its base (_tensor.py)


def _safe_softmax(scores):
    """PyTorch's ``_safe_softmax`` (its attention's math path): ``softmax`` over the last dim, but a row
    whose scores are all ``-inf`` (every key masked) gives weights 0, not 0/0 = NaN; its gradient is
    0 too (the row's scores are set to 0 before the softmax, so nothing in it is NaN)."""
    dead = (scores == float("-inf")).all(-1, keepdim=True)
    return softmax(scores.masked_fill(dead, 0.0), dim=-1).masked_fill(dead, 0.0)


@composite_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """``softmax(Q K^T * scale + mask) V``, ``scale = 1 / sqrt(E)`` by default (PyTorch's reference math).

    A boolean ``attn_mask`` keeps the True positions; a float one is added to the
    scores; ``is_causal`` hides the future (upper triangle). A query that sees no key gets 0.
    """
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    L, S = query.shape[-2], key.shape[-2]
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and key.shape[-3] != query.shape[-3]:  # grouped-query attention: share each key head
        key = key.repeat_interleave(query.shape[-3] // key.shape[-3], -3)
        value = value.repeat_interleave(query.shape[-3] // value.shape[-3], -3)
    scores = query @ key.transpose(-2, -1) * scale
    if is_causal:
        keep = Tensor._make(np.tril(np.ones((L, S), dtype=bool)))
        scores = scores.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == _dtype.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights @ value


from ._interpolate import interpolate  # noqa: E402, F401  (F.interpolate: resizing, mode by mode)
