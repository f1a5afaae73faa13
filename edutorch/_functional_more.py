"""More ``torch.<op>`` functions: the function forms of Tensor methods, and ``torch.<op>``
spellings of ``nn.functional`` ops.

Each calls the Tensor method of the same name (``torch.frac(x)`` is ``x.frac()``,
``torch.relu_(x)`` is ``x.relu_()``), so every op keeps one definition.  The
``nn.functional`` ops that PyTorch also exposes as ``torch.<op>`` take PyTorch's
positional order for that spelling, which differs for a few (``torch.dropout(input,
p, train)``, ``torch.batch_norm(input, weight, bias, running_mean, ...)``).
"""
import functools
import inspect
import sys
import warnings

import numpy as np

from . import _dtype, backend
from ._tensor import Tensor
from .autograd import grad_mode as _grad_mode
from .autograd._functions.utils import wrap_dim
from .nn import functional as _F

# torch.<name>(input, *args, **kwargs) is input.<name>(*args, **kwargs)
_METHODS = (
    # in place
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ atanh_ ceil_ "
    "clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ detach_ erf_ erfc_ exp2_ exp_ expm1_ fill_ floor_ "
    "log10_ log1p_ log2_ log_ nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ "
    "sinh_ sqrt_ square_ tan_ tanh_ trunc_ zero_ fix_ frac_ gcd_ lcm_ ldexp_ logit_ sinc_ xlogy_ addmv_ "
    # out of place
    "detach get_device is_inference is_nonzero is_same_size is_signed absolute positive sgn fix frac ravel "
    "diagflat ger vdot inner msort rot90 logit sinc copysign fmax fmin float_power ldexp logcumsumexp aminmax "
    "addmv addr addbmm matrix_power slogdet logdet cross svd signbit isposinf isneginf isreal heaviside "
    "nextafter gcd lcm bitwise_left_shift bitwise_right_shift"
).split()


