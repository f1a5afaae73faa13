"""``nn.DataParallel``: split each batch across the GPUs, run a replica of the module on each.

Without a GPU (no CuPy, or no device) it is, as in PyTorch, a plain wrapper:
``forward`` calls the module, ``device_ids`` is ``[]``, and the module is a
submodule named ``module`` (so ``state_dict`` keys start with ``module.``).
Models saved from a ``DataParallel`` are often loaded with that prefix
stripped: ``{k.removeprefix("module."): v for k, v in state.items()}``.
"""
from itertools import chain

from ... import cuda
from ..._tensor import device as _device
from ...profiler import record_function
from ..modules.module import Module
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter_kwargs


def _index(d):
    """A device id as an int (``0``, ``"cuda:1"``, ``torch.device("cuda", 1)``)."""
    if isinstance(d, int):
        return d
    d = _device(d)
    return 0 if d.index is None else d.index


def _check_devices(module, src_device):
    for t in chain(module.parameters(), module.buffers()):
        if t.device != src_device:
            raise RuntimeError("module must have its parameters and buffers "
                               f"on device {src_device} (device_ids[0]) but found one of "
                               f"them on device: {t.device}")


def _run(module, inputs, kwargs, device_ids, output_device, dim):
    """The GPU forward: scatter, replicate, apply, gather (one device: just call the module)."""
    inputs, kwargs = scatter_kwargs(inputs, kwargs, device_ids, dim)
    if not inputs and not kwargs:  # a forward without inputs runs on the first device
        inputs, kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **kwargs[0])
    used = device_ids[:len(inputs)]
    outputs = parallel_apply(replicate(module, used), inputs, kwargs, used)
    return gather(outputs, output_device, dim)


class DataParallel(Module):
    """``torch.nn.DataParallel(module, device_ids=None, output_device=None, dim=0)``."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not cuda.is_available():  # PyTorch without a GPU: a plain wrapper
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_index(d) for d in device_ids]
        self.output_device = _index(output_device)
        self.src_device_obj = _device("cuda", self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        with record_function("DataParallel.forward"):
            if not self.device_ids:
                return self.module(*inputs, **kwargs)
            _check_devices(self.module, self.src_device_obj)
            return _run(self.module, inputs, kwargs, self.device_ids, self.output_device, self.dim)

    def replicate(self, module, device_ids):
        return replicate(module, device_ids)

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional ``DataParallel``: ``module(inputs)`` across ``device_ids`` (GPUs only)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not cuda.is_available():
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        device_ids = list(range(cuda.device_count()))
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_index(d) for d in device_ids]
    _check_devices(module, _device("cuda", device_ids[0]))
    return _run(module, inputs, module_kwargs, device_ids, _index(output_device), dim)
