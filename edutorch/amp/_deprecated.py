"""The old spellings ``torch.cuda.amp.autocast()``/``GradScaler()`` and ``torch.cpu.amp.*``.

They still work in PyTorch 2.13 but warn (``FutureWarning``) that
``torch.amp.autocast(device, ...)`` and ``torch.amp.GradScaler(device, ...)``
replace them; these classes do the same.
"""
import warnings

from .. import _dtype
from .autocast_mode import autocast as _autocast
from .grad_scaler import GradScaler as _GradScaler


def _warn_deprecated(old, new):
    warnings.warn(f"`{old}(args...)` is deprecated. Please use `{new}` instead.", FutureWarning, stacklevel=3)


class CudaAutocast(_autocast):
    """``torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True)``."""

    def __init__(self, enabled=True, dtype=_dtype.float16, cache_enabled=True):
        _warn_deprecated("torch.cuda.amp.autocast", "torch.amp.autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class CpuAutocast(_autocast):
    """``torch.cpu.amp.autocast(enabled=True, dtype=torch.bfloat16, cache_enabled=True)``."""

    def __init__(self, enabled=True, dtype=_dtype.bfloat16, cache_enabled=True):
        _warn_deprecated("torch.cpu.amp.autocast", "torch.amp.autocast('cpu', args...)")
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class CudaGradScaler(_GradScaler):
    """``torch.cuda.amp.GradScaler(init_scale=2.**16, ...)``: ``torch.amp.GradScaler("cuda", ...)``."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        _warn_deprecated("torch.cuda.amp.GradScaler", "torch.amp.GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


class CpuGradScaler(_GradScaler):
    """``torch.cpu.amp.GradScaler(init_scale=2.**16, ...)``: ``torch.amp.GradScaler("cpu", ...)``."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        _warn_deprecated("torch.cpu.amp.GradScaler", "torch.amp.GradScaler('cpu', args...)")
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


for _cls, _name in ((CudaAutocast, "autocast"), (CpuAutocast, "autocast"), (CudaGradScaler, "GradScaler"),
                    (CpuGradScaler, "GradScaler")):
    _cls.__name__ = _cls.__qualname__ = _name  # printed as PyTorch's classes are
