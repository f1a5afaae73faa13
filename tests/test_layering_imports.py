"""The package's import layers (``tools/import_graph.py``): the core, what a Tensor op runs
through, never imports ``amp``, ``nn`` or ``multiprocessing`` (they register with it), the
largest import circle does not grow, and it is the only one: Tensor <-> autograd, as in
PyTorch.  Reads the source only: nothing is imported."""
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the largest circle when this test was written (issue 27: 56 before; Tensor, its methods,
# autograd and the functional API, as in PyTorch): 43, then 46 with forward mode
# (autograd.forward_ad, which Function.apply reads) and the composite Tensor methods (which
# call torch.linalg, as Tensor.cross does in PyTorch), then 45 once the generator moved below the
# Tensor (random.py left); a smaller one is progress: lower this number
LARGEST_CIRCLE = 45


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools" / "import_graph.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def graph(tool):
    return tool.without_namespace(tool.import_graph())


def test_core_never_imports_the_packages_that_register_with_it(tool, graph):
    assert tool.core_imports_above(graph) == []


def test_largest_import_circle_does_not_grow(tool, graph):
    largest = tool.circles(graph)[0]
    assert len(largest) <= LARGEST_CIRCLE, sorted(largest)
    outside = [m for m in largest if tool._under(m, tool.ABOVE_CORE)]
    assert outside == [], "a package above the core is in the core's circle"


def test_the_only_circle_is_tensor_and_autograd(tool, graph):
    """No other modules import each other (fx's graph and node did, until node.py took the lookup
    both use); the one circle left is the Tensor with its methods and autograd."""
    found = tool.circles(graph)
    assert len(found) == 1, [sorted(c) for c in found[1:]]
    assert {"edutorch._tensor", "edutorch.autograd.function", "edutorch._tensor_methods.arithmetic"} <= found[0]


def test_the_generator_is_below_the_tensor(tool, graph):
    """The Tensor's in-place samplers import the generator at their top; ``random.py``, which
    makes new tensors, is above the Tensor, outside its circle (PyTorch: ``torch._C.Generator``)."""
    circle = tool.circles(graph)[0]
    assert "edutorch._generator" in graph["edutorch._tensor_methods.sampling"]
    assert "edutorch._generator" not in circle and "edutorch.random" not in circle


# where a tensor's array (``._data``) may be read: the engine (edutorch/_array_interface.py)
ENGINE_FILES = ("edutorch/*.py", "edutorch/_tensor_methods/", "edutorch/autograd/", "edutorch/nn/_functions/",
                "edutorch/nn/functional.py", "edutorch/nn/_interpolate.py", "edutorch/nn/parameter.py",
                "edutorch/amp/", "edutorch/multiprocessing/")


def _in_engine(relative):
    """Is the file ``relative`` (``edutorch/nn/functional.py``) one of ``ENGINE_FILES``?"""
    for place in ENGINE_FILES:
        if place == "edutorch/*.py" and relative.count("/") == 1:  # a module at the package's top
            return True
        if relative.startswith(place) if place.endswith("/") else relative == place:
            return True
    return False


def test_only_the_engine_reads_a_tensors_array():
    """Code above the engine (modules, nn.utils, optim, func, fx, the profiler...) works through
    Tensor ops, or ``_array_interface``'s three names (pruning), never ``._data``."""
    readers = {str(path.relative_to(ROOT)) for path in (ROOT / "edutorch").rglob("*.py")
               if re.search(r"\._data\b", path.read_text())}
    assert {"edutorch/_tensor.py", "edutorch/nn/_functions/conv.py"} <= readers  # the scan sees the engine
    assert sorted(r for r in readers if not _in_engine(r)) == []


def test_imports_inside_functions_count(tool, tmp_path):
    """An import written in a function body ties two modules as one at the top does."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .a import g\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    graph = tool.import_graph(tmp_path, "pkg")
    assert graph["pkg.b"] == {"pkg.a"} and graph["pkg.c"] == {"pkg.a"}
    assert tool.circles(graph) == [{"pkg.a", "pkg.b"}]
