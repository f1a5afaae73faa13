"""The ``meta`` device: tensors that have a shape and a dtype but no data.

PyTorch uses it to build a model without memory (``with torch.device("meta"):
model = Net()``), to find the shapes an op produces, and to load a checkpoint
into a model made that way (``load_state_dict(state, assign=True)``), or to
give it memory later (``model.to_empty(device="cpu")``).

A meta tensor's array is a ``backend.MetaArray``: one element seen through
zero strides.  An op on meta tensors runs on those arrays as on any NumPy
array (so its output shape and dtype are the op's own) and its outputs are
made meta again, dropping whatever the computation allocated: that is
:func:`_run_on_meta`, an interceptor of ``Function.apply`` registered while
some meta array exists (:func:`track` counts them), so that without meta
tensors ops pay nothing for the meta device.
The values are meaningless, so nothing that reads them is allowed:
``item()``, ``numpy()``, ``tolist()`` and copies to the CPU raise PyTorch's errors.
"""
import weakref

from . import backend
from .autograd import function as _function

_LEVEL = 8  # inside the profiler and autocast: an op's outputs are made meta last
_live = [0]  # how many meta arrays exist (each one element, which its views keep alive)


def track(element):
    """Count a new meta array by its one ``element``; the first one registers :func:`_run_on_meta`."""
    _live[0] += 1
    if _live[0] == 1:
        _function.apply_interceptors.register(_run_on_meta, _LEVEL)
    weakref.finalize(element, _released)


def _released():
    """The last meta array is gone: ops stop passing through :func:`_run_on_meta`."""
    _live[0] -= 1
    if _live[0] == 0:
        _function.apply_interceptors.unregister(_run_on_meta)


def _tensors(values):
    for value in values:
        if isinstance(value, _function._Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from _tensors(value)


def _run_on_meta(proceed, cls, args, kwargs):
    """An op with a meta input: its outputs are meta tensors of the shapes and dtypes it computed.

    Mixing a meta tensor with a CPU tensor of one or more dimensions is PyTorch's error
    (a 0-d CPU tensor counts as a number, as on CUDA).
    """
    tensors = list(_tensors(args))
    if not any(type(t._data) is backend.MetaArray for t in tensors):
        return proceed(cls, args, kwargs)
    for t in tensors:
        if type(t._data) is not backend.MetaArray and t._data.ndim and cls.__name__ != "ToDevice":
            raise RuntimeError(f"Tensor on device {t.device} is not on the expected device meta!")
    outputs = proceed(cls, args, kwargs)
    for t in _tensors(outputs if type(outputs) is tuple else (outputs,)):
        if type(t._data) is not backend.MetaArray or t._data.strides != (0,) * t._data.ndim:
            t._data = backend.meta_array(t._data.shape, t._data.dtype)
    return outputs


backend.meta_array_made.append(track)  # the first meta array registers _run_on_meta
