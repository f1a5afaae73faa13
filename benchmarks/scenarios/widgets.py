"""Widget latency: how long a view takes to react to one control change.

Each repetition is one user action on a view of the 784-256-128-10 MLP:
change the control, let the model recompute, redraw the figure and encode the
PNG that goes to the browser (everything but the transfer). Limit: 100 ms
median. There is no NumPy or torch contender: the number is an absolute
latency, so ``limits`` only has ``"ms"``.

- ParameterTree: select the next tensor in the dropdown (cycles through the
  six weights and biases: heatmaps, histograms and bar charts);
- HookMonitor: move the event slider to the next of the 20 events recorded
  in one forward+backward pass at batch 128;
- PruneExplorer: move the amount slider (L1 unstructured on ``0.weight``)
  with an evaluation batch of 256: the preview prunes a copy of the model,
  evaluates loss and accuracy, redraws the mask and the curve's marker. The
  explorer's caches are emptied before each move (``model.refresh()``), so
  every repetition pays for a fresh preview AND re-evaluates the real model:
  an upper bound of what a slider step costs.
"""
import itertools
import warnings

import numpy as np

import edutorch as et
import edutorch.nn as nn
from widgets import HookMonitor, ParameterTree, PruneExplorer

SIZES = (784, 256, 128, 10)
LIMITS = {"torch": None, "numpy": None, "ms": 100}


def _mlp():
    et.manual_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(SIZES) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def _parameter_tree():
    model = _mlp()
    model(et.randn(32, SIZES[0])).sum().backward()  # so .grad pictures are drawn too
    view = ParameterTree(model)
    names = itertools.cycle(view.select.options[1:] + view.select.options[:1])

    def select_next_tensor():
        view.select.value = next(names)
    return select_next_tensor


def _hook_monitor():
    view = HookMonitor(_mlp())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        view.run(et.randn(128, SIZES[0]))
    events = itertools.cycle(range(1, len(view.events)))  # never repeats the current value

    def next_event():
        view.slider.value = next(events)
    return next_event


def _prune_explorer():
    rng = np.random.default_rng(0)
    x = et.tensor(rng.standard_normal((256, SIZES[0])).astype(np.float32))
    y = et.tensor(rng.integers(0, SIZES[-1], size=256))
    view = PruneExplorer(_mlp(), data=(x, y))
    view.layer.value = "0.weight"
    amounts = itertools.cycle([0.05 * k for k in range(1, 20)] + [0.5])

    def move_amount_slider():
        view.model.refresh()  # forget cached previews: measure a fresh one every time
        view.amount.value = round(next(amounts), 2)
    return move_amount_slider


def scenarios():
    note = "784-256-128-10 MLP; one control change = recompute + redraw + PNG encode"
    return [
        {"name": "widget ParameterTree select tensor (784 MLP)",
         "contenders": {"edutorch": _parameter_tree(), "numpy": None, "torch": None},
         "limits": dict(LIMITS), "setup_note": note},
        {"name": "widget HookMonitor event slider step (784 MLP, batch 128)",
         "contenders": {"edutorch": _hook_monitor(), "numpy": None, "torch": None},
         "limits": dict(LIMITS), "setup_note": note},
        {"name": "widget PruneExplorer amount slider, fresh preview (784 MLP, eval 256)",
         "contenders": {"edutorch": _prune_explorer(), "numpy": None, "torch": None},
         "limits": dict(LIMITS), "setup_note": note},
    ]
