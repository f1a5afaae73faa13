"""log_softmax's and the class nll_loss's backward are one op each (PyTorch's
``_log_softmax_backward_data`` and ``nll_loss_backward``): second derivatives and node names."""
import numpy as np
import pytest

import edutorch as et
import edutorch.nn.functional as F
from edutorch.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(0)
TARGET = [0, 3, 1, 3, 2]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("loss", ["nll_of_log_softmax", "cross_entropy"])
def test_second_derivatives(loss, reduction):
    x = et.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    t = et.tensor(TARGET)
    if loss == "cross_entropy":
        def f(x):
            return F.cross_entropy(x, t, reduction=reduction)
    else:
        def f(x):
            return F.nll_loss(F.log_softmax(x, 1), t, reduction=reduction)
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


@pytest.mark.parametrize("dim", [0, 1])
def test_log_softmax_second_derivative(dim):
    x = et.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    assert gradgradcheck(lambda x: F.log_softmax(x, dim) * 1.5, (x,))


def test_gradient_node_names_match_torch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    x_np = rng.standard_normal((5, 4))
    names = []
    for lib in (et, torch):
        x = lib.tensor(x_np, requires_grad=True)
        out = lib.nn.functional.cross_entropy(x, lib.tensor(TARGET))
        (g,) = lib.autograd.grad(out, (x,), create_graph=True)
        names.append(g.grad_fn.name())
    assert names[0] == names[1] == "LogSoftmaxBackwardDataBackward0"
