"""``torch.nn``: modules, parameters, layers, losses (``import edutorch.nn as nn``)."""
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from .modules import *  # noqa: F401,F403
from . import modules, parameter
from . import functional, init, utils
