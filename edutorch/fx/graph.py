"""``torch.fx.Graph``: a list of ``Node``s, and the Python code it stands for.

The graph is the program: placeholders (inputs), operations, one output.
It can be printed (``str(graph)``, ``print_tabular()``), changed in place
(``inserting_after`` + ``call_function``, ``node.replace_all_uses_with``,
``erase_node``, ``eliminate_dead_code``), checked (``lint``) and turned back
into Python source (``python_code``), which ``GraphModule`` executes as its
``forward``. Names and the generated code follow PyTorch's ``torch/fx/graph.py``.
"""
import builtins
import dataclasses
import inspect
import keyword
import math
import re
import warnings

from .node import Node, _public_path, _qualified_name, map_arg

__all__ = ["Graph", "PythonCode"]

# -- names -------------------------------------------------------------------------------
_CUSTOM_BUILTINS = {"inf": math.inf, "nan": math.nan, "NoneType": type(None)}
# names a node may not take (unless it is that very object): keywords, builtins, globals of the code
_ILLEGAL_NAMES = {k: object() for k in keyword.kwlist}
_ILLEGAL_NAMES.update(builtins.__dict__)
_ILLEGAL_NAMES.update(_CUSTOM_BUILTINS)
_ILLEGAL_NAMES.update({"torch": object(), "edutorch": object(), "device": object()})

_NAME_RE = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_ILLEGAL_CHAR_RE = re.compile("[^0-9a-zA-Z_]+")


def _snake_case(s):
    """``pascalCase`` -> ``pascal_case``, as node names are made from targets."""
    return re.sub(r"(?<=[a-z])([A-Z])", r"_\1", s).lower()


