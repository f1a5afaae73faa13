"""``torch.linalg.eigh`` / ``eigvalsh``: values, gradients (distinct eigenvalues only), errors."""
import numpy as np
import pytest

import edutorch as et
from edutorch.autograd import gradcheck

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def _symmetric(n, batch=(), seed=0):
    """A random symmetric matrix with well-separated eigenvalues 1, 3, 5, ... (rotated)."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    D = np.diag(np.arange(n) * 2.0 + 1.0)
    return Q @ D @ np.swapaxes(Q, -1, -2)


def _loss(lib, X, W):
    """Sign-invariant in the eigenvectors, so it is a function of A (eigenvectors are defined up to sign)."""
    L, V = lib.linalg.eigh(X)
    return (L * lib.arange(L.shape[-1]).to(L.dtype)).sum() + (V ** 2 * W).sum()


@pytest.mark.parametrize("n,batch", [(3, ()), (4, (2,)), (2, (2, 3))])
def test_eigh_reconstructs_and_orders(n, batch):
    A = _symmetric(n, batch)
    L, V = et.linalg.eigh(et.tensor(A))
    assert np.all(np.diff(L.numpy(), axis=-1) > 0)
    np.testing.assert_allclose(L.numpy(), np.broadcast_to(np.arange(n) * 2.0 + 1.0, batch + (n,)), rtol=1e-12)
    np.testing.assert_allclose((V @ (L.unsqueeze(-1) * V.mT)).numpy(), A, atol=1e-12)


@pytest.mark.parametrize("n,batch", [(3, ()), (4, (2,))])
def test_eigh_gradcheck_on_symmetric_inputs(n, batch):
    W = et.tensor(np.random.default_rng(1).standard_normal(batch + (n, n)))
    A = et.tensor(_symmetric(n, batch), requires_grad=True)
    assert gradcheck(lambda X: _loss(et, (X + X.mT) / 2, W), (A,))
    assert gradcheck(lambda X: et.linalg.eigvalsh((X + X.mT) / 2), (A,))


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_values_and_gradients_match_torch(uplo):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    A = _symmetric(4, (2,))
    A_noisy = A + np.triu(np.random.default_rng(3).standard_normal(A.shape), 1) * (uplo == "L")  # unread triangle
    W = np.random.default_rng(1).standard_normal(A.shape)
    results = []
    for lib in (et, torch):
        X = lib.tensor(A_noisy, requires_grad=True)
        L, V = lib.linalg.eigh(X, UPLO=uplo)
        loss = (L * lib.arange(4).to(L.dtype)).sum() + (V ** 2 * lib.tensor(W)).sum()
        loss.backward()
        results.append((L.detach().numpy(), np.abs(V.detach().numpy()), X.grad.numpy(), type(L.grad_fn).__name__))
        w = lib.linalg.eigvalsh(lib.tensor(A_noisy), UPLO=uplo)
        np.testing.assert_allclose(w.numpy(), results[-1][0], rtol=1e-12)
    (Le, Ve, Ge, ne), (Lt, Vt, Gt, nt) = results
    np.testing.assert_allclose(Le, Lt, rtol=1e-12)
    np.testing.assert_allclose(Ve, Vt, atol=1e-10)
    np.testing.assert_allclose(Ge, Gt, atol=1e-10)
    assert ne == nt


def test_eigh_named_tuple_and_errors_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    r = et.linalg.eigh(et.eye(2))
    assert r.eigenvalues.tolist() == [1.0, 1.0] and type(r).__name__ == "linalg_eigh"
    for bad in (lambda L: L.linalg.eigh(L.ones(2, 3)), lambda L: L.linalg.eigh(L.ones(3)),
                lambda L: L.linalg.eigh(L.ones(2, 2, dtype=L.int64)), lambda L: L.linalg.eigh(L.eye(2), UPLO="X")):
        with pytest.raises(RuntimeError) as theirs:
            bad(torch)
        with pytest.raises(RuntimeError) as mine:
            bad(et)
        assert str(mine.value) == str(theirs.value)
