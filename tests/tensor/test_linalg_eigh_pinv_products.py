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


# -- products and the pseudo-inverse ---------------------------------------------------------
def _r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


PRODUCTS = {
    "matrix_power_3": (lambda L, a: L.linalg.matrix_power(a, 3), [_r(2, 3, 3)]),
    "matrix_power_0": (lambda L, a: L.linalg.matrix_power(a, 0) + a, [_r(3, 3)]),
    "matrix_power_neg": (lambda L, a: L.linalg.matrix_power(a, -2), [_r(3, 3) + 3 * np.eye(3)]),
    "multi_dot": (lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), [_r(3), _r(3, 4, seed=1), _r(4, 2, seed=2)]),
    "vecdot": (lambda L, a, b: L.linalg.vecdot(a, b, dim=0), [_r(3, 4), _r(3, 4, seed=1)]),
    "cross": (lambda L, a, b: L.linalg.cross(a, b), [_r(4, 3), _r(1, 3, seed=1)]),
    "cross_dim0": (lambda L, a, b: L.linalg.cross(a, b, dim=0), [_r(3, 2), _r(3, 2, seed=1)]),
    "pinv_tall": (lambda L, a: L.linalg.pinv(a), [_r(5, 3)]),
    "pinv_wide_batch": (lambda L, a: L.linalg.pinv(a), [_r(2, 2, 4)]),
    "linalg_matmul": (lambda L, a, b: L.linalg.matmul(a, b), [_r(2, 3), _r(3, 2, seed=1)]),
    "linalg_diagonal": (lambda L, a: L.linalg.diagonal(a, offset=1), [_r(2, 3, 3)]),
    "select": (lambda L, a: L.select(a, 1, -1) * 2 + a.select(0, 0).sum(), [_r(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products_gradcheck(name):
    fn, arrays = PRODUCTS[name]
    assert gradcheck(lambda *ts: fn(et, *ts), tuple(et.tensor(a, requires_grad=True) for a in arrays))


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products_match_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    fn, arrays = PRODUCTS[name]
    results = []
    for lib in (et, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *ts)
        (out * lib.tensor(_r(*out.shape, seed=5))).sum().backward()
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_pinv_of_a_rank_deficient_matrix_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    A = np.outer(np.arange(1.0, 4.0), np.arange(1.0, 5.0))  # rank 1
    np.testing.assert_allclose(et.linalg.pinv(et.tensor(A)).numpy(), torch.linalg.pinv(torch.tensor(A)).numpy(),
                               atol=1e-12)
    np.testing.assert_allclose(et.linalg.pinv(et.tensor(A), atol=0.5).numpy(),
                               torch.linalg.pinv(torch.tensor(A), atol=0.5).numpy(), atol=1e-12)


@pytest.mark.parametrize("bad", [lambda L: L.linalg.matrix_power(L.ones(2, 3), 2),
                                 lambda L: L.linalg.multi_dot([L.ones(2)]),
                                 lambda L: L.linalg.cross(L.ones(2, 2), L.ones(2, 2)),
                                 lambda L: L.linalg.cross(L.ones(2, 3), L.ones(3)),
                                 lambda L: L.ones(3).select(0, 5)])
def test_product_errors_match_torch(bad):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    with pytest.raises((RuntimeError, IndexError)) as theirs:
        bad(torch)
    with pytest.raises(type(theirs.value)) as mine:
        bad(et)
    assert str(mine.value) == str(theirs.value)
