"""``torch.autocast``: inside the region, chosen ops run in a lower precision.

Mixed precision in PyTorch is a *per-op policy*, looked up each time an op
runs while autocast is on for the device of its tensors:

* ``lower_precision_fp``: matrix products and convolutions (``mm``,
  ``matmul``, ``linear``, ``conv2d``, ...) cast their floating-point inputs to
  the autocast dtype (bfloat16 by default on the CPU, float16 on CUDA) and
  so produce it: they gain the most from fast low-precision hardware;
* ``fp32``: ops that need the range or accuracy (losses, ``exp``/``log`` on
  CUDA, linear algebra on the CPU) cast their inputs to float32;
* ``promote``: ops that need one dtype for all inputs (``cat``, ``dot``, ...)
  cast them all to the widest one present;
* every other op is untouched: it runs in whatever dtype its inputs have
  (``relu`` of a bfloat16 tensor stays bfloat16; ``softmax`` and
  ``layer_norm`` keep their input's dtype on the CPU).

float64 tensors and non-floating tensors are never cast.  The two devices
have different lists (PyTorch 2.13's ``aten/src/ATen/autocast_mode.cpp`` and
``autocast_mode.h``); :data:`POLICIES` holds them for the ops edutorch has.

How the engine asks: every differentiable op is a ``Function``; while some
autocast region is on, :func:`_autocast_interceptor` is registered as an
interceptor of ``Function.apply`` (``function.Interceptors``: autograd itself
knows nothing of autocast) and casts each op's arguments by the policy of
the op the class names itself as (``_autocast_op``, declared beside the op's
``forward``, as PyTorch's autocast lists name it).
Ops that edutorch writes as a composition of other ops (``baddbmm``,
``cdist``, ``prelu``, ...) are marked with ``function.composite_op`` instead:
:func:`_composite_interceptor`, registered beside the other, casts them once
at the entry and runs their inner ops with autocast off, as PyTorch's
autocast kernels do.

The *cast cache*: a float32 leaf that requires grad (a weight) is cast once
per outermost autocast region and the copy reused (``cache_enabled``), so
two ``linear`` calls on one weight share one ``ToCopyBackward0`` node.
"""
import functools
import warnings
import weakref

import numpy as np

from .. import _dtype, backend
from ..autograd import function as _function

LOWER, FP32, PROMOTE, FP32_SET_OPT_DTYPE, BANNED = (
    "lower_precision_fp", "fp32", "promote", "fp32_set_opt_dtype", "banned")


def _table(**lists):
    return {op: policy.lower() for policy, ops in lists.items() for op in ops.split()}


# PyTorch 2.13's autocast op lists, restricted to ops edutorch implements.
POLICIES = {
    "cpu": _table(
        LOWER_PRECISION_FP="conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm addbmm linear matmul "
                           "conv_transpose1d conv_transpose2d conv_transpose3d prelu scaled_dot_product_attention",
        FP32="binary_cross_entropy prod cdist trace inverse linalg_inv cholesky linalg_cholesky linalg_svd "
             "linalg_qr linalg_solve linalg_eigh quantile mse_loss cosine_embedding_loss nll_loss "
             "hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy_loss l1_loss huber_loss "
             "margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss kl_div "
             "binary_cross_entropy_with_logits",
        PROMOTE="stack cat",  # (einsum is not on the CPU list: its inner bmm, when it has one, casts)
    ),
    "cuda": _table(
        LOWER_PRECISION_FP="conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d prelu "
                           "addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm baddbmm bmm "
                           "chain_matmul linalg_multi_dot lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell "
                           "scaled_dot_product_attention",
        FP32="acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow softplus "
             "layer_norm group_norm rms_norm frobenius_norm nuclear_norm cosine_similarity poisson_nll_loss "
             "cosine_embedding_loss nll_loss hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss "
             "mse_loss margin_ranking_loss multilabel_margin_loss soft_margin_loss triplet_margin_loss "
             "multi_margin_loss binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp "
             "upsample_nearest2d upsample_bilinear2d upsample_bicubic2d",
        FP32_SET_OPT_DTYPE="prod softmax log_softmax cumprod cumsum linalg_vector_norm linalg_matrix_norm sum",
        PROMOTE="addcdiv addcmul atan2 bilinear cross dot vdot index_put tensordot scatter_add",
        BANNED="binary_cross_entropy",
    ),
}

# Ops PyTorch refuses to autocast, with its message.
BANNED_MESSAGES = {
    "binary_cross_entropy": (
        "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
        "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
        "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
        "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
        "safe to autocast."),
}

_DEFAULT_DTYPES = {"cpu": _dtype.bfloat16, "cuda": _dtype.float16}


# The autocast state of each device, as PyTorch keeps it per thread (one thread here).
_state = {
    "cpu": {"enabled": False, "dtype": _DEFAULT_DTYPES["cpu"]},
    "cuda": {"enabled": False, "dtype": _DEFAULT_DTYPES["cuda"]},
}
_cache_state = {"enabled": True, "nesting": 0}
_cast_cache = {}  # id(fp32 leaf) -> (weakref to it, its cast copy)


