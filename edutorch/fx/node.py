"""``torch.fx.Node``: one operation of a ``Graph``.

A node has an ``op`` (what kind of operation), a ``target`` (what it calls),
``args``/``kwargs`` (which may contain other nodes: its inputs) and a unique
``name`` (the variable it becomes in the generated code). The six ops:

==============  ======================================  ===============================
op              target                                  meaning
==============  ======================================  ===============================
placeholder     argument name (``"x"``)                 an input of ``forward``
get_attr        qualified attribute (``"layer.weight"``)  ``self.layer.weight``
call_function   a Python callable (``operator.add``)    ``target(*args, **kwargs)``
call_method     method name (``"relu"``)                ``args[0].relu(*args[1:])``
call_module     submodule path (``"layer.0"``)          ``self.layer[0](*args)``
output          ``"output"``                            ``return args[0]``
==============  ======================================  ===============================

Nodes form a doubly-linked list owned by the graph (``prev``/``next``), and
each node knows its ``users``: the nodes that take it as an input.
"""
import builtins

__all__ = ["Node", "map_arg", "map_aggregate"]


def map_aggregate(a, fn):
    """Apply ``fn`` to every leaf of nested tuples, lists, dicts and slices."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(elem, fn) for elem in a)
        return t if not hasattr(a, "_fields") else type(a)(*t)  # a NamedTuple stays one
    if isinstance(a, list):
        return [map_aggregate(elem, fn) for elem in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply ``fn`` to every Node inside ``a`` (``torch.fx.node.map_arg``)."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _format_arg(arg):
    """How ``str(graph)`` shows an argument: nodes as ``%name``."""
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, tuple):
        return "(" + ", ".join(_format_arg(a) for a in arg) + ("," if len(arg) == 1 else "") + ")"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


# -- where edutorch's functions live --------------------------------------------------------
_PUBLIC_PATHS = None


def _public_namespaces():
    import edutorch
    import edutorch.linalg
    import edutorch.nn.functional

    return [("edutorch", edutorch), ("edutorch.nn.functional", edutorch.nn.functional),
            ("edutorch.linalg", edutorch.linalg)]


def _public_path(func):
    """``"edutorch.relu"`` for ``edutorch.relu``: the path user code spells, or None.

    A function defined in a public module is named there (``F.gelu`` is
    ``edutorch.nn.functional.gelu``); one from a private file by the public
    name it is exported under, its own ``__name__`` first (``cat``, not ``concatenate``)."""
    global _PUBLIC_PATHS
    if not (getattr(func, "__module__", None) or "").startswith("edutorch"):
        return None
    if _PUBLIC_PATHS is None:
        _PUBLIC_PATHS = {}
        namespaces = _public_namespaces()
        for prefix, module in namespaces:
            for name, value in vars(module).items():
                if callable(value) and not isinstance(value, type) and not name.startswith("_"):
                    # the function and what it wraps (a tracer's wrapper, or the one that
                    # accepts NumPy's axis=/keepdims=) are both known by this name
                    for f in {value, getattr(value, "__wrapped__", value)}:
                        path, own = f"{prefix}.{name}", name == getattr(f, "__name__", None)
                        defined_here = own and getattr(f, "__module__", None) == prefix
                        best = _PUBLIC_PATHS.get(id(f))
                        if best is None or defined_here or (own and not best[1]):
                            _PUBLIC_PATHS[id(f)] = (path, own or defined_here)
    found = _PUBLIC_PATHS.get(id(func))
    return None if found is None else found[0]


def _qualified_name(func):
    """``module.name`` of a function, with edutorch's public path where it has one."""
    if getattr(builtins, getattr(func, "__name__", ""), None) is func:
        return func.__name__
    public = _public_path(func)
    if public is not None:
        return public
    module = getattr(func, "__module__", None) or ""
    return f"{module}.{func.__qualname__}"


