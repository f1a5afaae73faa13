"""Property-based broadcasting checks (Hypothesis): any pair of broadcastable
shapes, every binary op, float64 values and gradients against finite
differences, and against PyTorch when it is installed.

Like MiniTorch's shape strategies: Hypothesis draws the shapes, so rank
mismatches, size-1 dims and 0-d operands all come up.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import edutorch as et
from op_cases import numerical_grads

BINARY = {
    "add": lambda L, a, b: a + b,
    "sub": lambda L, a, b: L.sub(a, b, alpha=0.5),
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / b,
    "pow": lambda L, a, b: a ** b,
    "maximum": lambda L, a, b: L.maximum(a, b),
    "where": lambda L, a, b: L.where(a > b, a * 2, b),
    "matmul-free mix": lambda L, a, b: (a * b).sigmoid() + (a - b).tanh(),
}

shapes = mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=3)


def _values(shape, seed):
    rng = np.random.default_rng(seed)
    # positive and away from each other: valid for div/pow, no ties for maximum/where
    return np.asarray(rng.uniform(0.5, 2.0, shape) + rng.permutation(int(np.prod(shape))).reshape(shape) * 1e-3)


@pytest.mark.parametrize("name", list(BINARY))
@settings(max_examples=15, deadline=None)
@given(shapes=shapes, seed=st.integers(0, 2**16))
def test_broadcast_gradients_match_finite_differences(name, shapes, seed):
    fn = BINARY[name]
    sa, sb = shapes.input_shapes
    a_np, b_np = _values(sa, seed), np.asarray(_values(sb, seed + 1) + 0.0005)
    a, b = et.tensor(a_np, requires_grad=True), et.tensor(b_np, requires_grad=True)
    out = fn(et, a, b)
    assert tuple(out.shape) == shapes.result_shape
    w = np.random.default_rng(seed).standard_normal(shapes.result_shape)
    (out * et.tensor(w)).sum().backward()
    assert tuple(a.grad.shape) == sa and tuple(b.grad.shape) == sb

    def f(arrays):
        with et.no_grad():
            return (fn(et, et.tensor(arrays[0]), et.tensor(arrays[1])) * et.tensor(w)).sum().item()

    ga, gb = numerical_grads(f, [a_np.copy(), b_np.copy()])
    np.testing.assert_allclose(a.grad.numpy(), ga, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), gb, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(BINARY))
@settings(max_examples=10, deadline=None)
@given(shapes=shapes, seed=st.integers(0, 2**16))
def test_broadcast_matches_torch(name, shapes, seed):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    fn = BINARY[name]
    sa, sb = shapes.input_shapes
    a_np, b_np = _values(sa, seed).astype(np.float32), (_values(sb, seed + 1) + 0.0005).astype(np.float32)
    results = []
    for lib in (et, torch):
        a, b = lib.tensor(a_np, requires_grad=True), lib.tensor(b_np, requires_grad=True)
        out = fn(lib, a, b)
        out.sum().backward()
        results.append((out.detach().numpy(), a.grad.numpy(), b.grad.numpy(), str(out.dtype)))
    (o1, ga1, gb1, d1), (o2, ga2, gb2, d2) = results
    assert d1 == d2
    for x, y in ((o1, o2), (ga1, ga2), (gb1, gb2)):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
