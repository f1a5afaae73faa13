"""``torch.fx.symbolic_trace``: run ``forward`` on Proxies and keep what happened.

``Tracer.trace(root)`` makes one ``placeholder`` per argument of
``root.forward`` and calls it with Proxies. While it runs, the tracer patches

* ``nn.Module.__call__``: a *leaf* module (edutorch's own layers, not
  ``Sequential``) becomes one ``call_module`` node; any other module is
  traced through, so its operations appear one by one;
* ``nn.Module.__getattr__``: reading a ``Parameter`` gives a ``get_attr`` node;
* edutorch's functions (``torch.relu``, ``F.gelu``, ``torch.cat``, ...) and
  those of ``math``, wherever ``forward``'s module refers to them: called with
  a Proxy, they become ``call_function`` nodes.

Everything is put back when the trace ends.
"""
import functools
import inspect
import math
import sys

from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate
from .proxy import Proxy

__all__ = ["Tracer", "symbolic_trace", "wrap"]

_wrapped_names = []  # (globals dict, name) registered with fx.wrap


def wrap(fn_or_name):
    """``torch.fx.wrap``: at module scope, make calls to this function (by name in this
    module) a single ``call_function`` node instead of tracing into it."""
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    caller_globals = sys._getframe(1).f_globals
    _wrapped_names.append((caller_globals, name))
    return fn_or_name


def _has_proxy(args, kwargs):
    found = []
    map_aggregate((args, kwargs), lambda a: found.append(a) if isinstance(a, Proxy) else None)
    return found[0] if found else None


class _Patcher:
    """Set attributes for the duration of a trace and restore them afterwards."""

    def __init__(self):
        self._saved = []

    def patch(self, owner, name, value):
        if isinstance(owner, dict):
            self._saved.append((owner, name, owner[name]))
            owner[name] = value
        else:
            self._saved.append((owner, name, owner.__dict__[name]))
            setattr(owner, name, value)

    def restore(self):
        for owner, name, value in reversed(self._saved):
            if isinstance(owner, dict):
                owner[name] = value
            else:
                setattr(owner, name, value)
        self._saved.clear()


class _RecordingFunction:
    """An edutorch function while tracing: given a Proxy it records a ``call_function`` node,
    else it calls the function.  It compares equal to the function it stands for, so that
    ``target == torch.sigmoid`` holds in a ``Transformer``'s methods."""

    def __init__(self, tracer, original):
        functools.update_wrapper(self, original)
        self.tracer, self.original = tracer, original

    def __call__(self, *args, **kwargs):
        if _has_proxy(args, kwargs) is not None:
            return self.tracer.create_proxy("call_function", self.original, args, kwargs)
        return self.original(*args, **kwargs)

    def __eq__(self, other):
        return other is self or other is self.original

    def __hash__(self):
        return hash(self.original)