class Node:
    """``torch.fx.Node``."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in ("placeholder", "get_attr", "call_function", "call_method", "call_module",
                      "output", "root"):
            raise AssertionError(f"Unknown op {op}")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = return_type
        self.meta = {}
        self.users = {}          # node -> None: an ordered set of the nodes using this one
        self._input_nodes = {}   # node -> None: the nodes this one uses
        self._args, self._kwargs = (), {}
        self._prev = self._next = self
        self._erased = False
        self._repr_fn = None
        self._update_args_kwargs(args, kwargs)

    # -- inputs and users -------------------------------------------------------------
    def _update_args_kwargs(self, new_args, new_kwargs):
        """Set args/kwargs and keep both sides of every edge (``users``/``_input_nodes``) right."""
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args, self._kwargs = new_args, new_kwargs
        map_arg((new_args, new_kwargs), self._input_nodes.setdefault)
        for node in self._input_nodes:
            node.users.setdefault(self)

    @property
    def args(self):
        """The positional arguments (a tuple; nodes inside are this node's inputs)."""
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(tuple(a), self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, dict(k))

    @property
    def all_input_nodes(self):
        """The nodes this node uses, in order of appearance in args then kwargs."""
        return list(self._input_nodes)

    def update_arg(self, idx, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        self.kwargs = {**self.kwargs, key: arg}

    def replace_input_with(self, old_input, new_input):
        """Use ``new_input`` wherever this node used ``old_input``."""
        swap = lambda n: new_input if n is old_input else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_all_uses_with(self, replace_with, delete_user_cb=None, *, propagate_meta=False):
        """Make every user of this node use ``replace_with`` instead; returns those users."""
        if propagate_meta:
            if len(replace_with.meta) != 0:
                raise AssertionError(
                    "Called node.replace_all_uses_with(replace_with, propagate_meta=True), "
                    "but replace_with already has .meta keys"
                )
            replace_with.meta.update(self.meta)
        changed = [user for user in list(self.users) if delete_user_cb is None or delete_user_cb(user)]
        for user in changed:
            user.replace_input_with(self, replace_with)
        return changed

    # -- place in the graph's list ---------------------------------------------------
    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def prepend(self, x):
        """Move (or insert) node ``x`` just before this one."""
        if x is self:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Move (or insert) node ``x`` just after this one."""
        self._next.prepend(x)

    def _remove_from_list(self):
        # the node keeps its own links, so an iterator standing on it can still move on
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # -- what it is ---------------------------------------------------------------------
    def is_impure(self, impure_random=True):
        """Whether dead-code elimination must keep this node though nothing uses it."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_module":
            if self.graph.owning_module is None:
                raise AssertionError("self.graph.owning_module not set for purity check")
            return getattr(self.graph.owning_module.get_submodule(self.target), "_is_impure", False)
        if self.op == "call_method":
            return self.target.endswith("_") and not self.target.endswith("__")  # in-place
        return False

    def __repr__(self):
        if self._repr_fn:
            return self._repr_fn(self)
        return self.name

    @staticmethod
    def _pretty_print_target(target):
        if isinstance(target, str):
            return target
        module = getattr(target, "__module__", None)
        if module == "builtins":
            return f"builtins.{target.__name__}"
        if module == "_operator":
            return f"operator.{target.__name__}"
        return _qualified_name(target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """One line of ``str(graph)``: ``%name : [num_users=N] = op[target=...](args = ..., kwargs = ...)``."""
        head = f"%{self.name} : [num_users={len(self.users)}] = "
        if self.op == "placeholder":
            if placeholder_names:
                placeholder_names.append(self.target)
                return None
            default = f"(default={self.args[0]})" if self.args else ""
            return f"{head}{self.op}[target={self.target}]{default}"
        if self.op == "get_attr":
            return f"{head}{self.op}[target={self._pretty_print_target(self.target)}]"
        if self.op == "output":
            return f"return {self.args[0]}"
        return (f"{head}{self.op}[target={self._pretty_print_target(self.target)}]"
                f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")
