"""Lesson 08's widget: ``ParameterTree`` showing every weight's distribution.

The model is the lesson's deep ReLU network (64 inputs, ten hidden Linear(., 128) + ReLU,
Linear(128, 10): eleven weights). One repetition = ``view.refresh()`` with
*show: weight distributions*: re-read the module, histogram every weight on one shared
range, redraw the eleven histograms and bound lines on the cached frame, encode the PNG
(what the *refresh* button costs after a training step or an ``apply``); and the toggle
between *selected tensor* and *weight distributions*, both ways. Limit: 100 ms a control.
"""
import edutorch as et
import edutorch.nn as nn
from widgets import ParameterTree

LIMITS = {"torch": None, "numpy": None, "ms": 100}


def _deep_relu(depth=10, width=128):
    et.manual_seed(0)
    layers, size = [], 64
    for _ in range(depth):
        layers += [nn.Linear(size, width), nn.ReLU()]
        size = width
    return nn.Sequential(*layers, nn.Linear(size, 10))


def _view():
    view = ParameterTree(_deep_relu())
    view.show.value = "distributions"
    return view


def _refresh():
    view = _view()
    return view.refresh


def _toggle():
    view = _view()

    def toggle_both_ways():
        view.show.value = "tensor"
        view.show.value = "distributions"
    return toggle_both_ways


def scenarios():
    note = "lesson 08's deep ReLU MLP (11 weights); recompute + redraw + PNG encode"
    return [
        {"name": "widget ParameterTree weight distributions refresh (deep ReLU, 11 weights)",
         "contenders": {"edutorch": _refresh(), "numpy": None, "torch": None},
         "limits": dict(LIMITS), "setup_note": note},
        {"name": "widget ParameterTree toggle tensor <-> distributions, 2 redraws (deep ReLU)",
         "contenders": {"edutorch": _toggle(), "numpy": None, "torch": None},
         "limits": {**LIMITS, "ms": 200}, "setup_note": note},
    ]