class Tracer:
    """``torch.fx.Tracer``: turns a module's ``forward`` into a ``Graph``."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=()):
        self._autowrap_ids = {id(v) for m in autowrap_modules for v in vars(m).values() if callable(v)}
        self._autowrap_ids |= {id(f) for f in autowrap_functions}

    # -- what becomes one node ---------------------------------------------------------
    def is_leaf_module(self, m, module_qualified_name):
        """edutorch's own layers are leaves; user modules and ``Sequential`` are traced through."""
        from ..nn import Sequential

        return type(m).__module__.startswith("edutorch.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod):
        """The qualified name of a submodule of the root (``"layer.0"``)."""
        path = self._module_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    # -- building nodes ------------------------------------------------------------------
    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        """A node whose arguments are ``args``/``kwargs`` made into graph values, as a Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        return Proxy(self.create_node(kind, target, args_, kwargs_, name, type_expr), self)

    def create_arg(self, a):
        """A value as a node argument: Proxies become their nodes, tensors ``get_attr`` nodes."""
        from .._tensor import Tensor
        from ..nn import Module, Parameter

        def convert(x):
            if isinstance(x, Proxy):
                return x.node
            if isinstance(x, Parameter):
                for n, p in self.root.named_parameters():
                    if x is p:
                        return self.create_node("get_attr", n, (), {})
                raise NameError("parameter is not a member of this module")
            if isinstance(x, Tensor):
                for n, b in self.root.named_buffers():
                    if x is b:
                        return self.create_node("get_attr", n, (), {})
                return self.create_node("get_attr", self._tensor_constant(x), (), {})
            if isinstance(x, Module):
                for n, m in self.root.named_modules():
                    if x is m:
                        return self.create_node("get_attr", n, (), {})
            return x

        return map_aggregate(a, convert)

    def _tensor_constant(self, t):
        """The attribute name of a tensor the module holds, or a new ``_tensor_constantN`` on root."""
        name = self._tensor_attrs.get(id(t))
        if name is None:
            i = 0
            while hasattr(self.root, f"_tensor_constant{i}"):
                i += 1
            name = f"_tensor_constant{i}"
            self._tensor_attrs[id(t)] = name
            setattr(self.root, name, t)
        return name

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """Reading a Parameter during tracing: one ``get_attr`` node per parameter."""
        from ..nn import Parameter

        if isinstance(attr_val, Parameter):
            for n, p in self.root.named_parameters():
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {})
                    return parameter_proxy_cache[n]
        return attr_val

    def call_module(self, m, forward, args, kwargs):
        """A leaf becomes ``call_module``; any other module runs ``forward`` on the Proxies."""
        name = self.path_of_module(m)
        if not self.is_leaf_module(m, name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", name, args, kwargs)

    # -- the trace -------------------------------------------------------------------------
    def _placeholders(self, fn, skip_self):
        """One placeholder Proxy per parameter of ``fn`` (defaults kept as the node's arg)."""
        params = list(inspect.signature(fn).parameters.values())[1 if skip_self else 0:]
        args, kwargs = [], {}
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise NotImplementedError(
                    f"edutorch.fx traces forward(...) with named arguments only, not {p}"
                )
            default = p.default
            proxy = self.create_proxy("placeholder", p.name, () if default is p.empty else (default,), {})
            if p.kind == p.KEYWORD_ONLY:
                kwargs[p.name] = proxy
            else:
                args.append(proxy)
        return args, kwargs

    def _wrap_function(self, original):
        return _RecordingFunction(self, original)

    def _patch_functions(self, patcher, fn_globals):
        """Wrap edutorch's public functions and math's (in ``forward``'s globals too)."""
        from .node import _public_namespaces

        wrappers = {}
        for _, module in _public_namespaces():
            for name, value in list(vars(module).items()):
                if (callable(value) and not isinstance(value, type) and not name.startswith("_")
                        and (getattr(value, "__module__", None) or "").startswith("edutorch")):
                    wrappers.setdefault(id(value), self._wrap_function(value))
                    patcher.patch(module, name, wrappers[id(value)])
        self._wrappers = wrappers
        self._patch_globals(patcher, fn_globals)
        for g, name in _wrapped_names:
            if name in g and id(g[name]) not in wrappers:
                patcher.patch(g, name, self._wrap_function(g[name]))

    def _patch_globals(self, patcher, fn_globals):
        """Names a module imported directly (``from edutorch import relu``; ``math.sqrt``)."""
        for name, value in list(fn_globals.items()):
            if id(value) in self._wrappers:
                patcher.patch(fn_globals, name, self._wrappers[id(value)])
            elif id(value) in self._autowrap_ids:
                self._wrappers[id(value)] = self._wrap_function(value)
                patcher.patch(fn_globals, name, self._wrappers[id(value)])

    def trace(self, root, concrete_args=None):
        """The graph of ``root.forward``, or of ``root`` itself for a plain function."""
        from .._tensor import Tensor
        from ..nn import Module

        if concrete_args is not None:
            raise NotImplementedError("edutorch.fx does not specialise on concrete_args")
        is_module = isinstance(root, Module)
        fn = type(root).forward if is_module else root
        self.root = root if is_module else Module()
        root = self.root
        self.graph = Graph()
        self._module_paths = {id(m): name for name, m in root.named_modules()}
        self._tensor_attrs = {  # plain tensors kept as attributes (not parameters or buffers)
            id(v): f"{prefix}.{k}" if prefix else k
            for prefix, m in root.named_modules() for k, v in vars(m).items()
            if isinstance(v, Tensor)
        }
        args, kwargs = self._placeholders(fn, skip_self=is_module)
        parameter_proxy_cache = {}
        tracer = self
        orig_call, orig_getattr = Module.__call__, Module.__getattr__

        def module_call_wrapper(mod, *args, **kwargs):
            forward = mod.forward
            tracer._patch_globals(patcher, getattr(forward, "__globals__", {}))
            return tracer.call_module(mod, functools.partial(orig_call, mod), args, kwargs)

        def module_getattr_wrapper(mod, attr):
            return tracer.getattr(attr, orig_getattr(mod, attr), parameter_proxy_cache)

        patcher = _Patcher()
        try:
            patcher.patch(Module, "__call__", module_call_wrapper)
            patcher.patch(Module, "__getattr__", module_getattr_wrapper)
            self._patch_functions(patcher, fn.__globals__)
            result = fn(root, *args, **kwargs) if is_module else fn(*args, **kwargs)
            self.create_node("output", "output", (self.create_arg(result),), {})
        finally:
            patcher.restore()
        return self.graph


def symbolic_trace(root, concrete_args=None):
    """``torch.fx.symbolic_trace``: a ``GraphModule`` that computes what ``root`` (a module
    or a function) does."""
    from ..nn import Module

    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
