"""The widgets' example notebooks (examples/*.ipynb) are stored as one clean, seeded run.

nbval (``./dev test``, which collects ``examples/``) re-runs them and compares
the outputs; this checks what nbval does not: the widget's state and PNG are
saved (so the notebook shows the widget without a kernel) and the stored run is
complete, in order and free of errors.
"""
import json
import pathlib

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
NOTEBOOKS = {"training_stepper": "TrainingStepper(", "backward_stepper": "BackwardStepper("}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


@pytest.fixture(params=sorted(NOTEBOOKS))
def example(request):
    with open(EXAMPLES / f"{request.param}.ipynb", encoding="utf-8") as f:
        return request.param, json.load(f)


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def test_stored_as_one_clean_seeded_run(example):
    _, nb = example
    cells = code_cells(nb)
    assert [c["execution_count"] for c in cells] == list(range(1, len(cells) + 1))
    assert "torch.manual_seed(0)" in "".join(cells[0]["source"])
    for cell in cells:
        for output in cell["outputs"]:
            assert output["output_type"] != "error" and output.get("name") != "stderr"


def test_the_widget_is_shown_with_its_state_and_pictures(example):
    name, nb = example
    views = [o for c in code_cells(nb) for o in c["outputs"] if WIDGET_VIEW in o.get("data", {})]
    assert views
    for view in views:
        plain = "".join(view["data"]["text/plain"])
        assert plain.startswith(NOTEBOOKS[name]) and len(plain) < 200
    state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
    assert all(v["data"][WIDGET_VIEW]["model_id"] in state for v in views)
    images = [m for m in state.values() if m["model_name"] == "ImageModel"]
    assert len(images) >= 2 and all(m.get("buffers") for m in images)
