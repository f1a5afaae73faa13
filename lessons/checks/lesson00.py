"""Checks of lesson 00 · The template of a new lesson (lessons/_template.ipynb).

`./dev new-lesson NN-topic` copies this module to ``lessonNN.py``, renamed to
exercise_N_1 / exercise_N_2: replace the two checks with your lesson's own (keep the
pattern: recompute the right answer from the API, name the likely mistake in the hint).
"""

import numpy as np

import edutorch

from ._common import (
    _correct,
    _hint,
    _library,
    _values,
    exercise,
)


@exercise
def exercise_0_1(layer):
    """An ``nn.Linear`` from 4 inputs to 2 outputs whose bias is all zeros."""
    lib = _library(layer)
    if not isinstance(layer, lib.nn.Linear):
        return _hint(f"layer is a {type(layer).__name__}; build it with nn.Linear(4, 2)")
    if (layer.in_features, layer.out_features) != (4, 2):
        return _hint(f"layer maps {layer.in_features} → {layer.out_features} features; "
                     "nn.Linear(in_features, out_features) takes the inputs first: 4, then 2")
    if layer.bias is None:
        return _hint("the layer has no bias (bias=False): keep the bias and set it to zero")
    if np.any(_values(layer.bias) != 0):
        return _hint("the bias is not zero yet: nn.init.zeros_(layer.bias), or layer.bias.zero_() "
                     "inside torch.no_grad()")
    return _correct("a 4 → 2 Linear layer with a zero bias")


@exercise
def exercise_0_2(count):
    """The number of trainable numbers of ``exercise_0_2_model()``."""
    model = exercise_0_2_model()
    expected = sum(p.numel() for p in model.parameters() if p.requires_grad)
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)):
        return _hint("pass a whole number, e.g. the sum of p.numel() over model.parameters()")
    if count == expected:
        return _correct(f"{expected} trainable numbers")
    weights = sum(p.numel() for name, p in model.named_parameters() if name.endswith("weight"))
    if count == weights:
        return _hint("you counted the weights only: the biases are parameters too")
    return _hint(f"{count} is not it: add p.numel() for every p in model.parameters()")


def exercise_0_2_model():
    """The model whose parameters exercise 0.2 counts."""
    nn = edutorch.nn
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
