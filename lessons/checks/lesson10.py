"""Checks of lesson 10 · Reparametrizations (lessons/10-reparametrizations.ipynb)."""

import numpy as np

from ._common import (
    _correct,
    _hint,
    _is_tensor,
    _library,
    _values,
    exercise,
)


def _parametrize_of(lib):
    """``torch.nn.utils.parametrize`` or ``edutorch.nn.utils.parametrize``."""
    import importlib

    return importlib.import_module(lib.__name__ + ".nn.utils.parametrize")


@exercise
def exercise_10_1(positive_class):
    """``Positive``: ``forward`` maps any real tensor to a strictly positive one, ``right_inverse``
    undoes it, and it works as a parametrization of a Linear layer's weight."""
    if not isinstance(positive_class, type):
        return _hint("pass the class itself: checks.exercise_10_1(Positive)")
    lib = _library(positive_class)
    if not issubclass(positive_class, lib.nn.Module):
        return _hint("Positive must be an nn.Module subclass: class Positive(nn.Module)")
    p = positive_class()
    rng = np.random.default_rng(10)
    values = rng.normal(scale=3.0, size=(4, 3)).astype(np.float32)
    values[0, 0] = 0.0  # abs, relu and square give 0 here
    X = lib.tensor(values, requires_grad=True)
    Y = p(X)
    if not _is_tensor(Y):
        return _hint("forward must RETURN a tensor of X's shape (def forward(self, X): return ...)")
    if tuple(Y.shape) != tuple(X.shape):
        return _hint(f"forward(X) has shape {tuple(Y.shape)}, X has {tuple(X.shape)}: "
                     "map each entry, keep the shape")
    got = _values(Y)
    if not np.all(got > 0):
        at = tuple(int(i) for i in np.argwhere(~(got > 0))[0])
        return _hint(f"forward gives {got[at]:.3g} for the entry {values[at]:.3g}: every real "
                     "number must map to a number > 0 (exp or softplus do; abs, relu and x**2 "
                     "give 0 at 0)")
    if not Y.requires_grad:
        return _hint("forward's result does not require grad: no gradient would reach the "
                     "original. Build it from differentiable tensor ops (X.exp(), "
                     "nn.functional.softplus(X)), not NumPy")
    Y.sum().backward()
    if X.grad is None or not np.all(np.isfinite(_values(X.grad))) or np.allclose(_values(X.grad), 0):
        return _hint("no useful gradient reaches the original: build forward from "
                     "differentiable tensor ops (X.exp(), nn.functional.softplus(X))")
    if not callable(getattr(p, "right_inverse", None)):
        return _hint("add right_inverse(self, Y): without it, assigning layer.weight = ... fails "
                     "and registration keeps the old weight as the original")
    target = lib.tensor(rng.uniform(0.1, 3.0, size=(3, 4)).astype(np.float32))
    try:
        with lib.no_grad():
            back = _values(p(p.right_inverse(target)))
    except Exception as error:
        return _hint(f"forward(right_inverse(Y)) raised {type(error).__name__}: {error}")
    if back.shape != tuple(target.shape) or not np.allclose(back, _values(target), rtol=1e-4, atol=1e-6):
        return _hint("forward(right_inverse(Y)) must give Y back: right_inverse undoes forward "
                     "(log undoes exp)")
    layer = lib.nn.Linear(4, 3)
    with lib.no_grad():
        layer.weight.copy_(target)
    _parametrize_of(lib).register_parametrization(layer, "weight", positive_class())
    if not np.allclose(_values(layer.weight), _values(target), rtol=1e-4, atol=1e-6):
        return _hint("after registration the layer's weight changed: right_inverse must return "
                     "an original that forward maps back to the weight")
    layer.weight = target * 2
    if not np.allclose(_values(layer.weight), 2 * _values(target), rtol=1e-4, atol=1e-6):
        return _hint("assigning layer.weight = Y did not give Y back")
    x = lib.tensor(rng.normal(size=(16, 4)).astype(np.float32))
    optimizer = lib.optim.SGD(layer.parameters(), lr=0.5)
    for _ in range(20):  # a loss that pulls the weights towards 0 (and the originals below it)
        optimizer.zero_grad()
        layer(x).pow(2).mean().backward()
        optimizer.step()
    weight = _values(layer.weight)
    if not np.all(weight > 0):
        return _hint("after 20 training steps some weights are ≤ 0: forward must map EVERY real "
                     "number (the original can go anywhere) to a positive one")
    return _correct(f"after 20 SGD steps pulling the weights to 0: smallest weight {weight.min():.2g} "
                    f"> 0, smallest original {_values(layer.parametrizations.weight.original).min():.2g}")


