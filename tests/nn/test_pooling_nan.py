"""Max pooling over windows that hold NaN: PyTorch's rule, not NumPy's.

PyTorch's kernel keeps ``val > max or isnan(val)`` while it scans a window:
a NaN is the maximum (the LAST NaN of the window when there are several) and
the gradient and ``return_indices`` point at it.  ``NaN == NaN`` is False in
NumPy, so a plain "where does the max sit" test finds no position and the
window's gradient would silently vanish.
"""
import numpy as np
import pytest

import edutorch as et


def test_nan_window_sends_its_gradient_to_the_nan():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    x[0, 0, 0, 1] = np.nan
    t = et.tensor(x, requires_grad=True)
    out, idx = et.nn.functional.max_pool2d(t, 2, return_indices=True)
    out.sum().backward()
    assert np.isnan(out[0, 0, 0, 0].item())
    assert idx.flatten().tolist() == [1, 7, 13, 15]
    assert t.grad[0, 0, 0, 1].item() == 1.0 and t.grad.sum().item() == 4.0


def test_last_of_several_nans_wins():
    x = et.tensor([[[float("nan"), 1.0, float("nan"), 0.0]]], requires_grad=True)
    out, idx = et.nn.functional.max_pool1d(x, 4, return_indices=True)
    out.sum().backward()
    assert idx.flatten().tolist() == [2]
    assert x.grad.flatten().tolist() == [0.0, 0.0, 1.0, 0.0]


@pytest.mark.parametrize("seed", range(6))
def test_random_nans_match_torch(seed):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 2, 5, 6)).astype(np.float32)
    x[rng.random(x.shape) < 0.2] = np.nan
    kernel, stride, padding, ceil = [(2, 2, 0, False), (3, 1, 1, False), (3, 2, 1, True)][seed % 3]
    results = []
    for lib in (et, torch):
        t = lib.tensor(x, requires_grad=True)
        out, idx = lib.nn.functional.max_pool2d(t, kernel, stride, padding, ceil_mode=ceil, return_indices=True)
        out.backward(lib.ones(out.shape))
        results.append((out.detach().numpy(), idx.numpy(), t.grad.numpy()))
    (o1, i1, g1), (o2, i2, g2) = results
    np.testing.assert_array_equal(o1, o2)  # NaN == NaN for assert_array_equal
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_array_equal(g1, g2)
