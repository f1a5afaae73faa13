"""The deprecated ``Module.register_backward_hook``: the hook sees the ``grad_input`` of the module's
last autograd node as PyTorch's node has it, warns as PyTorch warns, and may replace it.

For ``Linear`` that node is ``addmm(bias, x, W.t())`` in PyTorch, so the weight's entry is the
gradient of ``W.t()``, shaped (in, out); edutorch's fused node takes ``W`` itself and shows its
hooks the transpose (``_hooked_grad_inputs``).
"""
import warnings

import numpy as np
import pytest

import edutorch

MESSAGE = "Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated"


def _arrays():
    rng = np.random.default_rng(0)
    return rng.standard_normal((2, 3)), rng.standard_normal(2), rng.standard_normal((4, 3))


def _hooked(lib, bias=True, scale=None, input_requires_grad=True):
    w, b, x = _arrays()
    layer = lib.nn.Linear(3, 2, bias=bias).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(w))
        if bias:
            layer.bias.copy_(lib.tensor(b))
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append([None if g is None else g.detach().numpy().copy() for g in grad_input])
        if scale is not None:
            return tuple(None if g is None else g * scale for g in grad_input)

    layer.register_backward_hook(hook)
    inp = lib.tensor(x, requires_grad=input_requires_grad)
    with pytest.warns(FutureWarning, match=MESSAGE):
        out = layer(inp)
    (out * lib.arange(8.0, dtype=lib.float64).reshape(4, 2)).sum().backward()
    return seen, layer.weight.grad.numpy(), None if inp.grad is None else inp.grad.numpy()


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_grad_input_of_linear_matches_torch(real_torch, bias, input_requires_grad):
    got, expected = (_hooked(lib, bias, input_requires_grad=input_requires_grad) for lib in (edutorch, real_torch))
    assert len(got[0]) == len(expected[0]) == 1
    for g, e in zip(got[0][0], expected[0][0]):
        assert (g is None) == (e is None)
        if g is not None:
            assert g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=1e-12)


def test_a_replaced_grad_input_reaches_the_parameters_as_in_torch(real_torch):
    (_, w_got, x_got), (_, w_expected, x_expected) = (_hooked(lib, scale=10.0) for lib in (edutorch, real_torch))
    np.testing.assert_allclose(w_got, w_expected, rtol=1e-12)
    np.testing.assert_allclose(x_got, x_expected, rtol=1e-12)


def test_the_weight_entry_is_the_gradient_of_w_transposed():
    """Without torch: for y = x W^T + b and L = sum(c * y), dL/d(W^T) = x^T c."""
    (seen, weight_grad, _) = _hooked(edutorch)
    _, _, x = _arrays()
    c = np.arange(8.0).reshape(4, 2)
    g_bias, g_input, g_weight_t = seen[0]
    np.testing.assert_allclose(g_weight_t, x.T @ c)
    np.testing.assert_allclose(weight_grad, (x.T @ c).T)  # .grad itself is W's own gradient
    np.testing.assert_allclose(g_bias, c.sum(0))


def test_a_node_hook_on_linear_sees_what_torchs_addmm_node_sees(real_torch):
    shapes = []
    for lib in (edutorch, real_torch):
        layer = lib.nn.Linear(3, 2)
        out = layer(lib.ones(4, 3))
        seen = []
        out.grad_fn.register_hook(lambda gi, go, seen=seen: seen.extend(None if g is None else tuple(g.shape) for g in gi))
        out.sum().backward()
        shapes.append(seen)
    assert shapes[0] == shapes[1] == [(2,), None, (3, 2)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the node hook itself is not deprecated
        edutorch.nn.Linear(3, 2)(edutorch.ones(1, 3)).grad_fn.register_hook(lambda gi, go: None)
