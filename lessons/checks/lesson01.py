"""Checks of lesson 01 · Tensors and autograd (lessons/01-tensors-and-autograd.ipynb)."""

import numpy as np

import edutorch

from ._common import (
    _correct,
    _hint,
    _is_tensor,
    _library,
    _multiple,
    _node_name,
    _values,
    exercise,
)


@exercise
def exercise_1_1(x):
    """``x`` is a leaf with ``x.grad`` = d/dx (x**3 - 3*x), computed by ``backward()``."""
    if x is None:
        return _hint("x is None: create the leaf x = 2.0 with requires_grad=True, build f from it "
                     "and call f.backward()")
    if not _is_tensor(x):
        return _hint("pass the tensor x itself, e.g. checks.exercise_1_1(x)")
    if not x.requires_grad:
        if x.grad_fn is None and x.grad is None:
            return _hint("this tensor does not require grad. Pass x itself (not x.grad), and create "
                         "it with requires_grad=True, otherwise autograd does not track it")
        return _hint("create x with requires_grad=True, otherwise autograd does not track it")
    if not x.is_leaf:
        return _hint("x must be a leaf: create it with torch.tensor(..., requires_grad=True)")
    if x.grad is None:
        return _hint("x.grad is None: build f from x, then call f.backward()")
    value = _values(x)
    expected = 3 * value**2 - 3
    got = _values(x.grad)
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
        times = _multiple(got, expected)
        if times is not None:
            return _hint(
                f"x.grad is {got}, {times}× the derivative {expected}: gradients ACCUMULATE, "
                f"so backward ran {times} times. Set x.grad = None (or build a new x) and call "
                "backward once."
            )
        return _hint(f"x.grad is {got} but d/dx (x**3 - 3*x) at x={value} is {expected}")
    return _correct(f"x.grad = 3·x² − 3 = {got.tolist()} at x = {value.tolist()}")


def graph_path(loss):
    """Node names from ``loss.grad_fn`` along the FIRST edge until a node has no edges."""
    names = []
    node = loss.grad_fn
    while node is not None:
        names.append(_node_name(node))
        edges = [edge for edge in node.next_functions if edge[0] is not None]
        node = edges[0][0] if edges else None
    return names


@exercise
def exercise_1_2(names):
    """The node names met walking ``((a * b) + c).exp().sum()`` along first edges."""
    a = edutorch.tensor([1.0, 2.0], requires_grad=True)
    b = edutorch.tensor([3.0, 4.0], requires_grad=True)
    c = edutorch.tensor([0.5, 0.5], requires_grad=True)
    expected = graph_path(((a * b) + c).exp().sum())
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        return _hint("pass a list of names, e.g. ['SumBackward0', ...]")
    names = list(names)
    if names == expected:
        return _correct(" → ".join(expected))
    if names == expected[:-1]:
        return _hint("almost: the walk ends at the leaf a, whose node is an 'AccumulateGrad'")
    if names and names[0] != expected[0]:
        return _hint(f"start at loss.grad_fn: its name is {expected[0]!r}")
    for i, (got, want) in enumerate(zip(names, expected)):
        if got != want:
            return _hint(f"step {i} should be {want!r}, not {got!r} (look at .next_functions[0][0])")
    return _hint(f"the walk has {len(expected)} nodes; you gave {len(names)}")


@exercise
def exercise_1_3(w):
    """``w.grad`` holds the gradient of ``(w ** 2).sum()`` exactly once (no accumulation)."""
    if not _is_tensor(w) or w.grad is None:
        return _hint("w.grad is None: call backward() on (w ** 2).sum() after resetting w.grad")
    expected = 2 * _values(w)
    got = _values(w.grad)
    if np.allclose(got, expected):
        return _correct(f"w.grad = 2·w = {got.tolist()}, computed once")
    times = _multiple(got, expected)
    if times is not None:
        return _hint(
            f"w.grad is {times}× the gradient: the old gradients are still there. "
            "Set w.grad = None (or w.grad.zero_()) BEFORE calling backward."
        )
    return _hint(f"w.grad is {got.tolist()} but the gradient of (w**2).sum() is {expected.tolist()}")


@exercise
def exercise_1_4(function_class):
    """A custom ``autograd.Function`` computing the sigmoid, with a correct backward."""
    if not (isinstance(function_class, type) and hasattr(function_class, "apply")):
        return _hint("pass the class itself (e.g. MySigmoid), not MySigmoid.apply or an instance")
    lib = _library(function_class)
    x = lib.tensor([-2.0, -0.5, 0.0, 0.7, 3.0], dtype=lib.float64, requires_grad=True)
    try:
        y = function_class.apply(x)
    except Exception as error:
        return _hint(f"forward raised {type(error).__name__}: {error}")
    if not _is_tensor(y):
        return _hint("forward must return a tensor")
    if y.shape != x.shape or not np.allclose(_values(y), 1 / (1 + np.exp(-_values(x)))):
        return _hint("forward does not compute the sigmoid 1 / (1 + exp(-x))")
    if y.grad_fn is None:
        return _hint("the output has no grad_fn: call the Function through .apply(x)")
    expected_name = function_class.__name__ + "Backward"
    if _node_name(y.grad_fn) != expected_name:
        return _hint(f"the output's grad_fn should be a {expected_name}")
    try:
        ok = lib.autograd.gradcheck(function_class.apply, (x,), raise_exception=False)
    except Exception as error:  # a backward that crashes is a hint too
        return _hint(f"backward raised {type(error).__name__}: {error}")
    if not ok:
        return _hint(
            "gradcheck failed: backward must return grad_output * y * (1 - y) "
            "(save y in forward with ctx.save_for_backward)"
        )
    return _correct(f"{expected_name} passes gradcheck in float64")