def _method_call(name):
    def call(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``torch.{name}(input, ...)``: ``input.{name}(...)``."
    return call


for _name in _METHODS:
    globals()[_name] = _method_call(_name)

# nn.functional ops whose torch.<op> spelling takes the same arguments
_SAME_AS_F = ("conv1d conv2d conv_transpose2d bilinear cosine_similarity pairwise_distance pixel_shuffle "
              "pixel_unshuffle prelu hardshrink celu celu_ selu selu_ rrelu rrelu_ threshold threshold_ max_pool1d "
              "max_pool2d layer_norm group_norm").split()
for _name in _SAME_AS_F:
    globals()[_name] = getattr(_F, _name)


def dropout(input, p, train):
    """``torch.dropout(input, p, train)``: ``F.dropout`` with ``train`` required."""
    return _F.dropout(input, p, train)


def dropout_(input, p, train):
    return _F.dropout(input, p, train, inplace=True)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``torch.batch_norm``: ``F.batch_norm`` with the affine parameters first (ATen's order)."""
    return _F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``torch.embedding(weight, indices)``: ``F.embedding`` with the table first (ATen's order)."""
    return _F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                        scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


__all__ = _METHODS + _SAME_AS_F + ["dropout", "dropout_", "batch_norm", "embedding"]


# -- the *_copy ops: a view op's result as a new tensor (PyTorch's "view_copy" variants) --------------
_VIEWS = "diagonal expand narrow permute select squeeze t transpose unfold unsqueeze view detach".split()


def _copy_of(name):
    def copy(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs).clone()

    copy.__name__ = copy.__qualname__ = name + "_copy"
    copy.__doc__ = f"``torch.{name}_copy``: ``input.{name}(...)`` as a new tensor, not a view."
    return copy


for _name in _VIEWS:
    globals()[_name + "_copy"] = _copy_of(_name)


def view_copy(input, *shape):
    """``torch.view_copy``: the values of ``input.view(shape)`` as a new tensor.  It copies anyway, so
    PyTorch does not ask the strides to allow a view: a ``reshape``, then a copy."""
    return input.reshape(*shape).clone()


def alias_copy(input):
    return input.clone()


def slice_copy(input, dim=0, start=None, end=None, step=1):
    index = [slice(None)] * input.ndim
    index[dim] = slice(start, end, step)
    return input[tuple(index)].clone()


def split_with_sizes(input, split_sizes, dim=0):
    return input.split(list(split_sizes), dim)


def split_copy(input, split_size, dim=0):
    if not isinstance(split_size, int):  # sizes go to split_with_sizes_copy
        raise TypeError(f"split_copy(): argument 'split_size' (position 2) must be int, not {type(split_size).__name__}")
    return tuple(part.clone() for part in input.split(split_size, dim))


def split_with_sizes_copy(input, split_sizes, dim=0):
    return tuple(part.clone() for part in input.split(list(split_sizes), dim))


def unbind_copy(input, dim=0):
    return tuple(part.clone() for part in input.unbind(dim))


# -- small compositions -------------------------------------------------------------------------------
def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (``input`` subtracted from ``other``)."""
    return (input * alpha).neg().add(other)


def fill(input, value):
    return input.clone().fill_(value)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    from . import _creation

    return _creation.tensor(s, dtype=dtype or _dtype.get_default_dtype(), device=device, requires_grad=requires_grad)


def pinverse(input, rcond=1e-15):
    from . import linalg

    return linalg.pinv(input, rtol=rcond)


def qr(input, some=True):
    """``Q, R`` (the older API of ``linalg.qr``: ``some=False`` is ``mode="complete"``)."""
    from . import linalg

    return linalg.qr(input, mode="reduced" if some else "complete")


def _differences(t, dim):
    """``t[..., 1:] - t[..., :-1]`` along ``dim`` (empty, never an error, for fewer than two)."""
    before = (slice(None),) * dim
    return t[before + (slice(1, None),)] - t[before + (slice(None, -1),)]


def _trapezoids(y, x, dx, dim, name):
    """The area of each trapezoid between neighbouring samples along ``dim``.

    Sample points ``x`` as PyTorch takes them: a vector lies along ``dim``, fewer dims than ``y``
    get leading 1s, and the spacings are taken along ``dim`` of ``x`` itself before they broadcast
    with the heights (NumPy's rule), not after ``x`` is broadcast to ``y``."""
    if y.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim %= y.ndim
    before = (slice(None),) * dim
    mean_height = (y[before + (slice(1, None),)] + y[before + (slice(None, -1),)]) / 2
    if x is None:
        return mean_height * (1 if dx is None else dx)
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        along = [1] * y.ndim
        along[dim] = x.shape[0]
        x = x.view(along)
    elif x.ndim < y.ndim:
        x = x.view((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    return mean_height * _differences(x, dim)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``: spacing ``dx`` (1 by default) or sample points ``x``."""
    if isinstance(x, (int, float)):
        x, dx = None, x
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = wrap_dim(dim, y.ndim)  # y's dim: the sum is over it even where x has more dims
    if y.shape[dim] == 0:  # PyTorch (and NumPy): the integral of no samples is 0, outside the graph
        return y.new_zeros(tuple(n for i, n in enumerate(y.shape) if i != dim))
    return _trapezoids(y, x, dx, dim, "trapezoid").sum(dim)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    if isinstance(x, (int, float)):
        x, dx = None, x
    return _trapezoids(y, x, dx, dim, "cumulative_trapezoid").cumsum(dim % max(y.ndim, 1))


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix: columns ``x**(N-1), ..., x, 1`` (reversed if ``increasing``)."""
    from . import _creation

    N = x.shape[0] if N is None else N
    powers = _creation.arange(N) if increasing else _creation.arange(N - 1, -1, -1)
    return x.unsqueeze(-1) ** powers


def constant_pad_nd(input, pad, value=0):
    return _F.pad(input, pad, "constant", value)


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}  # ATen's reduction numbers in the torch.<loss> spellings


def kl_div(input, target, reduction=1, *, log_target=False):
    return _F.kl_div(input, target, reduction=_REDUCTIONS[reduction], log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    return _F.binary_cross_entropy_with_logits(input, target, weight, reduction=_REDUCTIONS[reduction],
                                               pos_weight=pos_weight)


def range(start, end, step=1, *, dtype=None, device=None, requires_grad=False):
    """Deprecated ``torch.range``: ``start`` to ``end`` INCLUDED (``arange`` stops before ``end``)."""
    from . import _creation

    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    count = int((end - start) // step) + 1
    values = _creation.arange(count, dtype=dtype or _dtype.get_default_dtype(), device=device) * step + start
    return values.requires_grad_(requires_grad)


def unravel_index(indices, shape):
    """The coordinates of flat ``indices`` in a tensor of ``shape``: one int64 tensor per dimension."""
    from . import _creation

    index = indices._data if hasattr(indices, "_data") else np.asarray(indices)
    if index.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    size = int(np.prod(shape))
    if ((index < -size) | (index >= size)).any():
        raise RuntimeError("'indices' must be in range [-prod(shape), prod(shape) - 1]")
    return tuple(_creation.tensor(c, dtype=_dtype.int64) for c in np.unravel_index(index % max(size, 1), shape))


def _window(name, make):
    """A window function of PyTorch's: ``periodic=True`` (the default) is one point longer, last point dropped."""
    def window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
        from . import _creation

        if window_length < 0:
            raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
        n = window_length + 1 if periodic and window_length > 1 else window_length
        values = make(n)[:window_length] if n else np.zeros(0)
        return _creation.tensor(values, dtype=dtype or _dtype.get_default_dtype(), device=device,
                                requires_grad=requires_grad)

    window.__name__ = window.__qualname__ = name
    return window


def _numpy_window(fn_name, *args):
    return lambda n: getattr(np, fn_name)(n, *args)


hann_window = _window("hann_window", _numpy_window("hanning"))
hamming_window = _window("hamming_window", _numpy_window("hamming"))
bartlett_window = _window("bartlett_window", _numpy_window("bartlett"))
blackman_window = _window("blackman_window", _numpy_window("blackman"))


__all__ += ([name + "_copy" for name in _VIEWS] + "alias_copy slice_copy split_with_sizes split_copy "
            "split_with_sizes_copy unbind_copy rsub fill scalar_tensor pinverse qr trapezoid trapz "
            "cumulative_trapezoid vander constant_pad_nd kl_div binary_cross_entropy_with_logits range "
            "unravel_index hann_window hamming_window bartlett_window blackman_window".split())


def _scatter_into(input, src, part):
    """A copy of ``input`` with ``part(copy)`` (a view) overwritten by ``src``: the ``*_scatter`` ops."""
    out = input.clone()
    target = part(out)
    if tuple(src.shape) != tuple(target.shape):  # PyTorch's check (copy_ would broadcast src)
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(target.shape)}")
    target.copy_(src)
    return out


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def select_scatter(input, src, dim, index):
    return _scatter_into(input, src, lambda t: t.select(dim, index))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    def part(t):
        index = [slice(None)] * t.ndim
        index[dim] = slice(start, end, step)
        return t[tuple(index)]

    return _scatter_into(input, src, part)


def can_cast(from_, to):
    """PyTorch's casting rule: never floating to integral or bool, never integral to bool."""
    if _dtype.is_floating(from_.np) and not _dtype.is_floating(to.np):
        return False
    return not (from_ is not _dtype.bool and to is _dtype.bool)


def frobenius_norm(input, dim=(-2, -1), keepdim=False):
    from . import linalg

    return linalg.vector_norm(input, 2, dim, keepdim)


def chain_matmul(*matrices):
    """Deprecated: ``linalg.multi_dot`` (the product of the matrices, left to right here)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
                  "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    return functools.reduce(lambda a, b: a @ b, matrices)


def nonzero_static(input, *, size, fill_value=-1):
    """``nonzero()`` cut or padded with ``fill_value`` to exactly ``size`` rows."""
    found = input.nonzero()
    if found.shape[0] >= size:
        return found[:size].clone()
    pad = found.new_full((size - found.shape[0], found.shape[1]), fill_value)
    from ._functional import cat

    return cat([found, pad])


__all__ += ("diagonal_scatter select_scatter slice_scatter can_cast frobenius_norm chain_matmul "
            "nonzero_static").split()


# -- out=: the result written into a tensor the caller gives ------------------------------------------
_RESIZED = ("An output with one or more elements was resized since it had shape {}, which does not match the "
            "required output shape {}. This behavior is deprecated, and in a future PyTorch release outputs will "
            "not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing "
            "it, inplace, to zero elements with t.resize_(0).")


def _all_tensors(values):
    for value in values:
        if isinstance(value, Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from _all_tensors(value)


def _write_out(out, result):
    """Write ``result`` into ``out`` as PyTorch's ``out=`` does: ``out`` is resized to the result's
    shape (with a warning unless it was empty) and keeps its dtype (a result it cannot hold is an error)."""
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {_dtype.scalar_type_name(result.dtype)} can't be cast to the desired "
                           f"output type {_dtype.scalar_type_name(out.dtype)}")
    if out.shape != result.shape:
        if out.numel():
            warnings.warn(_RESIZED.format(list(out.shape), list(result.shape)), UserWarning, stacklevel=4)
        out._data = backend.get_array_module(out._data).empty(result.shape, out._data.dtype)
    with _grad_mode.no_grad():
        out.copy_(result)
    return out


def _with_out(fn):
    """``fn`` that also takes ``out=``: the result (or each of a tuple of results) written into
    the tensor(s) given, which are returned; autograd does not follow ``out=`` (PyTorch's error)."""
    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        tensors = list(_all_tensors((args, tuple(kwargs.values()), out)))
        if _grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensors):
            raise RuntimeError(f"{fn.__name__}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        result = fn(*args, **kwargs)
        if isinstance(out, Tensor):
            return _write_out(out, result)
        written = [_write_out(o, r) for o, r in zip(out, result)]
        return type(result)(*written) if hasattr(result, "indices") else type(result)(written)

    return call


# the torch.<op> functions that tutorials call with out= (the others keep their own signatures)
_OUT_OPS = ("add sub mul div true_divide remainder matmul mm bmm mv addmm cat stack exp log log2 log10 sqrt rsqrt "
            "abs neg sin cos tan tanh sigmoid pow clamp clip where maximum minimum sum mean prod cumsum cumprod max "
            "min sort topk argmax argmin eq ne gt lt ge le floor ceil round trunc sign arange linspace logspace randn "
            "rand randint outer dot cross logsumexp std var norm").split()


def _wrap_out_ops():
    """Give each op of ``_OUT_OPS`` without an ``out`` parameter one: this module's own functions here,
    the others where they are, on the ``edutorch`` package (not in this module, where ``max`` or
    ``sum`` would hide Python's builtins)."""
    package = sys.modules[__name__.rsplit(".", 1)[0]]  # edutorch, whose functions are defined by now
    for name in _OUT_OPS:
        home = globals() if name in __all__ else package.__dict__
        if "out" not in inspect.signature(home[name]).parameters:
            home[name] = _with_out(home[name])


_wrap_out_ops()
