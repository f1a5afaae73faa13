"""The widget models are plain Python: no ipywidgets, no matplotlib (README, "Widgets": a model plus a view)."""
import ast
from pathlib import Path

import pytest

WIDGETS = Path(__file__).resolve().parents[2] / "widgets"
# found, not listed: a new widget file is covered the day it is added
FILES = sorted(p.name for p in WIDGETS.glob("*.py"))
VIEWS = [name for name in FILES if name.endswith("_view.py") or name == "_render.py"]
MODELS = [name for name in FILES if name not in VIEWS and name != "__init__.py"]


def test_the_widget_files_were_found():
    assert "_common.py" in MODELS and "prune_explorer.py" in MODELS
    assert "prune_explorer_view.py" in VIEWS and "_render.py" in VIEWS


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


@pytest.mark.parametrize("filename", FILES)
def test_widgets_take_the_framework_from_the_module(filename):
    """No direct edutorch import: the framework (edutorch or torch) comes from the module
    the user passes in, so the same widget code runs on real torch modules too."""
    source = (WIDGETS / filename).read_text()
    assert "from edutorch" not in source and "import edutorch" not in source
