"""Widget latency of GradientInspector and TrainEvalExplorer: one control change each.

Same rules as ``widgets.py``: each repetition is one user action on a
lesson-sized model (the 784-256-128-10 MLP of the lessons; for the train/eval
explorer with a BatchNorm1d and a Dropout after the first layer), including the
model's recomputation, the redraw and the PNG encoding. Limit: 100 ms median.

- GradientInspector, batch 64: move the ``max_norm`` slider (``clip_grad_norm_``
  on copies of the six gradients, bars, caption, table); move ``clip_value``;
  press "step" (``optimizer.step()``, forward + backward on the next batch, the
  histograms, bars and timeline redrawn);
- TrainEvalExplorer, x of 32 samples, batches of 64: "run again" (the same x
  in train and eval mode, every module's call recorded, the Dropout picture
  with its 8192 units redrawn); "next batch" (one batch in train mode, the
  running statistics, both pictures); the step slider (BatchNorm pictures at
  an earlier step).
- TrainEvalExplorer as lesson 06 builds it (digits MLP 64-32-10 with a
  BatchNorm1d, a noisy ReLU of the user's and a Dropout; x of 12 digits,
  a shuffling DataLoader of 64 with its own generator), five batches fed:
  "run again" and "next batch" with nothing prepared (a click that comes before
  the controls rested 0.3 s), and what the explorer computes and draws while
  they rest: the next run and the next batch (a click then shows those
  pictures: ~1 ms, see benchmarks/README.md).
"""
import itertools

import numpy as np

import edutorch as et
import edutorch.nn as nn
from edutorch.datasets import load_digits
from edutorch.utils.data import DataLoader, TensorDataset
from widgets import GradientInspector, TrainEvalExplorer

SIZES = (784, 256, 128, 10)
LIMITS = {"torch": None, "numpy": None, "ms": 100}


def _mlp():
    et.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def _modal_mlp():
    et.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.5),
                         nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))


def _batch(n, seed):
    rng = np.random.default_rng(seed)
    return (et.tensor(rng.standard_normal((n, SIZES[0])).astype(np.float32)),
            et.tensor(rng.integers(0, SIZES[-1], size=n)))


def _inspector():
    return GradientInspector(_mlp(), [_batch(64, seed) for seed in range(4)], lr=0.01)


def _slider(name, exponents):
    """A GradientInspector slider cycling through ``10 ** exponents``, each position drawn
    (the pictures the inspector keeps are forgotten first)."""
    view, values = _inspector(), itertools.cycle(10.0 ** np.array(exponents))

    def move():
        view.forget_pictures()
        getattr(view, name).value = float(next(values))
    return move


def _max_norm_slider():
    return _slider("max_norm", [-2, -1.5, -1, -0.5, 0, 0.5])


def _clip_value_slider():
    return _slider("clip_value", [-4, -3.5, -3, -2.5, -2, -1.5])


def _step_button():
    view = _inspector()
    return view.step_button.click


def _explorer():
    x, _ = _batch(32, 10)
    return TrainEvalExplorer(_modal_mlp(), x, batches=[_batch(64, seed)[0] for seed in range(4)])


def _run_again():
    view = _explorer()
    view.module.value = "3"  # the Dropout: its mask and scatter are the biggest pictures
    return view.again_button.click


def _next_batch():
    view = _explorer()
    view.module.value = "1"  # the BatchNorm1d
    return view.next_button.click


def _step_slider():
    view = _explorer()
    view.module.value = "1"
    view.next_batch(10)
    steps = itertools.cycle(range(10))

    def move():
        view.step.value = next(steps)
    return move


class _NoisyReLU(nn.Module):
    """Lesson 06's module of the user's: ReLU with a little noise in training only."""

    def forward(self, x):
        if self.training:
            x = x + 0.1 * et.randn(x.shape)
        return x.relu()


def _lesson06_explorer():
    et.manual_seed(0)
    x_train, y_train = load_digits("train")
    model = nn.Sequential(nn.Linear(64, 32), nn.BatchNorm1d(32), _NoisyReLU(), nn.Dropout(p=0.25),
                          nn.Linear(32, 10))
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True,
                        generator=et.Generator().manual_seed(0))
    view = TrainEvalExplorer(model, x_train[:12], batches=loader)
    view.next_batch(5)
    view.module.value = "1"  # the BatchNorm1d, as the lesson leaves it
    return view


def _lesson06_run_again():
    return _lesson06_explorer().again_button.click


def _lesson06_next_batch():
    return _lesson06_explorer().next_button.click


def _lesson06_prepare():
    view = _lesson06_explorer()

    def prepare():
        model = view.model  # forget what was prepared and drawn: prepare afresh
        model._ahead = model._batch_ahead = None
        view.kept_outputs.clear()
        view.kept_details.clear()
        view._prepare_again()
        view._prepare_next_batch()
    return prepare


def scenarios():
    note = "784-256-128-10 MLP; one control change = recompute + redraw + PNG encode"
    cases = [
        ("widget GradientInspector max_norm slider (784 MLP)", _max_norm_slider),
        ("widget GradientInspector clip_value slider (784 MLP)", _clip_value_slider),
        ("widget GradientInspector step button (784 MLP, batch 64)", _step_button),
        ("widget TrainEvalExplorer run again (784 BN+Dropout MLP)", _run_again),
        ("widget TrainEvalExplorer next batch (784 BN+Dropout MLP)", _next_batch),
        ("widget TrainEvalExplorer step slider (784 BN+Dropout MLP)", _step_slider),
        ("widget TrainEvalExplorer run again, nothing prepared (lesson 06)", _lesson06_run_again),
        ("widget TrainEvalExplorer next batch, nothing prepared (lesson 06)",
         _lesson06_next_batch),
        ("widget TrainEvalExplorer preparing the next run and batch (lesson 06)",
         _lesson06_prepare),
    ]
    return [{"name": name, "contenders": {"edutorch": build(), "numpy": None, "torch": None},
             "limits": dict(LIMITS), "setup_note": note} for name, build in cases]
