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

Big models (issue 10 §5), limit 500 ms a slider move and 1 s for the rest:

- PruneExplorer on two 4096x4096 Linear layers (33.6 M weights, 134 MB), no
  evaluation data: the amount slider cycles through 19 amounts, more than the
  preview cache holds (it keeps at most the model's weight bytes of bool
  masks, 16 MB each here), so every move computes a fresh L1 mask of 16.8 M
  weights; a method change (cycling through the four methods, caches emptied
  first); apply followed by undo (one repetition = both clicks).
- AutogradExplorer on a 1,977-node graph (25 chains of 26 mul/add/tanh
  steps, summed): building the widget (forward, graph walk, grouping,
  drawing, PNG) and expanding one of its collapsed groups.
"""
import itertools
import warnings

import numpy as np

import edutorch as et
import edutorch.nn as nn
from widgets import AutogradExplorer, HookMonitor, ParameterTree, PruneExplorer

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
        view.model._preview_cache.clear()  # forget cached previews: measure a fresh one every time
        view.forget_pictures()  # and the pictures the view keeps (refresh() would forget the curve)
        view.amount.value = round(next(amounts), 2)
    return move_amount_slider


def _big_linear_explorer():
    et.manual_seed(0)
    view = PruneExplorer(nn.Sequential(nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 4096)))
    view.layer.value = "0.weight"
    return view


def _big_prune_slider():
    view = _big_linear_explorer()
    amounts = itertools.cycle(round(0.05 * k, 2) for k in range(1, 20))

    def move_amount_slider():
        view.amount.value = next(amounts)
    return move_amount_slider


def _big_prune_method():
    view = _big_linear_explorer()
    view.amount.value = 0.3
    methods = itertools.cycle(["random_unstructured", "ln_structured", "random_structured",
                               "l1_unstructured"])

    def change_method():
        view.model.refresh()  # forget cached previews: a fresh one every time
        view.method.value = next(methods)
    return change_method


def _big_prune_apply_undo():
    view = _big_linear_explorer()
    view.amount.value = 0.3

    def apply_then_undo():
        view.apply_button.click()
        view.undo_button.click()
        assert view.action_error is None, view.action_error
    return apply_then_undo


def branches(x, count=25, steps=26):
    """A 1,977-node backward graph: ``count`` chains of ``steps`` (mul, add, tanh), summed."""
    total = x * 0
    for _ in range(count):
        h = x
        for _ in range(steps):
            h = (h * 1.01 + 0.01).tanh()
        total = total + h
    return total


def _big_graph_build():
    def build_and_draw():
        AutogradExplorer(et, functions={"1,977 nodes": branches})
    return build_and_draw


def _big_graph_expand():
    view = AutogradExplorer(et, functions={"1,977 nodes": branches})
    keys = [key for _, key in view.expand.options if key is not None]
    chosen = itertools.cycle(keys)

    def expand_a_group():
        view.collapse_button.click()
        view.expand.value = next(chosen)
    return expand_a_group


def scenarios():
    note = "784-256-128-10 MLP; one control change = recompute + redraw + PNG encode"
    big = "2 x Linear(4096, 4096), no evaluation data; recompute + redraw + PNG encode"
    graph = "1,977-node backward graph (25 chains of 26 mul/add/tanh), grouped into boxes"
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
        {"name": "widget PruneExplorer amount slider, fresh preview (2x4096² Linear)",
         "contenders": {"edutorch": _big_prune_slider(), "numpy": None, "torch": None},
         "limits": {**LIMITS, "ms": 500}, "setup_note": big},
        {"name": "widget PruneExplorer method change (2x4096² Linear)",
         "contenders": {"edutorch": _big_prune_method(), "numpy": None, "torch": None},
         "limits": {**LIMITS, "ms": 1000}, "setup_note": big},
        {"name": "widget PruneExplorer apply + undo (2x4096² Linear)",
         "contenders": {"edutorch": _big_prune_apply_undo(), "numpy": None, "torch": None},
         "limits": {**LIMITS, "ms": 2000}, "setup_note": big},
        {"name": "widget AutogradExplorer build + draw (1,977-node graph)",
         "contenders": {"edutorch": _big_graph_build(), "numpy": None, "torch": None},
         "limits": {**LIMITS, "ms": 1000}, "setup_note": graph},
        {"name": "widget AutogradExplorer expand a group (1,977-node graph)",
         "contenders": {"edutorch": _big_graph_expand(), "numpy": None, "torch": None},
         "limits": {**LIMITS, "ms": 1000}, "setup_note": graph},
    ]