@exercise
def exercise_10_2(layer, weight_by_hand):
    """``weight_by_hand`` = ``g * v / ‖v‖`` with one norm per output row (``dim=0``)."""
    lib = _library(layer)
    if not _parametrize_of(lib).is_parametrized(layer, "weight"):
        return _hint("pass the layer from the cell above and your tensor: "
                     "checks.exercise_10_2(wn_layer, weight_by_hand)")
    if weight_by_hand is None:
        return _hint("weight_by_hand is None: compute g * v / (the norm of each row of v)")
    g = _values(layer.parametrizations.weight.original0)
    v = _values(layer.parametrizations.weight.original1)
    expected = _values(layer.weight)
    got = _values(weight_by_hand)
    if got.shape != expected.shape:
        return _hint(f"weight_by_hand has shape {got.shape}, the weight {expected.shape}: "
                     "keep the norm's dimension (keepdim=True) so that it broadcasts over each row")
    grad_fn = getattr(weight_by_hand, "grad_fn", None)
    if grad_fn is not None and type(grad_fn).__name__.startswith("WeightNormInterface"):
        return _hint("that is wn_layer.weight itself: compute it from g and v")
    if np.allclose(got, expected, rtol=1e-5, atol=1e-6):
        return _correct("w = g · v / ‖v‖ row by row: each row of the weight has norm g "
                        f"({', '.join(f'{n:.3g}' for n in np.linalg.norm(expected, axis=1))})")
    if np.allclose(got, g * v / np.linalg.norm(v), rtol=1e-5, atol=1e-6):
        return _hint("you divided by the norm of the whole matrix: weight norm uses one norm per "
                     "output ROW (v.norm(dim=1, keepdim=True))")
    if np.allclose(got, g * v / np.linalg.norm(v, axis=0, keepdims=True), rtol=1e-5, atol=1e-6):
        return _hint("you divided by the norms of the columns (dim=0): use the norm of each row, "
                     "v.norm(dim=1, keepdim=True)")
    if np.allclose(got, v / np.linalg.norm(v, axis=1, keepdims=True), rtol=1e-5, atol=1e-6):
        return _hint("that is only the direction v / ‖v‖: multiply by the length g")
    if np.allclose(got, g * v, rtol=1e-5, atol=1e-6):
        return _hint("divide v by the norm of its row: g * v / v.norm(dim=1, keepdim=True)")
    return _hint("not the layer's weight: w = g * v / v.norm(dim=1, keepdim=True)")


@exercise
def exercise_10_3(model, predicted):
    """``predicted`` lists exactly the keys of ``model.state_dict()`` (any order)."""
    if not hasattr(model, "state_dict"):
        return _hint("pass the model and your list: checks.exercise_10_3(model_10_3, keys_10_3)")
    if not isinstance(predicted, (list, tuple, set)) or not predicted:
        return _hint("keys_10_3 is empty: write the keys you expect, e.g. \"0.bias\", ...")
    if not all(isinstance(k, str) for k in predicted):
        return _hint("each key is a string such as \"0.bias\"")
    expected = list(model.state_dict().keys())
    got = set(predicted)
    missing = [k for k in expected if k not in got]
    extra = sorted(got - set(expected))
    if len(got) != len(predicted):
        return _hint("a key appears twice in your list")
    if any(k.endswith(".weight") for k in extra):
        return _hint(f"{[k for k in extra if k.endswith('.weight')]}: a reparametrized weight is "
                     "COMPUTED (by a pre-hook or a property), never saved; what is saved are its "
                     "originals (weight_orig, parametrizations.weight.original...)")
    if {"1.weight_g", "1.weight_v"} & got:
        return _hint("1.weight_g/1.weight_v are the keys of the OLD weight_norm; the new form saves "
                     "parametrizations.weight.original0 (g) and original1 (v)")
    if {"2.weight_orig", "2.weight_u", "2.weight_v"} & got:
        return _hint("2.weight_orig/2.weight_u/2.weight_v are the keys of the OLD spectral_norm "
                     "(layer 0's form); layer 2's new form saves parametrizations.weight.original "
                     "and the buffers _u and _v of the module parametrizations.weight.0")
    if any(k.endswith(("_u", "_v")) for k in missing):
        return _hint(f"missing {[k for k in missing if k.endswith(('_u', '_v'))]}: the power-"
                     "iteration vectors of spectral norm are (persistent) buffers, saved too — "
                     "in the new form they belong to the module parametrizations.weight.0")
    if any(k.endswith("bias") for k in missing):
        return _hint("the biases are not reparametrized: each layer still saves its bias")
    if missing or extra:
        return _hint(f"missing {missing[:3]}, not in state_dict {extra[:3]}: print "
                     "model_10_3.state_dict().keys() and compare with your reasoning")
    return _correct(f"all {len(expected)} keys: originals and buffers are saved, derived weights never")


