"""The package's import layers (``tools/import_graph.py``): the core, what a Tensor op runs
through, never imports ``amp``, ``nn`` or ``multiprocessing`` (they register with it), and
the largest import circle does not grow.  Reads the source only: nothing is imported."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the largest circle when this test was written (issue 27: 56 before; Tensor, its methods,
# autograd and the functional API, as in PyTorch): 43, then 46 with forward mode
# (autograd.forward_ad, which Function.apply reads) and the composite Tensor methods (which
# call torch.linalg, as Tensor.cross does in PyTorch); a smaller one is progress: lower this number
LARGEST_CIRCLE = 46


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
