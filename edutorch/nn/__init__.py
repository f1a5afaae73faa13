"""``torch.nn``: modules, parameters, layers, losses (``import edutorch.nn as nn``)."""
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from .modules import *  # noqa: F401,F403
from . import modules, parameter
from . import functional, init, utils
from . import parallel  # torch.nn.parallel
from .parallel import DataParallel


from .._scope import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("torch.nn", "edutorch.nn")  # out-of-scope names say why
