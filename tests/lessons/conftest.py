"""Make the package ``lessons/checks`` importable as ``checks`` (the notebooks import it that way), and
``lib``: each check test runs once with edutorch objects and once with real PyTorch ones."""
import pathlib
import sys

import pytest

import edutorch

LESSONS = pathlib.Path(__file__).resolve().parents[2] / "lessons"
if str(LESSONS) not in sys.path:
    sys.path.insert(0, str(LESSONS))


@pytest.fixture(params=["edutorch", "torch"])
def lib(request):
    if request.param == "torch":
        return pytest.importorskip("torch", reason="real PyTorch not installed: torch-object checks skipped")
    return edutorch