@exercise
def exercise_10_4(deep):
    """20 ``Linear(8, 8, bias=False)`` with orthogonal weights: ``‖deep(x)‖ = ‖x‖``."""
    if not hasattr(deep, "named_modules"):
        return _hint("deep must be an nn.Sequential of 20 orthogonal nn.Linear(8, 8, bias=False)")
    lib = _library(deep)
    layers = [m for m in deep.modules() if isinstance(m, lib.nn.Linear)]
    if len(layers) < 20:
        return _hint(f"deep has {len(layers)} Linear layers: build 20 (a list comprehension in "
                     "nn.Sequential(*...))")
    if any(m.bias is not None for m in layers):
        return _hint("a bias shifts every output and breaks ‖W x‖ = ‖x‖: nn.Linear(8, 8, bias=False)")
    if any(tuple(m.weight.shape) != (8, 8) for m in layers):
        return _hint("every layer maps 8 features to 8: nn.Linear(8, 8, bias=False)")
    plain = [i for i, m in enumerate(layers)
             if not _parametrize_of(lib).is_parametrized(m, "weight")]
    if plain:
        return _hint(f"layers {plain[:3]} have a plain weight: wrap each one with "
                     "nn.utils.parametrizations.orthogonal(...) so that it stays orthogonal while training")
    for i, m in enumerate(layers):
        w = _values(m.weight)
        if not np.allclose(w.T @ w, np.eye(8), atol=1e-4):
            return _hint(f"the weight of layer {i} is not orthogonal: use "
                         "nn.utils.parametrizations.orthogonal")
    rng = np.random.default_rng(4)
    x = lib.tensor(rng.normal(size=(5, 8)).astype(np.float32))
    out = deep(x)
    ratio = np.linalg.norm(_values(out), axis=1) / np.linalg.norm(_values(x), axis=1)
    if not np.allclose(ratio, 1.0, atol=1e-3):
        return _hint(f"‖deep(x)‖ / ‖x‖ = {ratio.min():.3g}..{ratio.max():.3g}, not 1: only the "
                     "orthogonal Linear layers may be in deep (no activation, no bias)")
    out.sum().backward()
    originals = [m.parametrizations.weight.original for m in layers]
    if any(o.grad is None for o in originals):
        return _hint("the gradient does not reach every layer's original")
    # the bound checked, not the error itself: float32 rounding depends on the CPU's BLAS kernels
    return _correct(f"{len(layers)} orthogonal layers: ‖deep(x)‖ / ‖x‖ = 1 (to within 1e-3)")


@exercise
def exercise_10_5(layer, w_before):
    """``layer`` is a plain ``Linear`` again whose ``weight`` parameter is ``w_before``."""
    lib = _library(layer)
    if not isinstance(layer, lib.nn.Linear):
        return _hint("pass the layer and its weight before: checks.exercise_10_5(orth5, w_before)")
    if _parametrize_of(lib).is_parametrized(layer):
        return _hint("orth5 is still parametrized: call parametrize.remove_parametrizations("
                     "orth5, \"weight\", leave_parametrized=...)")
    if type(layer) is not lib.nn.Linear:
        return _hint(f"orth5 is a {type(layer).__name__}: remove the parametrization (do not "
                     "build a new class)")
    if sorted(layer.state_dict().keys()) != ["bias", "weight"]:
        return _hint(f"state_dict has {sorted(layer.state_dict().keys())}: expected bias and weight")
    if not isinstance(layer.weight, lib.nn.Parameter):
        return _hint("weight is not an nn.Parameter any more")
    w = _values(layer.weight)
    eye = np.eye(w.shape[0])
    if np.allclose(w, -eye) or not np.allclose(w.T @ w, eye, atol=1e-4):
        return _hint("the weight is not the orthogonal matrix but the stored ORIGINAL "
                     "(leave_parametrized=False keeps that); keep the derived value: "
                     "leave_parametrized=True")
    if not np.allclose(w, _values(w_before), atol=1e-6):
        return _hint("the weight is not the one the parametrization computed: "
                     "leave_parametrized=True keeps it")
    return _correct("a plain nn.Linear whose weight is the trained orthogonal matrix "
                    f"(WᵀW = I: {np.allclose(w.T @ w, np.eye(w.shape[0]), atol=1e-5)})")
