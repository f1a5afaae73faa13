"""Double backward through ``F.pad`` and ``F.embedding``.

Their gradients are linear maps of the incoming gradient (crop / add back for
a pad, scatter-add into the table for a lookup).  Under ``create_graph=True``
those maps are recorded ops whose own backward is the forward map again, so
second derivatives flow through them instead of silently stopping there.
"""
import numpy as np
import pytest

import edutorch as et
import edutorch.nn.functional as EF

R = np.random.default_rng(5)
PAD_MODES = ["constant", "reflect", "replicate", "circular"]


def _pad_loss(F, x, w, mode):
    """A loss whose input gradient depends on x and w: so the penalty reaches both."""
    return (F.pad(x, (2, 1, 1, 2), mode=mode) ** 3 * w).sum()


@pytest.mark.parametrize("mode", PAD_MODES)
def test_pad_gradgradcheck(mode):
    x = et.tensor(R.standard_normal((1, 2, 3, 4)), requires_grad=True)
    assert et.autograd.gradgradcheck(lambda t: EF.pad(t, (2, 1, 1, 2), mode=mode), (x,))


@pytest.mark.parametrize("mode", PAD_MODES)
def test_pad_gradient_penalty_matches_torch(mode):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    x_np, w_np = R.standard_normal((1, 2, 3, 4)), R.standard_normal((1, 2, 6, 7))
    grads = []
    for lib, F in ((et, EF), (torch, torch.nn.functional)):
        x = lib.tensor(x_np, requires_grad=True)
        w = lib.tensor(w_np, requires_grad=True)
        (g,) = lib.autograd.grad(_pad_loss(F, x, w, mode), x, create_graph=True)
        (g ** 2).sum().backward()
        grads.append((g.detach().numpy(), x.grad.numpy(), w.grad.numpy()))
    for mine, theirs in zip(*grads):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def _embedding_loss(F, table, idx, padding_idx, scale):
    out = F.embedding(idx, table, padding_idx=padding_idx, scale_grad_by_freq=scale)
    return (out ** 3).sum()


@pytest.mark.parametrize("padding_idx,scale", [(None, False), (1, False), (None, True), (2, True)])
def test_embedding_gradgradcheck(padding_idx, scale):
    idx = et.tensor([[0, 2, 1], [2, 2, 3]])
    table = et.tensor(R.standard_normal((5, 3)), requires_grad=True)

    def lookup(t):
        return EF.embedding(idx, t, padding_idx=padding_idx, scale_grad_by_freq=scale)

    assert et.autograd.gradgradcheck(lookup, (table,))


@pytest.mark.parametrize("padding_idx,scale", [(None, False), (1, False), (2, True)])
def test_embedding_gradient_penalty_matches_torch(padding_idx, scale):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    idx_np, table_np = np.array([[0, 2, 1], [2, 2, 3]]), R.standard_normal((5, 3))
    grads = []
    for lib, F in ((et, EF), (torch, torch.nn.functional)):
        table = lib.tensor(table_np, requires_grad=True)
        loss = _embedding_loss(F, table, lib.tensor(idx_np), padding_idx, scale)
        (g,) = lib.autograd.grad(loss, table, create_graph=True)
        (g ** 2).sum().backward()
        grads.append((g.detach().numpy(), table.grad.numpy()))
    for mine, theirs in zip(*grads):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_plain_backward_builds_no_graph():
    x = et.tensor(R.standard_normal((1, 1, 2, 2)), requires_grad=True)
    table = et.tensor(R.standard_normal((3, 2)), requires_grad=True)
    (gx,) = et.autograd.grad(EF.pad(x, (1, 1)).sum(), x)
    (gt,) = et.autograd.grad(EF.embedding(et.tensor([0, 0, 2]), table).sum(), table)
    assert gx.grad_fn is None and not gx.requires_grad
    assert gt.grad_fn is None and gt.tolist() == [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]
