"""Checks of lesson 04 · Pruning (lessons/04-pruning.ipynb)."""

import math

import numpy as np

import edutorch

from ._common import (
    _correct,
    _hint,
    _library,
    _linear_layers,
    _values,
    exercise,
)


def _prune(net=None):
    """The ``prune`` module of the library ``net`` comes from (edutorch's by default)."""
    lib = _library(net) if net is not None else edutorch
    import importlib

    return importlib.import_module(lib.__name__ + ".nn.utils.prune")


def _sparsity(tensor):
    values = _values(tensor)
    return float(np.count_nonzero(values == 0) / values.size)


@exercise
def exercise_4_1(layer):
    """Half of ``layer``'s rows, those of smallest L2 norm, pruned by ``ln_structured``."""
    if not hasattr(layer, "weight_mask") or not hasattr(layer, "weight_orig"):
        return _hint("layer.weight is not pruned yet: call a function of the prune module on it")
    mask = _values(layer.weight_mask)
    rows_pruned = np.all(mask == 0, axis=1)
    rows_kept = np.all(mask == 1, axis=1)
    if not np.all(rows_pruned | rows_kept):
        return _hint("some rows are only partly pruned: use a STRUCTURED method along dim=0")
    n_rows = mask.shape[0]
    if rows_pruned.sum() != round(0.5 * n_rows):
        return _hint(f"{rows_pruned.sum()} of {n_rows} rows are pruned; prune half (amount=0.5)")
    norms = np.linalg.norm(_values(layer.weight_orig), axis=1)
    smallest = np.argsort(norms, kind="stable")[: round(0.5 * n_rows)]
    if not np.all(rows_pruned[smallest]):
        if np.array_equal(np.sort(np.argsort(np.abs(_values(layer.weight_orig)).sum(1))[: len(smallest)]),
                          np.flatnonzero(rows_pruned)):
            return _hint("these are the rows of smallest L1 norm: use n=2 for the L2 norm")
        return _hint("the pruned rows are not those of smallest L2 norm: ln_structured(..., n=2, dim=0)")
    return _correct(f"{len(smallest)} rows of smallest L2 norm pruned; the other rows untouched")


@exercise
def exercise_4_2(sparsity):
    """The sparsity after l1 0.5, then l1 0.4, then random 0.2 (each of what is left)."""
    prune = _prune()
    layer = edutorch.nn.Linear(40, 25)
    prune.l1_unstructured(layer, "weight", amount=0.5)
    prune.l1_unstructured(layer, "weight", amount=0.4)
    prune.random_unstructured(layer, "weight", amount=0.2)
    expected = _sparsity(layer.weight_mask)
    try:
        value = float(sparsity)
    except (TypeError, ValueError):
        return _hint("pass a number between 0 and 1")
    if not 0 <= value <= 1:
        return _hint(f"{value} is not a fraction: sparsity is between 0 and 1. The amounts do not "
                     "add up: the second method prunes 40 % of the REMAINING weights")
    if math.isclose(value, expected, abs_tol=1e-3):
        return _correct(f"sparsity {expected:.2f}: each amount is a fraction of what is still unpruned")
    if math.isclose(value, 0.5 + 0.4 + 0.2, abs_tol=1e-3) or math.isclose(value, 1.0, abs_tol=1e-3):
        return _hint("the amounts do not add up: the second method prunes 40 % of the REMAINING weights")
    return _hint("after the first step 50 % remain; the second prunes 40 % of those, the third 20 % "
                 "of what is left then")


@exercise
def exercise_4_3(net):
    """70 % of all Linear weights of ``net`` pruned together by L1 magnitude."""
    layers = [m for _, m in _linear_layers(net)]
    if not layers:
        return _hint("net has no nn.Linear layers: pass the network you pruned")
    unpruned = [i for i, m in enumerate(layers) if not hasattr(m, "weight_mask")]
    if unpruned:
        return _hint("every Linear layer's weight must be pruned: pass all (module, 'weight') pairs")
    masks = [_values(m.weight_mask) for m in layers]
    total = sum(m.size for m in masks)
    zeros = sum(int(np.count_nonzero(m == 0)) for m in masks)
    per_layer = [float(np.mean(m == 0)) for m in masks]
    # per-layer pruning first: its total can be off by one from round(0.7 * total)
    if len(masks) > 1 and all(np.count_nonzero(m == 0) == round(0.7 * m.size) for m in masks):
        return _hint("every layer is 70 % sparse: that is per-layer pruning. Use "
                     "prune.global_unstructured with pruning_method=prune.L1Unstructured")
    if zeros != round(0.7 * total):
        return _hint(f"{zeros} of the {total} weights are pruned ({zeros / total:.1%}); "
                     f"70 % of the network is {round(0.7 * total)}")
    magnitudes = np.concatenate([np.abs(_values(m.weight_orig)).ravel() for m in layers])
    kept = np.concatenate([m.ravel() for m in masks]) == 1
    if magnitudes[~kept].max() > magnitudes[kept].min():
        return _hint("some pruned weights are larger than some kept weights: prune by L1 magnitude")
    return _correct("70 % of the network pruned; layer sparsities "
                    + ", ".join(f"{s:.0%}" for s in per_layer))


@exercise
def exercise_4_4(net):
    """Pruning of ``net`` made permanent in every layer."""
    prune = _prune(net)
    keys = list(net.state_dict())
    leftovers = [k for k in keys if k.endswith("_orig") or k.endswith("_mask")]
    if leftovers:
        return _hint(f"still reparametrised: {leftovers}. Call prune.remove(module, 'weight') "
                     "on each pruned layer")
    if prune.is_pruned(net) or any(len(m._forward_pre_hooks) for m in net.modules()):
        return _hint("a pruning forward pre-hook is still registered")
    lib = _library(net)
    layers = [m for _, m in _linear_layers(net)]
    if not layers:
        return _hint("net has no nn.Linear layers: pass the network from exercise 4.3")
    if not all(isinstance(m.weight, lib.nn.Parameter) for m in layers):
        return _hint("each weight must be a Parameter again")
    overall = sum(int(np.count_nonzero(_values(m.weight) == 0)) for m in layers) / sum(
        m.weight.numel() for m in layers)
    if overall < 0.5:
        return _hint("the zeros are gone: prune.remove keeps the pruned values, do not re-create the layers")
    return _correct(f"plain Parameters again, {overall:.0%} of the weights are zero, no hooks left")