class _Namespace:
    """Unique Python identifiers: ``add``, ``add_1``, ...; never a keyword or a builtin."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = {}

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _NAME_RE.match(candidate)
        if match is None:
            candidate = _ILLEGAL_CHAR_RE.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _NAME_RE.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _ILLEGAL_NAMES.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate


def _target_to_str(target):
    """The name a node gets from its target: ``operator.add`` -> ``add``, ``"layer.0"`` -> ``layer.0``."""
    if callable(target):
        op = target.__name__
    else:
        op = target
        if op.startswith("__") and op.endswith("__"):
            op = op[2:-2]
    return _snake_case(op)


# -- code generation ------------------------------------------------------------------------
REFLECTABLE_MAGIC_METHODS = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
MAGIC_METHODS = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
    "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}", **REFLECTABLE_MAGIC_METHODS,
}


def _format_target(base, target):
    """``self.layer.weight``, or ``getattr(self.layer, "0")`` for atoms that are not identifiers."""
    for atom in target.split("."):
        base = f"{base}.{atom}" if atom.isidentifier() else f'getattr({base}, "{atom}")'
    return base


@dataclasses.dataclass
class PythonCode:
    """``torch.fx.graph.PythonCode``: the source of ``forward`` and the globals it needs."""

    src: str
    globals: dict


class _CodeGen:
    """Turns a graph into the source of ``def forward(self, ...)``, one line per node."""

    def __init__(self, graph, root_module):
        import edutorch

        self.graph, self.root_module = graph, root_module
        self.namespace = _Namespace()
        for node in graph.nodes:  # nodes keep their names; globals get the others
            self.namespace.create_name(node.name, node)
        self.globals = {"edutorch": edutorch, "device": edutorch.device, **_CUSTOM_BUILTINS}

    def add_global(self, obj):
        """The name under which the code refers to a function or type."""
        path = _public_path(obj)
        if path is not None:
            return path
        name = self.namespace.create_name(_qualified_name(obj), obj)
        self.globals[name] = obj
        return name

    def repr_arg(self, arg):
        import edutorch

        if isinstance(arg, Node):
            return repr(arg)
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            return f"{self.add_global(type(arg))}{repr(tuple(arg))}"
        if isinstance(arg, edutorch.dtype):
            return f"edutorch.{str(arg).split('.')[-1]}"
        if isinstance(arg, tuple):
            inner = ", ".join(self.repr_arg(a) for a in arg)
            return f"({inner},)" if len(arg) == 1 else f"({inner})"
        if isinstance(arg, list):
            return "[" + ", ".join(self.repr_arg(a) for a in arg) + "]"
        if isinstance(arg, dict):  # PyTorch relies on repr here: nodes print as their names
            return repr(arg)
        if isinstance(arg, slice):
            return f"slice({self.repr_arg(arg.start)}, {self.repr_arg(arg.stop)}, {self.repr_arg(arg.step)})"
        return repr(arg)

    def format_args(self, args, kwargs):
        return ", ".join([self.repr_arg(a) for a in args]
                         + [f"{k} = {self.repr_arg(v)}" for k, v in kwargs.items()])

    def statement(self, node):
        """The Python statement computing ``node`` (None for a placeholder)."""
        name, args = repr(node), node.args
        if node.op == "placeholder":
            return None
        if node.op == "call_method":
            return f"{name} = {_format_target(self.repr_arg(args[0]), node.target)}({self.format_args(args[1:], node.kwargs)})"
        if node.op == "call_function":
            target = node.target
            if getattr(target, "__module__", "") == "_operator" and target.__name__ in MAGIC_METHODS:
                return f"{name} = " + MAGIC_METHODS[target.__name__].format(*(self.repr_arg(a) for a in args))
            global_name = self.add_global(target)
            if (global_name == "getattr" and len(args) == 2 and isinstance(args[1], str)
                    and args[1].isidentifier()):
                return f"{name} = {_format_target(self.repr_arg(args[0]), args[1])}"
            return f"{name} = {global_name}({self.format_args(args, node.kwargs)})"
        if node.op == "call_module":
            return f"{name} = {_format_target(self.root_module, node.target)}({self.format_args(args, node.kwargs)})"
        if node.op == "get_attr":
            return f"{name} = {_format_target(self.root_module, node.target)}"
        return f"return {self.repr_arg(args[0])}"  # output

    def generate(self):
        nodes = list(self.graph.nodes)
        # the last user of each value frees it (``;  a = b = None``), as PyTorch's code does
        last_uses = {}
        seen = set()
        for node in reversed(nodes):
            for inp in node._input_nodes:
                if inp not in seen:
                    seen.add(inp)
                    last_uses.setdefault(node, []).append(inp)
        free_vars, body = [], []
        for node in nodes:
            if node.op == "placeholder":
                default = "" if not node.args else f" = {self.repr_arg(node.args[0])}"
                free_vars.append(f"{node.target}{default}")
                raw_name = node.target.replace("*", "")
                if raw_name != repr(node):
                    body.append(f"{repr(node)} = {raw_name}\n")
                continue
            body.append(self.statement(node))
            if node.op == "output":
                body.append("\n")
                continue
            to_delete = list(last_uses.get(node, []))
            if not node.users:
                to_delete.append(node)
            body.append(f";  {' = '.join([repr(n) for n in to_delete] + ['None'])}\n" if to_delete else "\n")
        if not body:
            body.append("pass\n")
        code = "".join(body).lstrip("\n")
        code = "\n".join("    " + line for line in code.split("\n"))
        signature = ", ".join(["self"] + free_vars)
        return PythonCode(f"\n\n\ndef forward({signature}):\n{code}", self.globals)


class _InsertPoint:
    """``with graph.inserting_after(node):``: new nodes go there, then back where they went."""

    def __init__(self, graph, new_insert):
        self.graph, self.orig_insert = graph, graph._insert
        graph._insert = new_insert

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        self.graph._insert = self.orig_insert


class _NodeList:
    """``graph.nodes``: iterates in order and keeps going when the current node is erased."""

    def __init__(self, graph, reverse=False):
        self.graph, self.reverse = graph, reverse

    def __len__(self):
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        step = "_prev" if self.reverse else "_next"
        cur = getattr(root, step)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, step)

    def __reversed__(self):
        return iter(_NodeList(self.graph, not self.reverse))

    def __repr__(self):
        return repr(list(self))


class Graph:
    """``torch.fx.Graph``."""

    def __init__(self, owning_module=None):
        self._root = Node(self, "", "root", "", (), {})
        self._insert = self._root.prepend  # by default, new nodes go at the end
        self._len = 0
        self._graph_namespace = _Namespace()
        self.owning_module = owning_module

    @property
    def nodes(self):
        return _NodeList(self)

    def find_nodes(self, *, op, target=None):
        """The nodes with this op (and target)."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # -- building ---------------------------------------------------------------------------
    def create_node(self, op, target=None, args=None, kwargs=None, name=None, type_expr=None):
        """Insert a node at the current insert point and return it."""
        args = () if args is None else tuple(args)
        kwargs = {} if kwargs is None else dict(kwargs)
        candidate = name if name is not None else _target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        node = Node(self, name, op, target, args, kwargs, type_expr)
        self._insert(node)
        self._len += 1
        return node

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of ``node`` (from any graph) in this one; ``arg_transform`` maps its input nodes."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = dict(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy every node of graph ``g`` into this one; ``val_map`` maps ``g``'s nodes to ours.

        Nodes already in ``val_map`` (typically ``g``'s placeholders, bound to nodes
        of this graph) are not copied.  Returns the value ``g`` outputs, in terms
        of this graph's nodes (None if ``g`` has no output node).
        """
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def inserting_before(self, n=None):
        """New nodes go before ``n`` (at the start of the graph for None)."""
        if n is None:
            return self.inserting_after(self._root)
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n=None):
        """New nodes go after ``n`` (at the end of the graph for None)."""
        if n is None:
            return self.inserting_before(self._root)
        return _InsertPoint(self, n.append)

    # -- removing ---------------------------------------------------------------------------
    def erase_node(self, to_erase):
        """Remove a node nothing uses any more."""
        if len(to_erase.users) > 0:
            raise RuntimeError(
                f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                f"users in the graph: {to_erase.users}!"
            )
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node")
            return
        to_erase._remove_from_list()
        to_erase._erased = True  # an iterator standing on it moves on
        self._len -= 1
        to_erase._update_args_kwargs(map_arg(to_erase._args, lambda n: None),
                                     map_arg(to_erase._kwargs, lambda n: None))

    def eliminate_dead_code(self, is_impure_node=None):
        """Erase, from the end backwards, every pure node nothing uses; True if any was."""
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    # -- checking and printing ---------------------------------------------------------------
    def lint(self):
        """Check the graph: nodes belong here, come after their inputs, have unique names and
        known ops, and (in a GraphModule) their targets exist."""
        seen_names, seen_nodes = set(), set()
        for node in self.nodes:
            if node.op not in ("placeholder", "call_method", "call_module", "call_function",
                               "get_attr", "output"):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' does not belong to this Graph, but was "
                        "used as an argument! If you are copying nodes from another graph, make "
                        f"sure to use ``arg_transform`` on node_copy() to remap values\n{self}"
                    )
                if arg not in seen_nodes:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' was used before it has been defined! "
                        f"Please check that Nodes in the graph are topologically ordered\n{self}"
                    )
            seen_nodes.add(node)
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
        if self.owning_module is not None:
            self._lint_targets()

    def _lint_targets(self):
        for node in self.nodes:
            if node.op == "call_function" and not callable(node.target):
                raise ValueError(f"Node {node} target {node.target} has type "
                                 f"{type(node.target).__name__} but a Callable is expected")
            if node.op not in ("get_attr", "call_module"):
                continue
            m_itr, atoms = self.owning_module, node.target.split(".")
            for i, atom in enumerate(atoms):
                new_m_itr = getattr(m_itr, atom, None)
                seen_qualname = ".".join(atoms[:i])
                if new_m_itr is None:
                    raise RuntimeError(f"Node {node} target {node.target} references nonexistent "
                                       f"attribute {atom} of {seen_qualname}")
                m_itr = new_m_itr

    def python_code(self, root_module):
        """``PythonCode`` whose ``src`` defines ``forward(self, ...)``; ``root_module`` names
        the module that ``get_attr``/``call_module`` nodes read from (``"self"``)."""
        return _CodeGen(self, root_module).generate()

    def __str__(self):
        lines = [node.format_node() for node in self.nodes]
        return "graph():" + "".join("\n    " + line for line in lines if line)

    def print_tabular(self):
        """Print the nodes as a table (opcode, name, target, args, kwargs), with ``tabulate``
        as PyTorch does; without it, PyTorch's message and its ImportError."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found on "
                  "this machine. Run `pip install tabulate` to install the library.")
            raise
        node_specs = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(node_specs, headers=["opcode", "name", "target", "args", "kwargs"]))

