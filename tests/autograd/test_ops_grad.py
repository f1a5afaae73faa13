"""Numerical gradient checks (float64 central differences) for every op in OP_CASES.

No PyTorch needed: the analytic gradient from ``backward`` must match the
finite-difference slope of Σ out·w, and (second test) the gradient of the
gradient, built with ``create_graph=True``, must match too.
"""
import numpy as np
import edutorch as et
from op_cases import numerical_grads, sample, total


def _inputs(case, seed=0):
    rng = np.random.default_rng(seed)
    return [sample(s, case.domain, rng) for s in case.shapes], rng


def _weights(outputs, rng):
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    return [et.tensor(rng.standard_normal(tuple(o.shape)), dtype=et.float64) for o in outputs]


def _value(case, arrays, weights):
    with et.no_grad():
        out = case.fn(et, *[et.tensor(a) for a in arrays])
        return total(out, weights).item()


def test_gradient_matches_finite_differences(op_case):
    arrays, rng = _inputs(op_case)
    xs = [et.tensor(a, requires_grad=True) for a in arrays]
    out = op_case.fn(et, *xs)
    weights = _weights(out, rng)
    total(out, weights).backward()
    expected = numerical_grads(lambda arrs: _value(op_case, arrs, weights), [a.copy() for a in arrays])
    for x, num in zip(xs, expected):
        got = x.grad.numpy() if x.grad is not None else np.zeros_like(num)
        np.testing.assert_allclose(got, num, rtol=1e-5, atol=1e-6)


def test_second_derivative_matches_finite_differences(op_case):
    """create_graph=True: Σ grad·v is differentiable and has the right slope."""
    arrays, rng = _inputs(op_case, seed=1)
    xs = [et.tensor(a, requires_grad=True) for a in arrays]
    out = op_case.fn(et, *xs)
    weights = _weights(out, rng)
    vs = [rng.standard_normal(a.shape) for a in arrays]

    def first_order(tensors):
        grads = et.autograd.grad(total(op_case.fn(et, *tensors), weights), tensors,
                                 create_graph=True, allow_unused=True)
        acc = None
        for g, v in zip(grads, vs):
            if g is not None:
                term = (g * et.tensor(v)).sum()
                acc = term if acc is None else acc + term
        return acc

    def h_value(arrs):
        h = first_order([et.tensor(a, requires_grad=True) for a in arrs])
        return 0.0 if h is None else h.item()

    expected = numerical_grads(h_value, [a.copy() for a in arrays])
    h = first_order(xs)
    if h is None or not h.requires_grad:  # a linear op: its gradient must be constant
        for num in expected:
            np.testing.assert_allclose(num, 0, atol=1e-5)
        return
    h.backward()
    for x, num in zip(xs, expected):
        got = x.grad.numpy() if x.grad is not None else np.zeros_like(num)
        np.testing.assert_allclose(got, num, rtol=1e-4, atol=1e-5)