# -- the state functions (torch.is_autocast_enabled, torch.get_autocast_dtype, ...) ------------
_DEVICE_TYPES = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, "
                 "mps, meta, hpu, mtia, privateuseone")


def _check_device(device_type):
    if device_type not in _state:
        if device_type.split(":")[0] in _DEVICE_TYPES.split(", "):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        raise RuntimeError(f"Expected one of {_DEVICE_TYPES} device type at start of device string: {device_type}")


def is_autocast_available(device_type):
    """``torch.amp.is_autocast_available``: True for ``"cpu"`` and ``"cuda"``."""
    return device_type in _state


def is_autocast_enabled(device_type=None):
    """``torch.is_autocast_enabled(device_type)``; without an argument, CUDA's (PyTorch's old meaning)."""
    _check_device(device_type or "cuda")
    return _state[device_type or "cuda"]["enabled"]


def set_autocast_enabled(device_type, enabled=None):
    """``torch.set_autocast_enabled(device_type, enabled)``."""
    if enabled is None:  # the old one-argument form sets CUDA's
        device_type, enabled = "cuda", device_type
    _check_device(device_type)
    _state[device_type]["enabled"] = bool(enabled)
    _install_hook()


def get_autocast_dtype(device_type):
    """``torch.get_autocast_dtype(device_type)``: bfloat16 on the CPU and float16 on CUDA by default."""
    _check_device(device_type)
    return _state[device_type]["dtype"]


def set_autocast_dtype(device_type, dtype):
    """``torch.set_autocast_dtype(device_type, dtype)``."""
    _check_device(device_type)
    _state[device_type]["dtype"] = dtype


def is_autocast_cache_enabled():
    return _cache_state["enabled"]


def set_autocast_cache_enabled(enabled):
    _cache_state["enabled"] = bool(enabled)


def autocast_increment_nesting():
    _cache_state["nesting"] += 1
    return _cache_state["nesting"]


def autocast_decrement_nesting():
    _cache_state["nesting"] -= 1
    return _cache_state["nesting"]


def clear_autocast_cache():
    """``torch.clear_autocast_cache()``: forget the cast copies of the weights."""
    _cast_cache.clear()


def _deprecated(old, new, fn):
    """The per-device spellings PyTorch keeps with a DeprecationWarning (``torch.get_autocast_cpu_dtype()``)."""

    def deprecated(*args):
        warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=2)
        return fn(*args)

    deprecated.__name__ = old.split("(")[0]
    deprecated.__doc__ = f"``torch.{old}``: deprecated, use ``torch.{new}``."
    return deprecated


get_autocast_cpu_dtype = _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')",
                                     lambda: get_autocast_dtype("cpu"))
get_autocast_gpu_dtype = _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')",
                                     lambda: get_autocast_dtype("cuda"))
is_autocast_cpu_enabled = _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')",
                                      lambda: is_autocast_enabled("cpu"))
set_autocast_cpu_enabled = _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)",
                                       lambda enabled: set_autocast_enabled("cpu", enabled))
set_autocast_cpu_dtype = _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)",
                                     lambda dtype: set_autocast_dtype("cpu", dtype))
set_autocast_gpu_dtype = _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)",
                                     lambda dtype: set_autocast_dtype("cuda", dtype))


_LEVEL = 1  # inside the profiler's interceptor (an op's record includes its casts)


def _install_hook():
    """Register the caster with ``Function.apply`` while any device has autocast on, else
    nothing: with autocast off an op pays nothing for it."""
    _function.apply_interceptors.unregister(_autocast_interceptor)
    _function.composite_interceptors.unregister(_composite_interceptor)
    if _any_enabled():
        _function.apply_interceptors.register(_autocast_interceptor, _LEVEL)
        _function.composite_interceptors.register(_composite_interceptor, _LEVEL)


def _any_enabled():
    return _state["cpu"]["enabled"] or _state["cuda"]["enabled"]


# -- casting ----------------------------------------------------------------------------------
def _device_of(args):
    """The device type of the first tensor among ``args`` (None if there is none)."""
    for a in args:
        if isinstance(a, _function._Tensor):
            return backend.device_of(a._data)
        if isinstance(a, (list, tuple)):
            found = _device_of(a)
            if found is not None:
                return found
    return None


# The dtypes autocast casts: the floating ones but float64 (one set lookup per tensor, per op).
_CASTABLE = frozenset({np.dtype(np.float16), np.dtype(np.float32), _dtype.bfloat16.np})


def _is_eligible(t, device_type):
    """A floating tensor of this device that is not float64 (never cast)."""
    return t._data.dtype in _CASTABLE and backend.device_of(t._data) == device_type


def _cached_cast(t, dtype, device_type):
    """``t.to(dtype)``; a float32 leaf that requires grad is cast once per autocast region."""
    if t._data.dtype == dtype.np:
        return t
    cacheable = (_cache_state["enabled"] and dtype is _state[device_type]["dtype"] and t._requires_grad
                 and t.grad_fn is None and t._data.dtype == np.float32)
    if not cacheable:
        return t.to(dtype)
    entry = _cast_cache.get(id(t))
    if entry is not None and entry[0]() is t:
        return entry[1]
    cast = t.to(dtype)
    _cast_cache[id(t)] = (weakref.ref(t), cast)
    return cast


