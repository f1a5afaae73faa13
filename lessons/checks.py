"""Automatic checks for the lesson exercises.

Each exercise cell ends with a call such as ``checks.exercise_1_1(x)``. The
check recomputes the right answer itself with edutorch (nothing is
hard-coded), compares, and returns a :class:`Result`: Jupyter shows it as one
line, ``✓ correct: ...`` or ``✗ not yet: <a hint>``. ``bool(result)`` tells
a script (or a test) whether the answer was right.

The checks accept edutorch objects and, where it makes sense, real PyTorch
objects too: the API is the same.
"""
from __future__ import annotations

import math

import numpy as np

import edutorch


class Result:
    """The outcome of one check: ``ok`` plus a message for the student."""

    def __init__(self, ok, message):
        self.ok = bool(ok)
        self.message = message

    def __bool__(self):
        return self.ok

    def __repr__(self):
        mark = "✓ correct" if self.ok else "✗ not yet"
        return f"{mark}: {self.message}"


def _correct(message):
    return Result(True, message)


def _hint(message):
    return Result(False, message)


def _values(tensor):
    """A float64 NumPy copy of an edutorch or torch tensor (or a plain number/list)."""
    if hasattr(tensor, "detach"):
        tensor = tensor.detach()
    if hasattr(tensor, "cpu"):
        tensor = tensor.cpu()
    if hasattr(tensor, "numpy"):
        return np.asarray(tensor.numpy(), dtype=np.float64)
    return np.asarray(tensor, dtype=np.float64)


def _is_tensor(obj):
    return hasattr(obj, "requires_grad") and hasattr(obj, "grad_fn")


def _node_name(node):
    """``MulBackward0``, ``AccumulateGrad``, ``MyFnBackward``: the class name of a graph node."""
    return type(node).__name__


# --- lesson 01: tensors and autograd ----------------------------------------------------


def exercise_1_1(x):
    """``x`` is a leaf with ``x.grad`` = d/dx (x**3 - 3*x), computed by ``backward()``."""
    if not _is_tensor(x):
        return _hint("pass the tensor x itself, e.g. checks.exercise_1_1(x)")
    if not x.requires_grad:
        return _hint("create x with requires_grad=True, otherwise autograd does not track it")
    if not x.is_leaf:
        return _hint("x must be a leaf: create it with torch.tensor(..., requires_grad=True)")
    if x.grad is None:
        return _hint("x.grad is None: build f from x, then call f.backward()")
    value = _values(x)
    expected = 3 * value**2 - 3
    got = _values(x.grad)
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
        if np.allclose(got, 2 * expected, rtol=1e-5, atol=1e-6):
            return _hint(
                f"x.grad is {got}, twice the derivative {expected}: gradients ACCUMULATE. "
                "Zero x.grad (x.grad = None) before calling backward again."
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


def exercise_1_3(w):
    """``w.grad`` holds the gradient of ``(w ** 2).sum()`` exactly once (no accumulation)."""
    if not _is_tensor(w) or w.grad is None:
        return _hint("w.grad is None: call backward() on (w ** 2).sum() after resetting w.grad")
    expected = 2 * _values(w)
    got = _values(w.grad)
    if np.allclose(got, expected):
        return _correct(f"w.grad = 2·w = {got.tolist()}, computed once")
    ratio = got / np.where(expected == 0, 1, expected)
    if np.allclose(ratio, ratio.flat[0]) and ratio.flat[0] > 1:
        return _hint(
            f"w.grad is {ratio.flat[0]:.0f}× the gradient: the old gradients are still there. "
            "Set w.grad = None (or w.grad.zero_()) BEFORE calling backward."
        )
    return _hint(f"w.grad is {got.tolist()} but the gradient of (w**2).sum() is {expected.tolist()}")


def exercise_1_4(function_class):
    """A custom ``autograd.Function`` computing the sigmoid, with a correct backward."""
    if not (isinstance(function_class, type) and hasattr(function_class, "apply")):
        return _hint("pass the class itself (e.g. MySigmoid), not MySigmoid.apply or an instance")
    x = edutorch.tensor([-2.0, -0.5, 0.0, 0.7, 3.0], dtype=edutorch.float64, requires_grad=True)
    y = function_class.apply(x)
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
        ok = edutorch.autograd.gradcheck(function_class.apply, (x,), raise_exception=False)
    except Exception as error:  # a backward that crashes is a hint too
        return _hint(f"backward raised {type(error).__name__}: {error}")
    if not ok:
        return _hint(
            "gradcheck failed: backward must return grad_output * y * (1 - y) "
            "(save y in forward with ctx.save_for_backward)"
        )
    return _correct(f"{expected_name} passes gradcheck in float64")
