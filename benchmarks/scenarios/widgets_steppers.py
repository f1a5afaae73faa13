"""Widget latency of the two steppers: one control change → the new picture (PNG bytes).

Like ``widgets.py``: each repetition is one user action, including the model's
work, the redraw and the PNG encoding (not the transfer to the browser).
Limit: 100 ms median; no NumPy or torch contender.

- TrainingStepper, "next stage" on a 64-32-10 MLP over the shipped 8x8 digits
  (batch 32, Adam): cycles through zero_grad, forward, loss, backward, step
  (the step also redraws the loss/accuracy curves);
- TrainingStepper, change the learning rate slider between two steps;
- TrainingStepper, "next stage" as lesson 05 builds it (64-32-10, SGD with
  momentum, lr 0.05, 40 steps trained);
- BackwardStepper, the step slider on the lesson-sized MLP 64-32-10 with its
  cross-entropy loss (grouped by module, 14 nodes);
- BackwardStepper, the step slider on a 60-layer MLP + loss (241 nodes), all
  groups expanded: the tall graph is cropped around the current node;
- BackwardStepper, expanding a module group, or all of them, and collapsing
  again (each change re-lays out and redraws the whole graph: no cache), on
  the small MLP and on the 60-layer one.

A BackwardStepper keeps the pictures of the last steps it showed (and, in a
kernel, renders the neighbour steps ahead): every BackwardStepper row empties
that store before each move, so it times drawing a step, not showing a kept one.
"""
import itertools

import edutorch as et
import edutorch.nn as nn
from edutorch.datasets import load_digits
from widgets import BackwardStepper, TrainingStepper

LIMITS = {"torch": None, "numpy": None, "ms": 100}


def _digits_mlp(hidden=(32,)):
    et.manual_seed(0)
    sizes = (64,) + tuple(hidden) + (10,)
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def _training_stepper():
    view = TrainingStepper(_digits_mlp(), load_digits("train"), load_digits("test"),
                           optimizer="Adam", lr=0.01)
    for _ in range(10):  # every stage drawn once: its figure frames are cached
        view.next_button.click()
    return view


def _next_stage():
    view = _training_stepper()
    return lambda: view.next_button.click()


def _lesson05_next_stage():
    view = TrainingStepper(_digits_mlp(), load_digits("train"), load_digits("test"),
                           optimizer="SGD+momentum", lr=0.05)
    view.run(40)
    for _ in range(10):  # every stage drawn once
        view.next_button.click()
    return view.next_button.click


def _lr_slider():
    view = _training_stepper()
    values = itertools.cycle([0.001, 0.003, 0.01, 0.03])
    return lambda: setattr(view.lr, "value", next(values))


def _backward_stepper(hidden, expand):
    x, y = load_digits("train")
    view = BackwardStepper.for_model(_digits_mlp(hidden), x[:32], y[:32], nn.CrossEntropyLoss())
    view.expand.value = expand
    steps = itertools.cycle(range(1, view.slider.max + 1))
    for _ in range(view.slider.max):  # draw each step once (panel frames cached)
        view.slider.value = next(steps)
    return view, steps


def _step_slider(hidden, expand="(none)"):
    view, steps = _backward_stepper(hidden, expand)

    def move():
        view.rendered.clear()  # draw the step (see the module's doc)
        view.slider.value = next(steps)
    return move


def _expand_group(hidden):
    view, _ = _backward_stepper(hidden, "(none)")
    choices = itertools.cycle(["0", "2", "(all)", "(none)"])

    def expand():
        view.rendered.clear()
        view.expand.value = next(choices)
    return expand


def scenarios():
    note = "one control change = model work + redraw + PNG encode"
    cases = [
        ("widget TrainingStepper next stage (digits MLP 64-32-10, Adam, batch 32)", _next_stage()),
        ("widget TrainingStepper lr slider between steps (digits MLP)", _lr_slider()),
        ("widget TrainingStepper next stage (lesson 05: SGD+momentum)", _lesson05_next_stage()),
        ("widget BackwardStepper step slider (MLP 64-32-10 + loss, 14 nodes)", _step_slider((32,))),
        ("widget BackwardStepper step slider (60-layer MLP + loss, 241 nodes, expanded)",
         _step_slider((32,) * 59, "(all)")),
        ("widget BackwardStepper expand a module group (MLP 64-4x32-10)", _expand_group((32,) * 4)),
        ("widget BackwardStepper expand a module group (60-layer MLP, 241 nodes)",
         _expand_group((32,) * 59)),
    ]
    return [{"name": name, "contenders": {"edutorch": fn, "numpy": None, "torch": None},
             "limits": dict(LIMITS), "setup_note": note} for name, fn in cases]
