"""``torch.nn.parallel``: ``DataParallel`` and the four steps it is made of.

    model = nn.DataParallel(model)   # on a machine without GPUs: a wrapper that calls model

On GPUs, one forward is: ``scatter`` the inputs' batch into chunks, one per
device; ``replicate`` the module onto each device; ``parallel_apply`` each
replica to its chunk; ``gather`` the outputs onto ``output_device``.  Files as
in PyTorch: ``data_parallel.py``, ``scatter_gather.py``, ``replicate.py``,
``parallel_apply.py``.  ``DistributedDataParallel`` (several processes) is out
of scope.
"""
from .data_parallel import DataParallel, data_parallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel", "DataParallel"]


from ..._scope import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("torch.nn.parallel", "edutorch.nn.parallel")  # out-of-scope names say why
