"""AccumulateGrad (``autograd/function.py``): how a gradient becomes ``.grad``, as PyTorch observes it.

The first gradient is copied into ``.grad`` (never an alias of a tensor someone
else holds); later ones are added in place (same object, version + 1); under
``create_graph=True`` the sum is a new differentiable tensor.
"""
import numpy as np
import pytest

import edutorch as et


def _observations(lib):
    out = []
    # the user's gradient= passed straight through (add's backward returns it as is)
    x = lib.ones(3, requires_grad=True)
    g = lib.tensor([1.0, 2.0, 3.0])
    (x + 0).backward(g)
    out.append(np.shares_memory(x.grad.numpy(), g.numpy()))
    # one gradient reaching two leaves (a + b)
    a, b = lib.ones(3, requires_grad=True), lib.ones(3, requires_grad=True)
    (a + b).sum().backward()
    out.append(np.shares_memory(a.grad.numpy(), b.grad.numpy()))
    # a second backward adds in place: same tensor, one version later
    x = lib.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    first, version = x.grad, x.grad._version
    (x * 3).sum().backward()
    out += [x.grad is first, x.grad._version - version, x.grad.tolist()]
    # create_graph: .grad has a graph; a later plain backward still adds in place
    x = lib.ones(2, requires_grad=True)
    (x * x).sum().backward(create_graph=True)
    out.append(x.grad.requires_grad)
    before = x.grad
    (x * 3).sum().backward()
    out += [x.grad is before, x.grad.requires_grad, x.grad.tolist()]
    # create_graph twice: the second sum is out of place and differentiable
    x = lib.ones(2, requires_grad=True)
    (x * x).sum().backward(create_graph=True)
    before = x.grad
    (x * x).sum().backward(create_graph=True)
    out += [x.grad is before, x.grad.requires_grad, x.grad.tolist()]
    return out


def test_accumulate_grad_semantics():
    # the documented behaviour, without torch
    assert _observations(et) == [False, False, True, 1, [5.0, 5.0, 5.0], True, True, True, [5.0, 5.0],
                                 False, True, [4.0, 4.0]]


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_accumulate_grad_matches_torch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    assert _observations(et) == _observations(torch)


def test_grad_is_not_the_hooked_tensor():
    # a tensor hook that keeps the gradient: .grad is a separate copy, as in PyTorch
    x = et.ones(3, requires_grad=True)
    seen = []
    x.register_hook(seen.append)
    (x * 2).sum().backward()
    x.grad.add_(1)
    assert seen[0].tolist() == [2.0, 2.0, 2.0] and x.grad.tolist() == [3.0, 3.0, 3.0]


def _retained_observations(lib):
    """A non-leaf's ``.grad`` (``retain_grad()``, or ``backward(inputs=[it])``): replaced out of
    place by each backward, never written into; differentiable under create_graph."""
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward(retain_graph=True)
    first = y.grad
    (y * y).sum().backward(retain_graph=True)
    z = x * 3
    (z * z).sum().backward(inputs=[z], retain_graph=True)
    before = z.grad
    (z * z).sum().backward(inputs=[z], create_graph=True)
    return (first is y.grad, first.tolist(), y.grad.tolist(), before is z.grad, z.grad.tolist(),
            y.grad.grad_fn is None, z.grad.grad_fn is not None)


@pytest.mark.filterwarnings("ignore")  # reading a non-leaf's .grad; create_graph's reference cycle
def test_retained_grad_is_replaced_as_in_torch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    assert _retained_observations(et) == _retained_observations(torch)
    assert _retained_observations(et) == (False, [4.0] * 3, [8.0] * 3, False, [12.0] * 3, True, True)
