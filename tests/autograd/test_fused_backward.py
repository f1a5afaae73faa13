"""Fused backward formulas (mm, pow, sum/mean): second derivatives and PyTorch's node names."""
import numpy as np
import pytest

import edutorch as et
from edutorch.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(0)


def _t(*shape):
    return et.tensor(rng.standard_normal(shape), dtype=et.float64, requires_grad=True)


def test_mm_backward_second_order():
    a, b = _t(3, 4), _t(4, 2)
    assert gradcheck(lambda x, y: x.mm(y), (a, b))
    assert gradgradcheck(lambda x, y: x.mm(y), (a, b))
    # the gradient itself differentiated w.r.t. both operands and the incoming grad
    v = _t(3, 2)
    assert gradgradcheck(lambda x, y, w: (x.mm(y) * w).tanh(), (a, b, v))


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 0.5, -1, 2.5])
def test_pow_backward_second_order(exponent):
    x = et.tensor(rng.uniform(0.5, 2.0, (5,)), dtype=et.float64, requires_grad=True)
    assert gradcheck(lambda t: t ** exponent, (x,))
    assert gradgradcheck(lambda t: t ** exponent, (x,))


@pytest.mark.parametrize("reduce", [
    lambda t: t.sum(), lambda t: t.mean(), lambda t: t.sum(1), lambda t: t.mean((0, 2)),
    lambda t: t.sum(-1, keepdim=True), lambda t: t.mean(1, keepdim=True),
])
def test_reduction_backward_second_order(reduce):
    x = _t(3, 4, 2)
    assert gradgradcheck(lambda t: reduce(t) ** 2, (x,))


def test_fused_gradient_node_names_match_torch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    cases = {
        "mm": lambda lib, a, b: (a.mm(b) * a.mm(b)).sum(),
        "pow": lambda lib, a, b: (a ** 3).sum(),
        "sum": lambda lib, a, b: (a * a).sum(),
        "mean": lambda lib, a, b: a.mean(),
    }
    a_np, b_np = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    for name, f in cases.items():
        names = []
        for lib in (et, torch):
            a = lib.tensor(a_np, requires_grad=True)
            b = lib.tensor(b_np, requires_grad=True)
            (g,) = lib.autograd.grad(f(lib, a, b), (a,), create_graph=True)
            names.append(g.grad_fn.name() if g.grad_fn is not None else None)
        assert names[0] == names[1], name
