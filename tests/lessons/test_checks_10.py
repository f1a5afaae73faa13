"""Lesson 10's checks (reparametrizations): right answers pass, typical mistakes get their hint,
with edutorch objects and with real PyTorch objects."""
import importlib
import warnings

import numpy as np

import checks
from check_helpers import assert_hint, assert_ok
from checks.catalogue.lesson10 import _orth5 as orth5
import edutorch as et


def parametrize_of(lib):
    return importlib.import_module(lib.__name__ + ".nn.utils.parametrize")


# --- 10.1: a positive parametrization ---------------------------------------------------------


def positive_classes(lib):
    nn = lib.nn

    class Exp(nn.Module):
        def forward(self, X):
            return X.exp()

        def right_inverse(self, Y):
            return Y.log()

    class Softplus(nn.Module):
        def forward(self, X):
            return nn.functional.softplus(X)

        def right_inverse(self, Y):
            return (Y.exp() - 1).log()  # softplus(log(e^y - 1)) = y

    class Abs(nn.Module):
        def forward(self, X):
            return X.abs()

        def right_inverse(self, Y):
            return Y

    class NoInverse(nn.Module):
        def forward(self, X):
            return X.exp()

    class WrongInverse(nn.Module):
        def forward(self, X):
            return X.exp()

        def right_inverse(self, Y):
            return Y

    class Blank(nn.Module):
        pass

    class Empty(nn.Module):
        def forward(self, X):
            pass

    class Detached(nn.Module):
        def forward(self, X):
            return lib.tensor(np.exp(X.detach().numpy()))

        def right_inverse(self, Y):
            return Y.log()

    return Exp, Softplus, Abs, NoInverse, WrongInverse, Blank, Empty, Detached


def test_10_1_right_answers(lib):
    Exp, Softplus, *_ = positive_classes(lib)
    assert_ok(checks.exercise_10_1.check(Exp))
    assert_ok(checks.exercise_10_1.check(Softplus))


def test_10_1_hints(lib):
    _, _, Abs, NoInverse, WrongInverse, Blank, Empty, Detached = positive_classes(lib)
    assert_hint(checks.exercise_10_1.check(Abs), "> 0", "abs")
    assert_hint(checks.exercise_10_1.check(NoInverse), "right_inverse")
    assert_hint(checks.exercise_10_1.check(WrongInverse), "give Y back")
    assert_hint(checks.exercise_10_1.check(Empty), "RETURN a tensor")
    assert_hint(checks.exercise_10_1.check(Detached), "gradient")
    assert not checks.exercise_10_1.check(Blank).ok  # nbgrader's blank answer: a hint, no crash
    assert_hint(checks.exercise_10_1.check(None), "class itself")
    assert_hint(checks.exercise_10_1.check(int), "nn.Module")


# --- 10.2: weight normalization by hand -------------------------------------------------------


def wn_layer(lib):
    lib.manual_seed(1)
    layer = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(4, 3))
    g = layer.parametrizations.weight.original0
    with lib.no_grad():
        g.copy_(lib.tensor([[1.0], [2.0], [3.0]]))
    return layer, g, layer.parametrizations.weight.original1


def test_10_2_right_answer(lib):
    layer, g, v = wn_layer(lib)
    assert_ok(checks.exercise_10_2.check(layer, g * v / v.norm(dim=1, keepdim=True)))
    with lib.no_grad():
        assert_ok(checks.exercise_10_2.check(layer, g * (v / (v * v).sum(1, keepdim=True).sqrt())))


def test_10_2_hints(lib):
    layer, g, v = wn_layer(lib)
    assert_hint(checks.exercise_10_2.check(layer, g * v / v.norm()), "whole matrix")
    assert_hint(checks.exercise_10_2.check(layer, g * v / v.norm(dim=0, keepdim=True)), "columns")
    assert_hint(checks.exercise_10_2.check(layer, v / v.norm(dim=1, keepdim=True)), "length g")
    assert_hint(checks.exercise_10_2.check(layer, g * v), "divide v")
    assert_hint(checks.exercise_10_2.check(layer, v[0]), "keepdim")  # a wrong shape
    assert_hint(checks.exercise_10_2.check(layer, layer.weight), "itself")
    assert_hint(checks.exercise_10_2.check(layer, None), "None")
    assert_hint(checks.exercise_10_2.check(lib.nn.Linear(4, 3), None), "pass the layer")


# --- 10.3: the state_dict keys ---------------------------------------------------------------


def model_10_3(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 2))
    nn.utils.spectral_norm(model[0])
    nn.utils.parametrizations.weight_norm(model[1])
    nn.utils.parametrizations.spectral_norm(model[2])
    return model


RIGHT_KEYS = [
    "0.bias", "0.weight_orig", "0.weight_u", "0.weight_v",
    "1.bias", "1.parametrizations.weight.original0", "1.parametrizations.weight.original1",
    "2.bias", "2.parametrizations.weight.original",
    "2.parametrizations.weight.0._u", "2.parametrizations.weight.0._v",
]


