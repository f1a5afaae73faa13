"""``torch.fx.GraphModule``: an ``nn.Module`` whose ``forward`` is generated from a ``Graph``.

The module holds the submodules and attributes the graph refers to
(copied from the traced root by their qualified names) and the graph itself.
``recompile()`` turns the graph into Python source (``gm.code``) and makes it
``forward``; setting ``gm.graph`` recompiles. After changing ``gm.graph`` in
place, call ``gm.recompile()`` so ``forward`` follows.
"""
import copy
import itertools
import linecache

from ..nn import Module

__all__ = ["GraphModule"]

_source_ids = itertools.count()


def _exec_forward(src, globals_):
    """Compile the generated source; registered with linecache so tracebacks show its lines."""
    key = f"<eval_with_key>.{next(_source_ids)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    scope = dict(globals_)
    exec(compile(src, key, "exec"), scope)
    return scope["forward"]


def _copy_attr(from_module, to_module, target):
    """Make ``to_module.<target>`` the object at ``from_module.<target>`` (plain ``Module``s
    stand in for the intermediate levels; a plain tensor becomes a buffer)."""
    from .._tensor import Tensor
    from ..nn import Parameter

    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:  # a parent already installed brings its children along
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    """``to_module.<target> = from_obj``, creating plain ``Module``s on the way."""
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    setattr(to_module, field, from_obj)


class GraphModule(Module):
    """``torch.fx.GraphModule``."""

    def __new__(cls, *args, **kwargs):
        # one class per instance, so that recompile() can give each its own forward
        impl = type(cls.__name__, (cls,), {})
        return super().__new__(impl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(
                            f"Node {node} referenced target {node.target} but that target was not "
                            "provided in ``root``!"
                        )
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph

    @property
    def graph(self):
        """The graph; assigning one recompiles ``forward``."""
        return self._graph

    @graph.setter
    def graph(self, g):
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The Python source of the generated ``forward``."""
        return self._code

    def recompile(self):
        """Regenerate ``forward`` from ``self.graph``; returns the ``PythonCode``."""
        python_code = self._graph.python_code(root_module="self")
        self.__dict__["_code"] = python_code.src
        type(self).forward = _exec_forward(python_code.src, python_code.globals)
        return python_code

    # -- submodules ----------------------------------------------------------------------------
    def add_submodule(self, target, m):
        """Install ``m`` at ``target`` (``"a.b.c"``), making plain Modules on the way."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = Module()
                setattr(mod, item, submod)
            if not isinstance(submod, Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        """Remove the submodule at ``target``; False if there is none."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            mod = getattr(mod, item, None)
            if not isinstance(mod, Module):
                return False
        if not isinstance(getattr(mod, field, None), Module):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self):
        """Remove the submodules no ``call_module``/``get_attr`` node reaches (a called module keeps its own)."""
        used = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                atoms = node.target.split(".")
                used.update(".".join(atoms[:i]) for i in range(1, len(atoms) + 1))
                if node.op == "call_module":
                    used.update(f"{node.target}.{name}" for name, _ in self.get_submodule(node.target).named_modules()
                                if name)
        for name in [name for name, _ in self.named_modules() if name and name not in used]:
            self.delete_submodule(name)

    # -- copying and printing ---------------------------------------------------------------
    def __deepcopy__(self, memo):
        res = GraphModule.__new__(GraphModule)
        memo[id(self)] = res
        fake = Module()
        fake.__dict__ = copy.deepcopy(self.__dict__, memo)
        GraphModule.__init__(res, fake, fake.__dict__["_graph"], type(self).__name__)
        return res

    def __copy__(self):
        res = GraphModule(self, self.graph, type(self).__name__)
        res.__dict__.update({k: v for k, v in self.__dict__.items() if k not in res.__dict__})
        return res

    def __str__(self):
        reminder = "# To see more debug info, please use `graph_module.print_readable()`"
        return "\n".join([super().__str__(), self._code, reminder])

    def print_readable(self, print_output=True):
        """The generated code as a class definition, as PyTorch prints it (no source stack
        traces are recorded, so PyTorch's comment says so)."""
        definition, *lines = self._code.strip().split("\n")
        if any(n.op not in ("placeholder", "output") for n in self.graph.nodes):
            lines.insert(0, "    # No stacktrace found for following nodes")
        body = "\n".join("    " + line for line in [definition] + lines)
        text = f"class {type(self).__name__}(torch.nn.Module):\n{body}\n"
        if print_output:
            print(text)
        return text
