"""``torch.func.functional_call`` and ``stack_module_state``.

Without torch: the module's own tensors come back after the call (also after
an error), gradients flow to the given tensors, tied weights.  With torch:
the same programs give the same values and errors.
"""
import numpy as np
import pytest

import edutorch
from edutorch.func import functional_call, grad, stack_module_state
from parity import check_parity

W = np.array([[0.5, -1.0], [2.0, 0.25], [1.0, 1.0]])
B = np.array([0.1, -0.2, 0.3])
X = np.array([[1.0, 2.0], [-0.5, 0.5]])


def linear(T):
    m = T.nn.Linear(2, 3).double()
    with T.no_grad():
        m.weight.copy_(T.tensor(W))
        m.bias.copy_(T.tensor(B))
    return m


def test_module_tensors_are_restored_even_after_an_error():
    m = linear(edutorch)
    weight, bias = m.weight, m.bias
    with pytest.raises(RuntimeError):
        functional_call(m, {"weight": edutorch.zeros(5, 5, dtype=edutorch.float64)}, edutorch.tensor(X))
    assert m.weight is weight and m.bias is bias
    assert "foo" not in m.__dict__


def test_gradients_reach_the_given_tensors():
    m = linear(edutorch)
    w = edutorch.tensor(W, requires_grad=True)
    functional_call(m, {"weight": w}, (edutorch.tensor(X),)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.tile(X.sum(0), (3, 1)))
    assert m.weight.grad is None


def test_grad_with_respect_to_a_parameter_dict():
    m = linear(edutorch)
    params = {k: v.detach() for k, v in m.named_parameters()}
    g = grad(lambda p, x: functional_call(m, p, (x,)).pow(2).sum())(params, edutorch.tensor(X))
    out = X @ W.T + B
    np.testing.assert_allclose(g["weight"].numpy(), 2 * out.T @ X)
    np.testing.assert_allclose(g["bias"].numpy(), 2 * out.sum(0))


def tied(T):
    class Tied(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = T.nn.Linear(2, 2, bias=False).double()
            self.b = T.nn.Linear(2, 2, bias=False).double()
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    return Tied()


def batchnorm(T):
    return T.nn.BatchNorm1d(2).double()


PROGRAMS = {
    "one_dict": lambda T: functional_call_of(T)(linear(T), {"weight": T.ones(3, 2, dtype=T.float64)}, (T.tensor(X),)),
    "args_not_a_tuple": lambda T: functional_call_of(T)(linear(T), {"bias": T.zeros(3, dtype=T.float64)}, T.tensor(X)),
    "tuple_of_dicts": lambda T: functional_call_of(T)(
        linear(T), ({"weight": T.ones(3, 2, dtype=T.float64)}, {"bias": T.ones(3, dtype=T.float64)}), (T.tensor(X),)),
    "kwargs": lambda T: functional_call_of(T)(T.nn.Softmax(dim=0), {}, (), {"input": T.tensor(X)}),
    "tied_weights": lambda T: functional_call_of(T)(tied(T), {"a.weight": T.eye(2, dtype=T.float64) * 2},
                                                    (T.tensor(X),)),
    "untied_weights": lambda T: functional_call_of(T)(tied(T), {"a.weight": T.eye(2, dtype=T.float64) * 2},
                                                      (T.tensor(X),), tie_weights=False).requires_grad,
    "buffers_updated_in_place": lambda T: buffers_after(T),
    "nested_names": lambda T: functional_call_of(T)(T.nn.Sequential(linear(T), T.nn.Tanh()),
                                                    {"0.bias": T.ones(3, dtype=T.float64)}, (T.tensor(X),)),
    "strict_ok": lambda T: functional_call_of(T)(linear(T), dict(linear(T).named_parameters()), (T.tensor(X),),
                                                 strict=True),
    "unexpected_key_non_strict": lambda T: functional_call_of(T)(
        linear(T), {"weight": T.ones(3, 2, dtype=T.float64), "foo": T.ones(1)}, (T.tensor(X),)),
    "stack_module_state": lambda T: stacked(T),
    # errors
    "strict_missing_and_unexpected": lambda T: functional_call_of(T)(
        linear(T), {"weight": T.ones(3, 2, dtype=T.float64), "foo": T.ones(1)}, (T.tensor(X),), strict=True),
    "strict_missing": lambda T: functional_call_of(T)(linear(T), {"weight": T.ones(3, 2)}, (T.tensor(X),),
                                                      strict=True),
    "repeated_keys": lambda T: functional_call_of(T)(
        linear(T), ({"weight": T.ones(3, 2)}, {"weight": T.ones(3, 2)}), (T.tensor(X),)),
    "not_a_tensor": lambda T: functional_call_of(T)(linear(T), {"weight": 3}, (T.tensor(X),)),
    "tied_given_twice": lambda T: functional_call_of(T)(
        tied(T), {"a.weight": T.eye(2, dtype=T.float64), "b.weight": T.eye(2, dtype=T.float64)}, (T.tensor(X),)),
    "stack_no_models": lambda T: T.func.stack_module_state([]),
    "stack_mixed_modes": lambda T: T.func.stack_module_state([linear(T), linear(T).eval()]),
    "stack_mixed_classes": lambda T: T.func.stack_module_state([linear(T), T.nn.Conv1d(2, 3, 1)]),
    "stack_mixed_requires_grad": lambda T: T.func.stack_module_state([linear(T), linear(T).requires_grad_(False)]),
}


def functional_call_of(T):
    return T.func.functional_call


def buffers_after(T):
    bn = batchnorm(T)
    mean, var = T.zeros(2, dtype=T.float64), T.ones(2, dtype=T.float64)
    out = T.func.functional_call(bn, {"running_mean": mean, "running_var": var}, (T.tensor(X),))
    return out, mean, var, bn.running_mean


def stacked(T):
    params, buffers = T.func.stack_module_state([linear(T), linear(T)])
    return params, buffers, [p.requires_grad and p.is_leaf for p in params.values()]


@pytest.mark.parametrize("name", PROGRAMS)
def test_parity(real_torch, name):
    check_parity(real_torch, PROGRAMS[name])


def test_stack_module_state_without_torch():
    a, b = linear(edutorch), linear(edutorch)
    with edutorch.no_grad():
        b.weight.mul_(2)
    params, buffers = stack_module_state([a, b])
    assert params["weight"].shape == (2, 3, 2) and params["weight"].is_leaf and buffers == {}
    np.testing.assert_allclose(params["weight"][1].detach().numpy(), 2 * W)