def test_10_3_right_answer_in_any_order(lib):
    model = model_10_3(lib)
    assert_ok(checks.exercise_10_3.check(model, RIGHT_KEYS))
    assert_ok(checks.exercise_10_3.check(model, list(reversed(RIGHT_KEYS))))
    assert_ok(checks.exercise_10_3.check(model, list(model.state_dict())))


def test_10_3_hints(lib):
    model = model_10_3(lib)
    assert_hint(checks.exercise_10_3.check(model, []), "empty")
    assert_hint(checks.exercise_10_3.check(model, RIGHT_KEYS + ["1.weight"]), "COMPUTED")
    old_names = [k for k in RIGHT_KEYS if "original0" not in k and "original1" not in k]
    assert_hint(checks.exercise_10_3.check(model, old_names + ["1.weight_g", "1.weight_v"]), "OLD")
    no_vectors = [k for k in RIGHT_KEYS if not k.endswith(("_u", "_v"))]
    assert_hint(checks.exercise_10_3.check(model, no_vectors), "buffers")
    no_bias = [k for k in RIGHT_KEYS if not k.endswith("bias")]
    assert_hint(checks.exercise_10_3.check(model, no_bias), "bias")
    assert_hint(checks.exercise_10_3.check(model, RIGHT_KEYS + ["0.bias"]), "twice")
    assert_hint(checks.exercise_10_3.check(model, [k for k in RIGHT_KEYS if k != "2.parametrizations.weight.original"]),
                "missing")
    assert_hint(checks.exercise_10_3.check(model, [1, 2]), "string")
    assert_hint(checks.exercise_10_3.check(None, RIGHT_KEYS), "pass the model")


# --- 10.4: a deep orthogonal network ------------------------------------------------------------


def deep(lib, n=20, orthogonal=True, bias=False):
    lib.manual_seed(0)
    nn = lib.nn
    layers = [nn.Linear(8, 8, bias=bias) for _ in range(n)]
    if orthogonal:
        layers = [nn.utils.parametrizations.orthogonal(m) for m in layers]
    return nn.Sequential(*layers)


def test_10_4_right_answers(lib):
    assert_ok(checks.exercise_10_4.check(deep(lib)))
    model = deep(lib, orthogonal=False)  # orthogonal() applied afterwards, with another map
    for m in model:
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map="cayley")
    assert_ok(checks.exercise_10_4.check(model))


def test_10_4_hints(lib):
    assert_hint(checks.exercise_10_4.check(deep(lib, n=5)), "20")
    assert_hint(checks.exercise_10_4.check(deep(lib, bias=True)), "bias=False")
    assert_hint(checks.exercise_10_4.check(deep(lib, orthogonal=False)), "plain weight")
    with_tanh = lib.nn.Sequential(*(lib.nn.Sequential(m, lib.nn.Tanh()) for m in deep(lib)))
    assert_hint(checks.exercise_10_4.check(with_tanh), "not 1")
    model = deep(lib, orthogonal=False)
    for m in model:  # parametrized, but not orthogonal
        parametrize_of(lib).register_parametrization(m, "weight", lib.nn.Identity())
    assert_hint(checks.exercise_10_4.check(model), "not orthogonal")
    assert_hint(checks.exercise_10_4.check(None), "Sequential")


# --- 10.5: remove the parametrization, keep the weight ---------------------------------------


def test_10_5_right_answer(lib):
    layer, w = orth5(lib)
    parametrize_of(lib).remove_parametrizations(layer, "weight")  # leave_parametrized=True default
    assert_ok(checks.exercise_10_5.check(layer, w))


def test_10_5_hints(lib):
    layer, w = orth5(lib)
    assert_hint(checks.exercise_10_5.check(layer, w), "still parametrized")
    parametrize_of(lib).remove_parametrizations(layer, "weight", leave_parametrized=False)
    assert_hint(checks.exercise_10_5.check(layer, w), "ORIGINAL", "leave_parametrized=True")
    untrained = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(5, 5))
    parametrize_of(lib).remove_parametrizations(untrained, "weight", leave_parametrized=False)
    assert_hint(checks.exercise_10_5.check(untrained, w), "ORIGINAL")  # -I: orthogonal, but stored
    other = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(5, 5))
    parametrize_of(lib).remove_parametrizations(other, "weight")
    assert_hint(checks.exercise_10_5.check(other, w), "not the one")
    assert_hint(checks.exercise_10_5.check(None, w), "pass the layer")


def test_the_old_forms_warn_as_in_torch_2_13():
    """The lesson says: old weight_norm warns (FutureWarning), old spectral_norm does not."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        et.nn.utils.weight_norm(et.nn.Linear(2, 2))
        et.nn.utils.spectral_norm(et.nn.Linear(2, 2))
    assert [w.category for w in caught] == [FutureWarning]
