"""``torch.fx.Proxy``: a stand-in value that records what is done to it.

During symbolic tracing, ``forward`` runs on Proxies instead of tensors.
Every operator (``x + 1``), method call (``x.relu()``), attribute
(``x.shape``), indexing (``x[0]``) and edutorch function (``torch.relu(x)``)
applied to a Proxy adds a node to the graph and returns a new Proxy.

A Proxy has no value, so Python cannot branch on it: ``if x.sum() > 0:``
raises ``TraceError`` ("symbolically traced variables cannot be used as
inputs to control flow"), as does iterating over one.
"""
import operator

from .graph import MAGIC_METHODS, REFLECTABLE_MAGIC_METHODS

__all__ = ["Proxy", "Attribute", "TraceError"]


class TraceError(ValueError):
    """``torch.fx.proxy.TraceError``: the program cannot be traced symbolically."""


class Proxy:
    """``torch.fx.Proxy``: wraps a ``Node`` during tracing."""

    def __init__(self, node, tracer=None):
        self.node = node
        self.tracer = tracer

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k.startswith("__"):  # copy/pickle probing: not an attribute of the traced value
            raise AttributeError(k)
        return Attribute(self, k)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in a "
            "loop or as a *args or **kwargs function argument. See the torch.fx docs on "
            "pytorch.org for a more detailed explanation of what types of control flow can be "
            "traced, and check out the Proxy docstring for help troubleshooting Proxy iteration "
            "errors"
        )

    def __bool__(self):
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def __len__(self):
        raise RuntimeError(
            "'len' is not supported in symbolic tracing by default. If you want this call to be "
            "recorded, please call torch.fx.wrap('len') at module scope"
        )

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def keys(self):
        return self.tracer.create_proxy("call_method", "keys", (self,), {})

    __hash__ = object.__hash__  # ``==`` is recorded below, so keep identity hashing


class Attribute(Proxy):
    """``proxy.attr``: a method call if it is called, else a ``getattr`` node (made lazily)."""

    def __init__(self, root, attr):
        self.root, self.attr, self.tracer = root, attr, root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _install_magic_methods():
    """``Proxy.__add__`` etc.: ``x + y`` becomes ``call_function[operator.add](x, y)``;
    the reflected ``__radd__`` records ``operator.add(y, x)``."""

    def forward_method(target):
        def impl(*args):
            return args[0].tracer.create_proxy("call_function", target, args, {})
        return impl

    def reflected_method(target):
        def impl(self, rhs):
            return self.tracer.create_proxy("call_function", target, (rhs, self), {})
        return impl

    for name in MAGIC_METHODS:  # operator.and_ is __and__; "div" is Python 2's (no operator.div)
        if hasattr(operator, name):
            setattr(Proxy, f"__{name.strip('_')}__", forward_method(getattr(operator, name)))
    for name in REFLECTABLE_MAGIC_METHODS:
        if hasattr(operator, name):
            setattr(Proxy, f"__r{name.strip('_')}__", reflected_method(getattr(operator, name)))


_install_magic_methods()
