"""Every lesson notebook has the course's parts and is stored the way nbval needs.

nbval (``./dev test``) re-runs the notebooks and compares outputs; these tests
check what nbval does not: the structure of each lesson (goals, exercises with
checks, a widget, the real-PyTorch cell) and that the stored outputs are a clean,
complete, in-order run with the widget state saved.
"""
import json
import pathlib
import re

import pytest

LESSONS = pathlib.Path(__file__).resolve().parents[2] / "lessons"

NOTEBOOKS = sorted(LESSONS.glob("[0-9][0-9]-*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def source(cell):
    return "".join(cell["source"])


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def text_of(output):
    if output["output_type"] == "stream":
        return "".join(output["text"])
    if output["output_type"] in ("execute_result", "display_data"):
        return "".join(output["data"].get("text/plain", ""))
    return ""


def test_the_first_four_lessons_exist():
    names = [p.name for p in NOTEBOOKS]
    for prefix in ("01-tensors-and-autograd", "02-modules-parameters-buffers", "03-hooks", "04-pruning"):
        assert f"{prefix}.ipynb" in names


# the template of new lessons (./dev new-lesson) keeps the same contract
TEMPLATE = LESSONS / "_template.ipynb"


@pytest.fixture(params=NOTEBOOKS + [TEMPLATE], ids=lambda p: p.stem)
def nb(request):
    return load(request.param)


def test_starts_with_a_title_and_goals(nb):
    first = source(nb["cells"][0])
    assert nb["cells"][0]["cell_type"] == "markdown"
    assert re.match(r"# \d\d · ", first), "the first cell is the lesson's title"
    assert "**Goals.**" in first
    assert len(re.findall(r"^\d\. ", first, flags=re.M)) >= 3, "at least three numbered goals"


def test_kernel_is_python3(nb):
    assert nb["metadata"]["kernelspec"]["name"] == "python3"


def test_has_checked_exercises(nb):
    headings = [c for c in nb["cells"] if c["cell_type"] == "markdown"
                and re.search(r"^### Exercise \d+\.\d+", source(c), flags=re.M)]
    calls = [c for c in code_cells(nb) if re.search(r"checks\.exercise_\d+_\d+\(", source(c))]
    assert len(headings) >= 2  # lessons 01–04 have 2–4, later lessons at least five
    assert len(calls) == len(headings), "each exercise ends with a call to its check"


def test_every_stored_check_reports_success(nb):
    for cell in code_cells(nb):
        if re.search(r"checks\.exercise_\d+_\d+\(", source(cell)):
            texts = [text_of(o) for o in cell["outputs"]]
            assert any(t.startswith("✓ correct") for t in texts), source(cell)


def test_shows_a_widget_with_its_state_saved(nb):
    views = [o for c in code_cells(nb) for o in c["outputs"] if WIDGET_VIEW in o.get("data", {})]
    assert views, "a cell whose last line is a widget view"
    state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
    for view in views:
        assert view["data"][WIDGET_VIEW]["model_id"] in state, "the widget's state is stored"
    images = [m for m in state.values() if m["model_name"] == "ImageModel"]
    assert images and all(m.get("buffers") for m in images), "the widget's PNG is stored"


def test_widget_output_also_holds_its_picture(nb):
    """JupyterLab draws no widget in a notebook it does not trust (one just downloaded or
    opened before running it): it shows the output's safe formats. A PNG of the widget
    there means the student sees the figure, not only the widget's text form."""
    views = [o for c in code_cells(nb) for o in c["outputs"] if WIDGET_VIEW in o.get("data", {})]
    for view in views:
        assert view["data"].get("image/png", "").startswith("iVBORw0KGgo"), "a PNG, base64"
        assert 300 <= view["metadata"]["image/png"]["width"] <= 1000, "shown at its CSS width"


def test_no_stored_picture_is_cut_at_its_edge(nb):
    """A figure's text or axes that run past the picture's edge are cut off there (a
    message wider than its panel once lost its last words): nothing may be drawn on
    the outer two pixels of any picture the lesson stores, widgets' pictures included."""
    import base64
    import io

    import numpy as np
    from PIL import Image

    pictures = [o["data"]["image/png"] for c in code_cells(nb) for o in c["outputs"]
                if "image/png" in o.get("data", {})]
    for number, picture in enumerate(pictures):
        with Image.open(io.BytesIO(base64.b64decode(picture))) as image:
            pixels = np.asarray(image.convert("RGB"), dtype=int)
        drawn = np.abs(pixels - pixels[0, 0]).sum(axis=-1) > 60  # unlike the background
        edges = {"left": drawn[:, :2], "right": drawn[:, -2:], "top": drawn[:2], "bottom": drawn[-2:]}
        assert not any(edge.any() for edge in edges.values()), (
            f"picture {number}: drawn on its edge", [side for side, e in edges.items() if e.any()])


def test_widget_text_form_is_short_and_stable(nb):
    for cell in code_cells(nb):
        for output in cell["outputs"]:
            if WIDGET_VIEW in output.get("data", {}):
                plain = "".join(output["data"]["text/plain"])
                assert len(plain) < 200 and "PNG" not in plain, plain


def test_ends_with_an_optional_pytorch_parity_cell(nb):
    cell = code_cells(nb)[-1]
    text = source(cell)
    assert text.startswith("# NBVAL_IGNORE_OUTPUT")
    assert 'print("PyTorch is not installed: skipped")' in text
    assert "edutorch and PyTorch agree:" in text
    assert "Same code under real PyTorch" in source(nb["cells"][-2])


def test_outputs_are_one_clean_run_in_order(nb):
    counts = [c["execution_count"] for c in code_cells(nb)]
    assert counts == list(range(1, len(counts) + 1)), "run top to bottom once (Restart & Run All)"
    for cell in code_cells(nb):
        for output in cell["outputs"]:
            assert output["output_type"] != "error", source(cell)
            assert output.get("name") != "stderr", f"stderr output: {text_of(output)[:200]}"


def test_no_memory_addresses_or_timings_in_outputs(nb):
    """nbval compares stored outputs; a cell marked NBVAL_IGNORE_OUTPUT (the PyTorch cell, a
    profiler table) is not compared, so its timings may stay."""
    for cell in code_cells(nb):
        if source(cell).startswith("# NBVAL_IGNORE_OUTPUT"):
            continue
        for output in cell["outputs"]:
            text = text_of(output)
            assert not re.search(r"0x[0-9a-fA-F]{6,}", text), text
            assert not re.search(r"\d+(\.\d+)? ?(ms|µs|seconds)\b", text), text


def test_seeded(nb):
    assert "torch.manual_seed(0)" in source(code_cells(nb)[0])


def test_parity_cell_skips_cleanly_without_pytorch(nb, monkeypatch, capsys):
    """Run the last cell as if torch were not installed: one line, no error."""
    import importlib.util

    import numpy as np

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "torch" else real_find_spec(name, *args))
    exec(compile(source(code_cells(nb)[-1]), "<parity cell>", "exec"), {"np": np})
    assert capsys.readouterr().out == "PyTorch is not installed: skipped\n"


def run_cells_until(path, marker):
    """Execute a notebook's code cells in one namespace, up to the cell containing ``marker``."""
    namespace = {}
    for cell in code_cells(load(path)):
        exec(compile(source(cell), str(path), "exec"), namespace)
        if marker in source(cell):
            return namespace
    raise AssertionError(f"no cell contains {marker!r}")


def test_lesson_01_autograd_explorer_reacts_to_its_controls():
    ns = run_cells_until(LESSONS / "01-tensors-and-autograd.ipynb", "explorer = AutogradExplorer(torch)")
    explorer = ns["explorer"]
    first_image = bytes(explorer.image.value)
    assert first_image.startswith(b"\x89PNG")
    explorer.function.value = "x³ − 3x"
    explorer.x.value = 1.5
    image = bytes(explorer.image.value)
    assert image.startswith(b"\x89PNG") and image != first_image
    slope = 3 * 1.5**2 - 3  # d/dx (x³ − 3x)
    assert f"x.grad = dy/dx = {slope:.4f}" in explorer.summary.value
    assert repr(explorer) == "AutogradExplorer(f='x³ − 3x', x=1.5)"


def nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def test_exercises_are_nbgrader_answer_and_check_cells(nb):
    """Each exercise: an answer cell (nbgrader solution, worked answer between the markers)
    right before a locked check cell (nbgrader grade cell with points) calling its check."""
    cells = nb["cells"]
    ids = [nbgrader_meta(c)["grade_id"] for c in cells if nbgrader_meta(c)]
    assert len(ids) == len(set(ids)), "grade_id values must be unique"
    checks_ = [i for i, c in enumerate(cells) if re.search(r"checks\.exercise_\d+_\d+\(", source(c))]
    assert checks_
    for i in checks_:
        check, answer = cells[i], cells[i - 1]
        meta = nbgrader_meta(check)
        assert meta.get("grade") is True and meta.get("solution") is False and meta.get("locked") is True, \
            source(check)
        assert meta.get("points", 0) > 0 and meta.get("schema_version") == 3
        assert source(check).strip().count("\n") == 0, "the check cell is the single check call"
        ameta = nbgrader_meta(answer)
        assert ameta.get("solution") is True and ameta.get("grade") is False, source(answer)[:80]
        text = source(answer)
        assert text.count("### BEGIN SOLUTION") == text.count("### END SOLUTION") >= 1
    for cell in cells:
        if not nbgrader_meta(cell).get("solution"):
            # nbgrader treats these words anywhere as a solution region
            assert "BEGIN SOLUTION" not in source(cell) and "END SOLUTION" not in source(cell)
