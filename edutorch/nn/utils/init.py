"""``torch.nn.utils.skip_init``: build a module without initializing its parameters.

PyTorch constructs the module on the ``"meta"`` device (shapes only, no
memory, so ``reset_parameters`` does nothing) and then allocates
uninitialized memory with ``to_empty``.  edutorch has no meta device, so it
runs the constructor normally and then:

* replaces every parameter's and buffer's values with uninitialized memory
  (``numpy.empty``), keeping the same Parameter objects;
* restores the random number generator, so the initialization left no trace:
  the next ``torch.rand`` gives what it would have given without the module.
"""
import inspect
from itertools import chain

from ... import empty_like
from ... import random as _random
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """Instantiate ``module_cls(*args, **kwargs)`` with uninitialized parameters and buffers.

    The class must accept a ``device`` argument, as in PyTorch.
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")

    rng_state = _random.get_rng_state()
    module = module_cls(*args, **kwargs)
    _random.set_rng_state(rng_state)

    for t in chain(module.parameters(), module.buffers()):
        t.data = empty_like(t)  # uninitialized memory, as PyTorch's to_empty()
    return module
