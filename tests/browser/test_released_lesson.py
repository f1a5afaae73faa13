"""A learner's Run All on a released lesson (blank exercises), in JupyterLab in Chromium.

``./dev lab`` opens the learner's copy: nbgrader's student versions, made by
``teaching/learner.py``, every answer cell reduced to ``# YOUR CODE HERE``.
Run All through the menu must run such a lesson to its end: each check
prints its "✗ not yet" hint (it never raises, so the cells after it run too),
the last cell prints its output, and the widget is drawn.

Skips with a reason when Chromium, playwright, JupyterLab or nbgrader is missing.
"""
from __future__ import annotations

import json
import re
import shutil
import sys

import pytest

from tests.browser.conftest import LESSONS, ROOT, serve_jupyterlab
from tests.browser.test_jupyterlab import (
    PANEL, open_notebook, run_all_cells, save_screenshot, wait_until_all_ran)

pytestmark = pytest.mark.browser

LESSON = "03-hooks"  # a short lesson with exercises and a widget (HookMonitor)


def exercise_checks(path):
    """How many code cells of a notebook call a check (``checks.exercise_N_M(...)``)."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return sum(1 for cell in notebook["cells"] if cell["cell_type"] == "code"
               and re.search(r"checks\.exercise_\d+_\d+\(", "".join(cell["source"])))


@pytest.fixture(scope="module")
def released_lab(tmp_path_factory):
    """``(base_url, root)``: JupyterLab on a learner's copy of ``LESSON`` (as ``./dev lab``
    makes it: nbgrader's student version and the checks it imports)."""
    pytest.importorskip("jupyterlab", reason="JupyterLab not installed: browser test skipped")
    pytest.importorskip("nbgrader", reason="nbgrader not installed: the learner's blank copy "
                        "cannot be made (pip install -e \".[class]\")")
    sys.path.insert(0, str(ROOT / "teaching"))
    import learner  # teaching/learner.py: what `./dev lab` runs

    tmp = tmp_path_factory.mktemp("released")
    sources = tmp / "lessons"  # the course, reduced to one lesson
    sources.mkdir()
    shutil.copy(LESSONS / f"{LESSON}.ipynb", sources)
    for checks in LESSONS.glob("checks*"):
        shutil.copytree(checks, sources / checks.name, ignore=shutil.ignore_patterns("__pycache__"))
    root = tmp / "my-lessons"
    learner.sync(root, sources)
    with serve_jupyterlab(root, tmp) as url:
        yield url, root


def test_run_all_runs_a_blank_lesson_to_its_end(released_lab, browser, tmp_path):
    base_url, root = released_lab
    notebook = root / f"{LESSON}.ipynb"
    assert "# YOUR CODE HERE" in notebook.read_text(encoding="utf-8")  # a blank copy
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        open_notebook(page, base_url, LESSON)
        run_all_cells(page)
        prompts = wait_until_all_ran(page)  # every code cell ran: [1] .. [N], kernel idle
        assert len(prompts) == sum(1 for cell in json.loads(notebook.read_text(encoding="utf-8"))[
            "cells"] if cell["cell_type"] == "code")

        failed = page.locator(f'{PANEL} .jp-OutputArea-output[data-mime-type='
                              f'"application/vnd.jupyter.stderr"]', has_text="Error")
        assert failed.count() == 0, failed.first.inner_text()[:2000]
        not_yet = page.locator(f"{PANEL} .jp-OutputArea-output", has_text="✗ not yet")
        assert not_yet.count() == exercise_checks(notebook) > 0
        assert page.locator(f"{PANEL} .jp-OutputArea-output", has_text="✓ correct").count() == 0

        last = page.locator(f"{PANEL} .jp-CodeCell").last
        assert last.locator(".jp-OutputArea-output").count() > 0
        assert last.locator(".jp-OutputArea-output").first.inner_text().strip()

        page.wait_for_function(  # the widget: drawn, its picture decoded
            "sel => { const img = document.querySelector(sel);"
            " return img && img.complete && img.naturalWidth > 100; }",
            arg=f"{PANEL} img.widget-image", timeout=30_000)
        save_screenshot(page, tmp_path, "released-" + LESSON + ".png", update_docs=False)
    finally:
        page.close()
