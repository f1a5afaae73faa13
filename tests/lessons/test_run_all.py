"""Run All of a blank released lesson, as JupyterLab does it, runs to the end (teaching/course.py).

The student versions come from nbgrader's release (answers stripped). Each one is run by
nbclient in a plain student's kernel with errors NOT allowed: an unanswered exercise's check
prints "✗ not yet" and returns, so no cell after it is skipped. (Under nbgrader's autograder the
same check raises and scores 0: tests/lessons/test_nbgrader.py.) A module of its own, so that
`./dev test`'s workers run it beside the grading module.
"""
import os
import pathlib
import sys

import pytest

pytest.importorskip("nbgrader", reason="nbgrader not installed: student versions not tested "
                                       "(pip install -e \".[class]\")")
nbclient = pytest.importorskip("nbclient", reason="nbclient not installed")
import nbformat  # noqa: E402  (comes with nbclient)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "teaching"))
import course  # noqa: E402  (teaching/course.py)

pytestmark = pytest.mark.slow
LESSONS = course.lesson_notebooks()


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """The released (blank) student version of every lesson, by lesson file name."""
    root = tmp_path_factory.mktemp("class") / "course"
    return {path.name: path for path in course.release(root)}


@pytest.fixture
def students_kernel_env(monkeypatch):
    # the kernel imports edutorch and widgets from this checkout; a student's kernel is not nbgrader's
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_blank_released_lesson_runs_all_to_the_end(lesson, released, students_kernel_env):
    path = released[lesson.name]
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, allow_errors=False, timeout=course.CELL_TIMEOUT,
                                     kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError at the first cell that fails
    checks = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade")]
    assert checks and all(c.execution_count for c in nb.cells if c.cell_type == "code")
    for cell in checks:
        shown = [o for o in cell.outputs if o.output_type == "execute_result"]
        assert len(shown) == 1 and len(cell.outputs) == 1, cell.outputs
        assert shown[0]["data"]["text/plain"].startswith("✗ not yet: "), (path.name, shown)
