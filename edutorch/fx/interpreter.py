"""``torch.fx.Interpreter`` and ``torch.fx.Transformer``: run a graph node by node, or rebuild it.

    class NegSigmoid(Interpreter):            # run with sigmoid replaced by neg
        def call_function(self, target, args, kwargs):
            if target is torch.sigmoid:
                return torch.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)
    NegSigmoid(gm).run(x)

``Interpreter.run`` walks the graph in order; each node's value is
``self.<node.op>(node.target, args, kwargs)`` with the node's inputs replaced
by their values, so overriding ``call_function``, ``call_module``... changes
what a node does.  ``Transformer`` runs the same walk on Proxies, so the
overridden methods *record* a new graph, returned as a new GraphModule by
``transform()``.
"""
import inspect
import sys

from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate, map_arg
from .proxy import Proxy
from ._symbolic_trace import Tracer, _Patcher


class Interpreter:
    """Runs a GraphModule's graph one node at a time (``run``), each by a method you can override."""

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        # a value is dropped from ``env`` after its last user ran
        self.user_to_last_uses = {}
        if garbage_collect_values:
            seen = set()
            for node in reversed(self.graph.nodes):
                for n in node.all_input_nodes:
                    if n not in seen:
                        seen.add(n)
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """Run the graph on ``args``; returns what its ``output`` node returns."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:  # given by initial_env: not run again
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    where = f"While executing {node.format_node()}"
                    msg = f"{e.args[0]}\n\n{where}" if e.args else where
                    msg += f"\nOriginal traceback:\n{node.meta.get('stack_trace')}"
                    e.args = (msg,) + e.args[1:]
                    if isinstance(e, KeyError):
                        raise RuntimeError(*e.args) from e
                raise
            for to_delete in self.user_to_last_uses.get(node, []):
                del self.env[to_delete]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        """``run`` taking the inputs as a list, which it empties (so they can be freed)."""
        args_iter = iter(args_list)
        env = {n: next(args_iter) for n in self.graph.nodes if n.op == "placeholder"}
        args_list.clear()
        return self.run(initial_env=env)

    def run_node(self, n):
        """The value of node ``n``: its op's method called on the values of its inputs."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # -- one method per node op --------------------------------------------------------------
    def placeholder(self, target, args, kwargs):
        """The next input (``*args``: all the rest); a missing one takes the default in ``args``."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as stop:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not "
                               "passed in!") from stop

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    # -- helpers ----------------------------------------------------------------------------
    def fetch_attr(self, target):
        """The module attribute at dotted path ``target``."""
        atoms = target.split(".")
        obj = self.module
        for i, atom in enumerate(atoms):
            if not hasattr(obj, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(atoms[:i + 1])}")
            obj = getattr(obj, atom)
        return obj

    def fetch_args_kwargs_from_env(self, n):
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        """``args`` with every node replaced by its value from ``env``."""
        def load_arg(n_arg):
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run Graph.lint() to "
                                   "diagnose such issues")
            return self.env[n_arg]
        return map_arg(args, load_arg)


class _TransformerTracer(Tracer):
    """Records into the Transformer's new graph; every module call stays one ``call_module``."""

    def __init__(self, graph, root):
        super().__init__()
        self.graph = graph
        self.root = root
        self._tensor_attrs = {}
        self._module_paths = {id(m): name for name, m in root.named_modules()}

    def is_leaf_module(self, m, module_qualified_name):
        return True


class Transformer(Interpreter):
    """An Interpreter whose run records a new graph: ``Transformer(gm).transform()`` is a GraphModule."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph, module)

    def placeholder(self, target, args, kwargs):
        default_value = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default_value), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self):
        """Run on Proxies and return the recorded graph as a GraphModule over the same module.

        As during ``symbolic_trace``, edutorch's functions are wrapped while it runs, so
        that ``torch.neg(*args)`` called on Proxies in an overridden method records a
        ``call_function`` node.
        """
        patcher = _Patcher()
        try:
            self.tracer._patch_functions(patcher, vars(sys.modules[type(self).__module__]))
            result = super().run(enable_io_processing=False)
        finally:
            patcher.restore()
        if result is not None:
            output = self.new_graph.output(map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a))
            old_output = list(self.graph.nodes)[-1]
            output.meta.update(old_output.meta)
        return GraphModule(self.module, self.new_graph)
