"""Widget latency of the controls a person found slow in the lessons (issue 25, item 4).

Like ``widgets.py``: each repetition is one user action, including the model's
work, the redraw and the PNG encoding (not the transfer to the browser), on
models the size of the lessons'. Budget: about 40 ms of CPU per input, so that
with the transfer and the browser's decoding a person sees the new picture
within 100 ms (limit 100 ms, as the other widget rows).

- PruneExplorer on the digits MLP 64-128-64-10 with 359 evaluation images
  (lesson 04): the method dropdown and the weights dropdown, each cycling
  through its options. The curves are then cached, as they are in a kernel,
  where the explorer computes them while the controls rest; apply followed by
  undo (one repetition = both clicks; the pruned state's curve is computed
  afresh every time, the undone state's is remembered);
- ProfilerView (lesson 12): the sort-by dropdown cycling through its six keys
  on a profile of one training step of a 64-32-10 MLP (bars drawn as HTML);
- BackwardStepper on lesson 12's graph: a 4-block MLP of width 8 through
  ``checkpoint_sequential(..., 2, use_reentrant=False)``, the step slider
  forward through its 18 steps.
"""
import itertools

import numpy as np

import edutorch as et
import edutorch.nn as nn
import edutorch.nn.functional as F
from edutorch.datasets import load_digits
from edutorch.profiler import profile, record_function
from edutorch.utils.checkpoint import checkpoint_sequential
from widgets import BackwardStepper, ProfilerView, PruneExplorer

LIMITS = {"torch": None, "numpy": None, "ms": 100}


def _prune_explorer():
    et.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(),
                          nn.Linear(64, 10))
    x, y = load_digits("test")
    return PruneExplorer(model, data=(x[:359], y[:359]))


def _cycle(dropdown):
    """A function that picks the dropdown's next option (each picked once first)."""
    values = [o[1] if isinstance(o, tuple) else o for o in dropdown.options]
    following = itertools.cycle(values[1:] + values[:1])
    for _ in values:
        dropdown.value = next(following)
    return lambda: setattr(dropdown, "value", next(following))


def _prune_method():
    return _cycle(_prune_explorer().method)


def _prune_weights():
    return _cycle(_prune_explorer().layer)


def _prune_apply_undo():
    view = _prune_explorer()

    def apply_then_undo():
        view.apply_button.click()
        view.undo_button.click()
    return apply_then_undo


def _profiler_sort():
    et.manual_seed(0)
    images, digits = load_digits("train")
    classifier = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    with profile() as prof:
        with record_function("forward"):
            loss = F.cross_entropy(classifier(images[:256]), digits[:256])
        with record_function("backward"):
            loss.backward()
    return _cycle(ProfilerView(prof, sort_by="count", row_limit=8).sort_by)


def _checkpointed_stepper():
    et.manual_seed(0)
    deep = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.ReLU()) for _ in range(4)])
    x = et.tensor(np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32),
                  requires_grad=True)
    view = BackwardStepper(checkpoint_sequential(deep, 2, x, use_reentrant=False).sum())
    steps = itertools.cycle(range(1, view.slider.max + 1))
    return lambda: setattr(view.slider, "value", next(steps))


def scenarios():
    note = "one control change = model work + redraw + PNG encode"
    cases = [
        ("widget PruneExplorer method dropdown (digits MLP 64-128-64-10, 359 images)",
         _prune_method()),
        ("widget PruneExplorer weights dropdown (digits MLP 64-128-64-10, 359 images)",
         _prune_weights()),
        ("widget PruneExplorer apply + undo (digits MLP 64-128-64-10, 359 images)",
         _prune_apply_undo()),
        ("widget ProfilerView sort-by dropdown (a training step of a 64-32-10 MLP)",
         _profiler_sort()),
        ("widget BackwardStepper step slider (lesson 12: 4 checkpointed blocks, 18 steps)",
         _checkpointed_stepper()),
    ]
    return [{"name": name, "contenders": {"edutorch": fn, "numpy": None, "torch": None},
             "limits": dict(LIMITS), "setup_note": note} for name, fn in cases]
