"""torch.utils.checkpoint: same gradients as without checkpointing, activations recomputed."""
import warnings

import numpy as np
import pytest

import edutorch as et
from edutorch import nn
from edutorch.utils.checkpoint import checkpoint, checkpoint_sequential


def make_model():
    et.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Dropout(0.3), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))


def grads(model, x):
    return [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]


def test_checkpoint_gives_the_same_gradients_with_dropout():
    x = et.randn(5, 6, requires_grad=True)
    plain = make_model()
    et.manual_seed(1)
    plain(x).pow(2).sum().backward()
    expected = grads(plain, x)

    x.grad = None
    model = make_model()
    et.manual_seed(1)  # the same dropout mask in forward; the recomputation reuses it
    out = checkpoint(model, x, use_reentrant=True)
    assert type(out.grad_fn).__name__ == "CheckpointFunctionBackward"
    out.pow(2).sum().backward()
    for got, want in zip(grads(model, x), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_forward_saves_no_intermediate_graph():
    x = et.randn(3, requires_grad=True)
    out = checkpoint(lambda t: t.sin().exp(), x, use_reentrant=True)
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions] == ["AccumulateGrad"]


def test_checkpoint_sequential_matches_plain_forward_and_backward():
    x = et.randn(4, 6, requires_grad=True)
    plain = make_model().eval()
    plain(x).sum().backward()
    expected = grads(plain, x)
    x.grad = None
    model = make_model().eval()
    checkpoint_sequential(model, 3, x, use_reentrant=True).sum().backward()
    for got, want in zip(grads(model, x), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_warnings_and_errors_like_pytorch():
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda t: t * 2, et.ones(2, requires_grad=True))
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(lambda t: t * 2, et.ones(2), use_reentrant=True)
    assert not out.requires_grad
    with pytest.raises(ValueError, match="reentrant checkpoint only"):
        checkpoint(lambda t: t * 2, et.ones(2, requires_grad=True), use_reentrant=False)


def test_gradients_match_real_torch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    data = np.random.default_rng(0).standard_normal((3, 4))
    results = []
    for lib, ckpt in ((et, checkpoint), (torch, torch_checkpoint)):
        x = lib.tensor(data, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = ckpt(lambda t: (t.sin() * t).tanh(), x, use_reentrant=True)
        out.sum().backward()
        results.append((type(out.grad_fn).__name__, x.grad.numpy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)
