"""The picture stored in a notebook's output (shown when the widget cannot be) carries the
titles and the scales that the live view writes in HTML around its pictures."""
import io

from PIL import Image

import edutorch as et
import edutorch.nn as nn
from edutorch.datasets import load_digits
from widgets import BackwardStepper, GradientInspector, ParameterTree, TrainingStepper
from widgets._render import plain_lines


def height(png):
    with Image.open(io.BytesIO(png)) as image:
        return image.height


def texts(view):
    return "\n".join(line for markup in view.fallback_text() for line in plain_lines(markup))


def small():
    et.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 10))


def check_stored(view, *needles):
    stored, width = view.stored_png()
    picture, picture_width = view.fallback_png()
    assert width == picture_width and height(stored) > height(picture)
    written = texts(view)
    for needle in needles:
        assert needle in written, (needle, written)
    bundle, metadata = view._repr_mimebundle_()
    assert "image/png" in bundle


def test_training_stepper_stores_its_title_and_colour_scales():
    view = TrainingStepper(small(), load_digits("train"), optimizer="Adam", lr=0.01)
    for _ in range(5):
        view.next_button.click()
    check_stored(view, "TrainingStepper — Sequential, Adam", "colours: ±", "left: Δ 0.weight")


def test_backward_stepper_stores_its_step_and_shared_scale():
    x = et.tensor([1.0, -2.0, 0.5], requires_grad=True)
    view = BackwardStepper((x * 3.0).sum(), {"x": x})
    view.slider.value = 2
    check_stored(view, "BackwardStepper —", "step 2 / 3", "one scale: ±3")


def test_gradient_inspector_and_parameter_tree_store_title_and_numbers():
    model = small()
    x, y = load_digits("train")
    check_stored(GradientInspector(model, (x[:32], y[:32])), "GradientInspector —",
                 "returned total_norm =")
    check_stored(ParameterTree(model), "ParameterTree —", "|max| =")


def test_plain_lines_break_at_br_and_drop_tags():
    assert plain_lines("<b>a</b> &amp; b<br>c<div>d</div>e") == ["a & b", "cd", "e"]
    assert plain_lines("") == []
