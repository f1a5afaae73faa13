"""The widget models are plain Python: no ipywidgets, no matplotlib (README, "Widgets": a model plus a view)."""
import ast
from pathlib import Path

import pytest

WIDGETS = Path(__file__).resolve().parents[2] / "widgets"
MODELS = ["parameter_tree.py", "hook_monitor.py", "prune_explorer.py", "autograd_graph.py",
          "graph_groups.py", "_common.py"]
MODELS += ["training_stepper.py", "backward_stepper.py"]
MODELS += ["profiler_summary.py"]


def imported_top_level_names(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("filename", MODELS)
def test_models_import_no_gui_library(filename):
    names = imported_top_level_names(WIDGETS / filename)
    assert not names & {"ipywidgets", "matplotlib", "IPython", "PIL"}, names


@pytest.mark.parametrize("filename", MODELS + ["_render.py", "parameter_tree_view.py",
                                               "hook_monitor_view.py", "prune_explorer_view.py",
                                               "autograd_explorer_view.py",
                                               "training_stepper_view.py",
                                               "backward_stepper_view.py",
                                               "profiler_view.py"])
def test_widgets_take_the_framework_from_the_module(filename):
    """No direct edutorch import: the framework (edutorch or torch) comes from the module
    the user passes in, so the same widget code runs on real torch modules too."""
    source = (WIDGETS / filename).read_text()
    assert "from edutorch" not in source and "import edutorch" not in source
