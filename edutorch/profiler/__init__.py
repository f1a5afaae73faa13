"""``torch.profiler``: where the time (and memory) of a model's ops goes.

* :class:`profile` records every op (``Function.apply``) and every backward
  node the engine runs, named as PyTorch names them (``aten::addmm``,
  ``autograd::engine::evaluate_function: AddmmBackward0``);
* :class:`record_function` labels a block of code;
* :func:`schedule` and ``prof.step()`` pick the steps of a training loop to record;
* ``prof.key_averages().table(...)`` prints PyTorch's table and
  ``prof.export_chrome_trace(path)`` writes a trace for Perfetto / chrome://tracing.

The recording lives in this package: while a profiler records, it registers
two interceptors with autograd (``autograd.function.Interceptors``), one around
every op and one around every backward node; when none records, they cost
nothing but one test per op.
"""
from ._recorder import record_function
from .profiler_util import DeviceType
from .profiler import (
    ProfilerAction,
    ProfilerActivity,
    _KinetoProfile,
    kineto_available,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = [
    "profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
    "ProfilerActivity", "kineto_available", "record_function", "DeviceType",
]


from .._scope import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("torch.profiler", "edutorch.profiler")  # out-of-scope names say why
