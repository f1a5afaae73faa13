"""``torch.autograd.graph``: the backward graph's node type, for code that walks it.

``Node`` is the base class of every ``grad_fn`` (``y.grad_fn`` is an instance
of a subclass such as ``MulBackward0``); ``isinstance(y.grad_fn, Node)`` and
``node.next_functions``/``node.name()``/``node.register_hook`` work as in PyTorch.
"""
from .function import Node, RemovableHandle

__all__ = ["Node", "RemovableHandle"]