def _cast(value, dtype, device_type):
    """Cast the eligible tensors in ``value`` (a tensor, or a list/tuple of them) to ``dtype``."""
    if isinstance(value, _function._Tensor):
        return _cached_cast(value, dtype, device_type) if _is_eligible(value, device_type) else value
    if isinstance(value, (list, tuple)) and any(isinstance(v, _function._Tensor) for v in value):
        return type(value)(_cast(v, dtype, device_type) for v in value)
    return value


def _widest(args, device_type):
    """``promote``: the widest floating dtype among the eligible tensors (None if none)."""
    widest = None
    for a in args:
        items = a if isinstance(a, (list, tuple)) else (a,)
        for t in items:
            if isinstance(t, _function._Tensor) and _is_eligible(t, device_type):
                widest = t.dtype if widest is None else _dtype.promote_types(widest, t.dtype)
    return widest


def _target_dtype(op, args, device_type):
    """The dtype the op's policy casts to on this device, or None for "leave the op alone"."""
    policy = POLICIES[device_type].get(op)
    if policy is None:
        return None
    if policy == LOWER:
        return _state[device_type]["dtype"]
    if policy in (FP32, FP32_SET_OPT_DTYPE):
        return _dtype.float32
    if policy == PROMOTE:
        return _widest(args, device_type)
    raise RuntimeError(BANNED_MESSAGES[op])


def _cast_args(op, args, kwargs):
    """``(device_type, args, kwargs)`` cast by ``op``'s policy; device_type None if nothing applies."""
    device_type = _device_of(args)
    if device_type is None or not _state[device_type]["enabled"]:
        return None, args, kwargs
    dtype = _target_dtype(op, args, device_type)
    if dtype is None:
        return None, args, kwargs
    args = tuple([_cast(a, dtype, device_type) for a in args])
    if kwargs:
        kwargs = {k: _cast(v, dtype, device_type) for k, v in kwargs.items()}
    return device_type, args, kwargs


def _autocast_interceptor(proceed, cls, args, kwargs):
    """The interceptor of ``Function.apply`` while autocast is on: the op, its arguments cast by its policy."""
    return proceed(cls, _cast_function_args(cls, args), kwargs)


def _cast_function_args(cls, args):
    """An op's arguments, cast by its policy (the arguments as they are for an op without one).

    Each op names itself as PyTorch's autocast lists name it, beside its forward
    (``_autocast_op = "mm"`` on ``Mm``); a subclass declares its own (``Dot`` is ``"dot"``,
    not its base's ``"matmul"``), so only the class's own declaration counts.
    """
    op = cls.__dict__.get("_autocast_op")
    if op is None:  # the common case: an op autocast leaves alone
        return args
    return _cast_args(op, args, {})[1]


def _composite_interceptor(proceed, op, args, kwargs):
    """The interceptor of a public op written as other ops (``function.composite_op``: ``matmul``,
    ``einsum``...) while autocast is on.

    With a policy for ``op``, the arguments are cast once and the body runs with
    that device's autocast off (PyTorch's autocast kernels do the same), so the
    inner ops do not cast again.
    """
    device_type, args, kwargs = _cast_args(op, args, kwargs)
    if device_type is None:
        return proceed(op, args, kwargs)
    with autocast(device_type, enabled=False):
        return proceed(op, args, kwargs)


# -- the context manager --------------------------------------------------------------------------
class autocast:
    """``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``.

    A context manager (``with torch.autocast("cpu"):``) or a decorator
    (``@torch.autocast("cpu")``).  Entering saves the device's state and
    switches it; leaving restores it, and leaving the outermost region drops
    the cast cache.  Regions nest: ``autocast(..., enabled=False)`` inside an
    enabled one switches autocast off for its body.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        if enabled and device_type == "cuda" and not backend.cuda_is_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            enabled = False
        elif enabled and self.fast_dtype not in (_dtype.bfloat16, _dtype.float16):
            name = device_type.upper()
            warnings.warn(
                f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                f"{name} Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                stacklevel=2)
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:  # left the outermost region
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with torch.autocast(device_type=...):\n"
                f"        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


# -- custom Functions ------------------------------------------------------------------------------
def _cast_nested(value, device_type, dtype):
    """``torch.amp.autocast_mode._cast``: cast the floating tensors in value (and its containers)."""
    if isinstance(value, _function._Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and value.dtype is not _dtype.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, dict):
        return {_cast_nested(k, device_type, dtype): _cast_nested(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_nested(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """``torch.amp.custom_fwd``: for the ``forward`` of a custom ``Function``.

    Records the autocast state for :func:`custom_bwd`; with ``cast_inputs``
    set and autocast on, casts the floating inputs to it and runs ``forward``
    with autocast off.
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast_nested(args, device_type, cast_inputs), **_cast_nested(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """``torch.amp.custom_bwd``: runs ``backward`` with the autocast state its ``forward`` had."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
