"""Losses differentiate their *target* too, as PyTorch does (BCE, BCE with logits,
KL divergence): float64 central differences, no torch needed; and the same
gradients as torch where it is installed."""
import numpy as np
import pytest

import edutorch as et

R = np.random.default_rng(3)
LOSSES = {  # loss(lib, x, t)
    "binary_cross_entropy": lambda L, x, t: L.nn.functional.binary_cross_entropy(x.sigmoid(), t.sigmoid()),
    "binary_cross_entropy_sum": lambda L, x, t: L.nn.functional.binary_cross_entropy(
        x.sigmoid(), t.sigmoid(), reduction="sum"),
    "bce_with_logits": lambda L, x, t: L.nn.functional.binary_cross_entropy_with_logits(x, t.sigmoid()),
    "bce_with_logits_pos_weight": lambda L, x, t: L.nn.functional.binary_cross_entropy_with_logits(
        x, t.sigmoid(), pos_weight=L.tensor([0.5, 2.0, 1.0, 3.0], dtype=L.float64)),
    "kl_div": lambda L, x, t: L.nn.functional.kl_div(x.log_softmax(1), t.softmax(1), reduction="batchmean"),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_target_gradient_is_the_numerical_one(name):
    x = et.tensor(R.standard_normal((3, 4)), requires_grad=True)
    t = et.tensor(R.standard_normal((3, 4)), requires_grad=True)
    assert et.autograd.gradcheck(lambda a, b: LOSSES[name](et, a, b), (x, t))


@pytest.mark.parametrize("name", list(LOSSES))
def test_target_gradient_matches_torch(name):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    x0, t0 = R.standard_normal((3, 4)), R.standard_normal((3, 4))
    grads = []
    for lib in (et, torch):
        x, t = lib.tensor(x0, requires_grad=True), lib.tensor(t0, requires_grad=True)
        LOSSES[name](lib, x, t).backward()
        grads.append((x.grad.numpy(), t.grad.numpy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
