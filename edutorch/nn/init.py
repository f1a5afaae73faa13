"""``torch.nn.init``: fill a tensor in place with values from a chosen distribution.

Every function works under ``no_grad`` (initialising is not part of the
model's computation, so it records no graph), changes the tensor in place and
returns it.  The *fan* of a weight is how many inputs (``fan_in``) or outputs
(``fan_out``) each unit has; Xavier and Kaiming scale the spread by it so that
activations keep their size from layer to layer.
"""
import math
import warnings

import numpy as np

from .. import random as _random
from ..autograd.grad_mode import no_grad


def calculate_gain(nonlinearity, param=None):
    """The recommended scale for weights feeding ``nonlinearity`` (e.g. sqrt(2) for relu)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """fan_in = in_features * kernel size; fan_out = out_features * kernel size."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field = 1
    for s in tensor.shape[2:]:
        receptive_field *= s
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill(tensor, values):
    """Write ``values`` into ``tensor`` in place (one version bump), return it."""
    with no_grad():
        tensor._data[...] = values
        tensor._bump_version()
    return tensor


def _rng(generator):
    return _random._rng(generator)


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Values drawn from U(a, b)."""
    return _fill(tensor, _rng(generator).uniform(a, b, tensor.shape))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Values drawn from N(mean, std**2)."""
    return _fill(tensor, _rng(generator).normal(mean, std, tensor.shape))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std**2) restricted to [a, b]: out-of-range draws are drawn again."""
    rng = _rng(generator)
    values = rng.normal(mean, std, tensor.shape)
    bad = (values < a) | (values > b)
    while bad.any():  # rejection sampling: exactly the truncated distribution
        values[bad] = rng.normal(mean, std, int(bad.sum()))
        bad = (values < a) | (values > b)
    return _fill(tensor, values)


def constant_(tensor, val):
    """Every element equal to ``val``."""
    return _fill(tensor, val)


def ones_(tensor):
    return _fill(tensor, 1)


def zeros_(tensor):
    return _fill(tensor, 0)


def eye_(tensor):
    """The identity matrix (ones on the diagonal) in a 2-D tensor."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """Conv weights that pass the input through unchanged (a 1 at each kernel's centre)."""
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    values = np.zeros(sizes)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(out_per_group, sizes[1])):
            values[(g * out_per_group + d, d) + centre] = 1
    return _fill(tensor, values)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D matrix from N(0, std**2) with ``ceil(sparsity * rows)`` zeros in every column
    (Martens, 2010: "Deep learning via Hessian-free optimization")."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    rng = _rng(generator)
    values = rng.normal(0.0, std, tensor.shape)
    for col in range(cols):
        values[rng.permutation(rows)[:num_zeros], col] = 0.0  # which rows: random per column
    return _fill(tensor, values)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std  # a uniform on [-a, a] has standard deviation a / sqrt(3)
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def _zero_element(tensor):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return True
    return False


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound), ``bound = gain * sqrt(3 / fan)`` (He et al., 2015).

    ``nn.Linear`` and ``nn.Conv2d`` use ``a=sqrt(5)``, which gives
    ``bound = 1 / sqrt(fan_in)``.
    """
    if _zero_element(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std**2), ``std = gain / sqrt(fan)``."""
    if _zero_element(tensor):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix: the Q of the QR decomposition of a random normal matrix."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _rng(generator).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))  # make Q unique: the distribution is then uniform (Haar)
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor.shape))
