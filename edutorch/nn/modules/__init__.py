"""``torch.nn.modules``: the Module base class, containers and layers."""
from .module import Module
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
