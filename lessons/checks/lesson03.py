"""Checks of lesson 03 · Hooks (lessons/03-hooks.ipynb).
"""
from __future__ import annotations

import warnings

import numpy as np

import edutorch

from ._common import (
    _correct,
    _hint,
    _is_tensor,
    _library,
    _linear_layers,
    _values,
    exercise,
)


def record_hook_order(model, x):
    """``"<name> <kind>"`` for every hook call of one forward+backward pass of ``model``.

    Hooks of all four kinds go on every child of ``model``; they are removed afterwards.
    """
    events, handles = [], []
    for name, module in model.named_children():
        handles += [
            module.register_forward_pre_hook(lambda m, args, n=name: events.append(f"{n} forward_pre")),
            module.register_forward_hook(lambda m, args, out, n=name: events.append(f"{n} forward")),
            module.register_full_backward_pre_hook(
                lambda m, grad_out, n=name: events.append(f"{n} backward_pre")),
            module.register_full_backward_hook(
                lambda m, grad_in, grad_out, n=name: events.append(f"{n} backward")),
        ]
    try:
        with warnings.catch_warnings():  # x needs no grad: module 0's hook sees grad_output only
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return events


@exercise
def exercise_3_1(order):
    """The hook calls of ``Sequential(Linear, Tanh)`` for one forward and backward pass."""
    nn = edutorch.nn
    expected = record_hook_order(nn.Sequential(nn.Linear(3, 2), nn.Tanh()), edutorch.randn(4, 3))
    if isinstance(order, str) or not isinstance(order, (list, tuple)):
        return _hint("pass a list of strings such as ['0 forward_pre', ...]")
    if not order:
        return _hint("the list is empty: write one '<module name> <hook kind>' string per hook call")
    order = [" ".join(str(item).split()) for item in order]
    if order == expected:
        return _correct(f"{len(expected)} calls: forward first to last, backward last to first")
    if sorted(order) == sorted(expected):
        if order[:4] != expected[:4]:
            return _hint("forward: each layer runs pre-hook, forward, forward hook before the next layer starts")
        return _hint("backward goes from the LAST layer to the first, and a layer's backward_pre "
                     "fires before its backward hook")
    return _hint(f"expected {len(expected)} calls, two hooks per layer in each direction; "
                 f"names are the child names '0' and '1'")


@exercise
def exercise_3_2(net, inputs, activations):
    """``activations`` maps each ``nn.Linear``'s name to its output; no hook is left behind."""
    lib = _library(net)
    linear_names = [name for name, _ in _linear_layers(net)]
    if not isinstance(activations, dict) or not activations:
        return _hint("activations is empty: did the hooks run? Call net(inputs) after registering them")
    if sorted(activations) != sorted(linear_names):
        return _hint(f"activations has keys {sorted(activations)}; expected the Linear layers "
                     f"{linear_names} (names from named_modules())")
    leftover = [name for name, m in net.named_modules() if m._forward_hooks]
    if leftover:
        return _hint(f"hooks are still registered on {leftover}: call handle.remove() on each handle")
    expected, h = {}, inputs
    with lib.no_grad():
        for name, module in net.named_children():
            h = module(h)
            if name in linear_names:
                expected[name] = _values(h)
    for name in linear_names:
        got = activations[name]
        if _is_tensor(got) and got.requires_grad:
            return _hint(f"activations[{name!r}] is still part of the graph: store output.detach()")
        got = _values(got)
        if got.shape != expected[name].shape or not np.allclose(got, expected[name], atol=1e-6):
            return _hint(f"activations[{name!r}] is not the output of layer {name!r}")
    return _correct(f"captured {len(linear_names)} activations and removed every hook")


@exercise
def exercise_3_3(hook):
    """A full backward hook that clamps every ``grad_input`` to [-0.1, 0.1]."""
    nn = edutorch.nn
    layer = nn.Linear(4, 3)
    with edutorch.no_grad():
        layer.weight.mul_(4.0)  # gradients large enough to need clipping
    x_values = edutorch.randn(5, 4).numpy()
    x_plain = edutorch.tensor(x_values, requires_grad=True)
    layer(x_plain).pow(2).sum().backward()
    expected = np.clip(_values(x_plain.grad), -0.1, 0.1)
    if np.array_equal(expected, _values(x_plain.grad)):
        raise AssertionError("check setup: the gradient should need clipping")
    x = edutorch.tensor(x_values, requires_grad=True)
    handle = layer.register_full_backward_hook(hook)
    try:
        layer(x).pow(2).sum().backward()
    except Exception as error:
        return _hint(f"backward raised {type(error).__name__}: {error}")
    finally:
        handle.remove()
    if x.grad is None:
        return _hint("x.grad is None: return a tuple with one entry per grad_input")
    got = _values(x.grad)
    if np.allclose(got, _values(x_plain.grad), atol=1e-6):
        return _hint("x.grad is unchanged: the hook must RETURN the new grad_input")
    if not np.allclose(got, expected, atol=1e-6):
        return _hint("x.grad is not grad_input clamped to [-0.1, 0.1]")
    # an input that needs no gradient: grad_input is (None,), and None must stay None
    data = edutorch.tensor(x_values)  # requires_grad=False
    handle = layer.register_full_backward_hook(hook)
    try:
        with warnings.catch_warnings():  # the input needs no grad: PyTorch's warning, expected here
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            layer(data).pow(2).sum().backward()
    except Exception as error:
        return _hint(f"with an input that needs no gradient, grad_input is (None,) and the hook "
                     f"raised {type(error).__name__}: {error}. Keep None entries as None")
    finally:
        handle.remove()
    return _correct("earlier layers receive the clamped gradient, and None entries stay None")


@exercise
def exercise_3_4(hook):
    """A forward pre-hook that clamps the first input to [-1, 1]."""
    layer = edutorch.nn.Linear(3, 2)
    x = edutorch.tensor([[-3.0, 0.5, 2.0], [0.2, -0.9, 5.0]])
    handle = layer.register_forward_pre_hook(hook)
    try:
        got = layer(x)
    except Exception as error:
        return _hint(f"the call raised {type(error).__name__}: {error}")
    finally:
        handle.remove()
    with edutorch.no_grad():
        expected = _values(layer(x.clamp(-1.0, 1.0)))
        unchanged = _values(layer(x))
    got = _values(got)
    if np.allclose(got, expected, atol=1e-6):
        return _correct("forward saw the clamped input")
    if np.allclose(got, unchanged, atol=1e-6):
        return _hint("the output did not change: the pre-hook must RETURN the new args")
    return _hint("the output is not layer(x.clamp(-1, 1)): clamp only the first input, to [-1, 1]")
