"""Checks of lesson 03 · Hooks (lessons/03-hooks.ipynb)."""

import warnings

import numpy as np

import edutorch

from ._common import (
    _correct,
    _hint,
    _is_tensor,
    _library,
    _library_of_function,
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


def _recording(hook, returned):
    """``hook``, recording the type of what it returns in ``returned``."""
    def recorded(*args):
        result = hook(*args)
        returned.append(type(result).__name__)
        return result
    return recorded


def _backward_through(lib, layer, hook, x_values, requires_grad=True):
    """``x.grad`` after a backward through ``layer`` with ``hook`` registered, and the types the
    hook returned; the hook is removed afterwards."""
    x = lib.tensor(x_values, requires_grad=requires_grad)
    returned = []
    handle = layer.register_full_backward_hook(_recording(hook, returned))
    try:
        with warnings.catch_warnings():  # an input that needs no grad: PyTorch's warning, expected
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            layer(x).pow(2).sum().backward()
    finally:
        handle.remove()
    return x.grad, returned


@exercise
def exercise_3_3(hook):
    """A full backward hook that clamps every ``grad_input`` to [-0.1, 0.1]."""
    if not callable(hook):
        return _hint("pass your hook function clip_grad_input itself")
    lib = _library_of_function(hook)
    layer = lib.nn.Linear(4, 3)
    with lib.no_grad():
        layer.weight.mul_(4.0)  # gradients large enough to need clipping
    x_values = np.random.default_rng(3).normal(size=(5, 4)).astype(np.float32)
    plain, _ = _backward_through(lib, layer, lambda m, grad_input, grad_output: None, x_values)
    expected = np.clip(_values(plain), -0.1, 0.1)
    try:
        grad, returned = _backward_through(lib, layer, hook, x_values)
    except Exception as error:
        return _hint(f"backward raised {type(error).__name__}: {error}. The hook gets "
                     "(module, grad_input, grad_output) and returns a tuple like grad_input")
    if returned and returned[0] == "list":
        return _hint("the hook returned a list: grad_input is a tuple, so return a tuple with one "
                     "entry per grad_input, tuple(...)")
    if grad is None:
        return _hint("x.grad is None: return a tuple with one entry per grad_input")
    got = _values(grad)
    if np.allclose(got, _values(plain), atol=1e-6):
        return _hint("x.grad is unchanged: the hook must RETURN the new grad_input")
    if not np.allclose(got, expected, atol=1e-6):
        return _hint("x.grad is not grad_input clamped to [-0.1, 0.1]")
    try:  # an input that needs no gradient: grad_input is (None,), and None must stay None
        _backward_through(lib, layer, hook, x_values, requires_grad=False)
    except Exception as error:
        return _hint(f"with an input that needs no gradient, grad_input is (None,) and the hook "
                     f"raised {type(error).__name__}: {error}. Keep None entries as None")
    return _correct("earlier layers receive the clamped gradient, and None entries stay None")


@exercise
def exercise_3_4(hook):
    """A forward pre-hook that clamps the first input to [-1, 1]."""
    if not callable(hook):
        return _hint("pass your pre-hook function clamp_inputs itself")
    lib = _library_of_function(hook)
    layer = lib.nn.Linear(3, 2)
    x = lib.tensor([[-3.0, 0.5, 2.0], [0.2, -0.9, 5.0]])
    handle = layer.register_forward_pre_hook(hook)
    try:
        got = layer(x)
    except Exception as error:
        return _hint(f"the call raised {type(error).__name__}: {error}")
    finally:
        handle.remove()
    with lib.no_grad():
        expected = _values(layer(x.clamp(-1.0, 1.0)))
        unchanged = _values(layer(x))
    got = _values(got)
    if np.allclose(got, expected, atol=1e-6):
        return _correct("forward saw the clamped input")
    if np.allclose(got, unchanged, atol=1e-6):
        return _hint("the output did not change: the pre-hook must RETURN the new args")
    return _hint("the output is not layer(x.clamp(-1, 1)): clamp only the first input, to [-1, 1]")
