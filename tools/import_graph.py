"""The import graph of ``edutorch``: its largest import circle, and what the core imports.

    python tools/import_graph.py              # the circles (largest first) and the core's upward imports
    python tools/import_graph.py --members    # also list the modules of the largest circle

An *import circle* is a strongly connected component of the graph whose nodes
are the package's modules and whose edges are their ``import`` statements:
module A is in B's circle when A imports (directly or through others) B and B
imports A.  Every ``import`` counts, also those inside functions (they run
later, but still tie the two modules together: neither can be read, or
loaded, without the other).  An edge goes to the module named (``from .x
import y`` to ``x.y`` when that is a module, else to ``x``), not to the
packages above it, whose ``__init__`` Python runs first: counting those would
put every module in ``edutorch/__init__.py``'s circle.

The headline figure leaves out ``edutorch/__init__.py`` itself, the public
namespace (``torch``): it imports every package, and many modules reach their
siblings through it late (``import edutorch as torch`` inside a function, as
PyTorch's own modules ``import torch``), which ties everything into one circle
that says nothing about the layers.  ``--with-namespace`` counts it too.

The *core* is what a Tensor op runs through (``CORE`` below).  It must never
import ``amp``, ``nn`` or ``multiprocessing``: those packages register what
they add (autocast's interceptor, shared memory) with the core, as PyTorch's
do.  ``tests/test_layering_imports.py`` asserts that, that the largest circle does
not grow and that it is the only one.  The script reads the source only (``ast``); nothing is imported.
"""
import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "edutorch"

# the modules a Tensor op runs through; everything below these names
CORE = ("edutorch._tensor", "edutorch._tensor_methods", "edutorch.autograd", "edutorch._dtype",
        "edutorch.backend", "edutorch._creation", "edutorch.random", "edutorch._generator",
        "edutorch._array_interface")
# packages that register themselves with the core and must not be imported by it
ABOVE_CORE = ("edutorch.amp", "edutorch.nn", "edutorch.multiprocessing")


def module_files(root=ROOT, package=PACKAGE):
    """``{module name: path}`` for every ``.py`` file of the package."""
    files = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def _resolve(module, is_package, level, name):
    """The absolute name of ``from <level dots><name> import ...`` written in ``module``."""
    if level == 0:
        return name
    base = module.split(".")
    if not is_package:
        base.pop()  # a module's relative imports start from its package
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def imports_of(module, path, modules):
    """The package's modules that ``module`` imports, anywhere in its file (in functions too)."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, is_package, node.level, node.module)
            # ``from pkg import mod`` imports the module pkg.mod; ``from mod import name``, mod itself
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != module)
    return found


def import_graph(root=ROOT, package=PACKAGE):
    """``{module: set of the package's modules it imports}``."""
    files = module_files(root, package)
    return {module: imports_of(module, path, files) for module, path in files.items()}


def circles(graph):
    """The strongly connected components with more than one module, largest first (Tarjan's
    algorithm, written with an explicit stack so that deep graphs do not hit the recursion limit)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:  # node is the root of a component: pop it off the stack
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return sorted(found, key=len, reverse=True)


def without_namespace(graph, namespace=PACKAGE):
    """The graph without the public namespace module (see the module docstring)."""
    return {m: targets - {namespace} for m, targets in graph.items() if m != namespace}


def _under(module, prefixes):
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def core_imports_above(graph):
    """``(core module, module above the core)`` for each import the layering forbids."""
    return sorted((m, t) for m, targets in graph.items() if _under(m, CORE)
                  for t in targets if _under(t, ABOVE_CORE))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", action="store_true", help="list the modules of the largest circle")
    parser.add_argument("--with-namespace", action="store_true",
                        help="count edutorch/__init__.py (the public namespace) as a module of the graph")
    args = parser.parse_args(argv)
    graph = import_graph()
    if not args.with_namespace:
        graph = without_namespace(graph)
    found = circles(graph)
    print(f"{len(graph)} modules, {sum(len(t) for t in graph.values())} imports between them")
    print(f"circles (size): {[len(c) for c in found]}")
    if found and args.members:
        print("largest circle:")
        for module in sorted(found[0]):
            print(f"  {module}")
    upward = core_imports_above(graph)
    print(f"core imports of {', '.join(ABOVE_CORE)}: {len(upward)}")
    for module, target in upward:
        print(f"  {module} -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
