"""torch.linalg and the matrix ops (triu/tril, diagonal/diag, dist, matrix_exp, det, inv).

Each case in ``CASES`` is written against a library argument, so it runs on
edutorch (float64 gradcheck, no torch needed) and on real PyTorch (parity of
values, gradients and ``grad_fn`` names).  Decompositions are compared through
quantities that do not depend on the sign choice of singular/QR vectors.
"""
import numpy as np
import pytest

import edutorch as et
from edutorch.autograd import gradcheck, gradgradcheck

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def _rng(seed=0):
    return np.random.default_rng(seed)


def well_conditioned(n, batch=(), seed=0):
    """Random square matrices with singular values far from 0 and from each other."""
    rng = _rng(seed)
    return rng.standard_normal(batch + (n, n)) + 3 * np.eye(n)


def spread(m, n, batch=(), seed=0):
    """A random m x n matrix with distinct singular values (2, 3, 4, ... times random rotations)."""
    rng = _rng(seed)
    k = min(m, n)
    U, _ = np.linalg.qr(rng.standard_normal(batch + (m, k)))
    V, _ = np.linalg.qr(rng.standard_normal(batch + (n, k)))
    S = np.arange(2.0, 2.0 + k)[::-1]
    return (U * S[..., None, :]) @ np.swapaxes(V, -1, -2)


def svd_invariant(lib, A, full_matrices=False):
    """A function of U, S, Vh that does not change when a singular pair flips sign."""
    U, S, Vh = lib.linalg.svd(A, full_matrices=full_matrices)
    k = S.shape[-1]
    Uk, Vk = U[..., :k], Vh[..., :k, :]
    return Uk @ Uk.mT, Vk.mT @ Vk, S


def qr_signfree(lib, A, mode="reduced"):
    """Q and R with each R row made to start positive (undoes the sign freedom of QR)."""
    Q, R = lib.linalg.qr(A, mode=mode)
    k = min(A.shape[-2], A.shape[-1])
    signs = R.diagonal(0, -2, -1)[..., :k].sign()
    return Q[..., :k] * signs.unsqueeze(-2), R[..., :k, :] * signs.unsqueeze(-1)


# name: (fn(lib, *tensors), list of input arrays, grad_fn name of the first output or None)
CASES = {
    "triu": (lambda lib, a: lib.triu(a), [np.arange(12.0).reshape(3, 4) + 1], "TriuBackward0"),
    "triu_k1_batch": (lambda lib, a: a.triu(1), [_rng(1).standard_normal((2, 3, 4))], "TriuBackward0"),
    "tril_kneg1": (lambda lib, a: lib.tril(a, -1), [_rng(2).standard_normal((4, 3))], "TrilBackward0"),
    "tril_method": (lambda lib, a: a.tril(), [_rng(3).standard_normal((2, 3, 3))], "TrilBackward0"),
    "diagonal": (lambda lib, a: lib.diagonal(a), [_rng(4).standard_normal((3, 4))], "DiagonalBackward0"),
    "diagonal_offset_dims": (lambda lib, a: a.diagonal(1, -1, 0),
                             [_rng(5).standard_normal((4, 2, 3))], "DiagonalBackward0"),
    "diag_matrix": (lambda lib, a: lib.diag(a, -1), [_rng(6).standard_normal((3, 4))],
                    "DiagonalBackward0_copy"),
    "diag_vector": (lambda lib, a: lib.diag(a, 2), [_rng(7).standard_normal(3)], "DiagEmbedBackward0"),
    "dist_2": (lambda lib, a, b: lib.dist(a, b), [_rng(8).standard_normal((2, 3)),
                                                  _rng(9).standard_normal(3)], "DistBackward0"),
    "dist_1": (lambda lib, a, b: lib.dist(a, b, 1), [_rng(8).standard_normal(4),
                                                     _rng(9).standard_normal(4)], "DistBackward0"),
    "dist_3": (lambda lib, a, b: a.dist(b, 3), [_rng(8).standard_normal(4),
                                                _rng(9).standard_normal(4)], "DistBackward0"),
    "dist_inf": (lambda lib, a, b: lib.dist(a, b, float("inf")),
                 [_rng(8).standard_normal(5), _rng(9).standard_normal(5)], "DistBackward0"),
    "matrix_exp": (lambda lib, a: lib.matrix_exp(a), [_rng(10).standard_normal((3, 3))],
                   "LinalgMatrixExpBackward0"),
    "linalg.matrix_exp_batch": (lambda lib, a: lib.linalg.matrix_exp(a),
                                [_rng(11).standard_normal((2, 3, 3))], "LinalgMatrixExpBackward0"),
    "solve": (lambda lib, a, b: lib.linalg.solve(a, b), [well_conditioned(3),
                                                         _rng(12).standard_normal((3, 2))],
              "LinalgSolveExBackward0"),
    "solve_vector": (lambda lib, a, b: lib.linalg.solve(a, b),
                     [well_conditioned(3), _rng(13).standard_normal(3)], "LinalgSolveExBackward0"),
    "solve_broadcast": (lambda lib, a, b: lib.linalg.solve(a, b),
                        [well_conditioned(3), _rng(14).standard_normal((2, 3, 2))],
                        "LinalgSolveExBackward0"),
    "solve_right": (lambda lib, a, b: lib.linalg.solve(a, b, left=False),
                    [well_conditioned(3), _rng(15).standard_normal((2, 3))], "LinalgSolveExBackward0"),
    "solve_right_broadcast": (lambda lib, a, b: lib.linalg.solve(a, b, left=False),
                              [well_conditioned(3, (2,)), _rng(16).standard_normal((4, 3))],
                              "LinalgSolveExBackward0"),
    "inv": (lambda lib, a: lib.linalg.inv(a), [well_conditioned(3)], "LinalgInvExBackward0"),
    "inverse_batch": (lambda lib, a: lib.inverse(a), [well_conditioned(3, (2,))],
                      "LinalgInvExBackward0"),
    "det": (lambda lib, a: lib.linalg.det(a), [well_conditioned(3)], "LinalgDetBackward0"),
    "det_batch": (lambda lib, a: a.det(), [well_conditioned(2, (3,))], "LinalgDetBackward0"),
    "svd_square": (lambda lib, a: svd_invariant(lib, a), [spread(3, 3)], None),
    "svd_tall": (lambda lib, a: svd_invariant(lib, a), [spread(4, 2)], None),
    "svd_wide_batch": (lambda lib, a: svd_invariant(lib, a), [spread(2, 4, (2,))], None),
    "svd_full_matrices": (lambda lib, a: svd_invariant(lib, a, True), [spread(4, 3)], None),
    "svdvals": (lambda lib, a: lib.linalg.svdvals(a), [spread(3, 5)], "LinalgSvdBackward0"),
    "qr_square": (lambda lib, a: qr_signfree(lib, a), [well_conditioned(3)], None),
    "qr_tall": (lambda lib, a: qr_signfree(lib, a), [spread(4, 3)], None),
    "qr_wide_batch": (lambda lib, a: qr_signfree(lib, a), [spread(2, 4, (2,))], None),
    "vector_norm": (lambda lib, a: lib.linalg.vector_norm(a, 3, dim=1),
                    [_rng(16).standard_normal((2, 3))], "LinalgVectorNormBackward0"),
    "norm_default": (lambda lib, a: lib.linalg.norm(a), [_rng(17).standard_normal((2, 3, 2))],
                     "LinalgVectorNormBackward0"),
    "norm_vector_ord": (lambda lib, a: lib.linalg.norm(a, 1), [_rng(18).standard_normal(4) + 0.1],
                        "LinalgVectorNormBackward0"),
    "norm_dim_pair": (lambda lib, a: lib.linalg.norm(a, "nuc", dim=(0, 2)),
                      [spread(3, 2, (4,)).transpose(1, 0, 2)], "SumBackward1"),
    "matrix_norm_fro": (lambda lib, a: lib.linalg.matrix_norm(a), [_rng(19).standard_normal((2, 3, 4))],
                        "LinalgVectorNormBackward0"),
    "matrix_norm_nuc": (lambda lib, a: lib.linalg.matrix_norm(a, "nuc"), [spread(3, 4)], "SumBackward1"),
    "matrix_norm_2": (lambda lib, a: lib.linalg.matrix_norm(a, 2), [spread(4, 3, (2,))], "AmaxBackward0"),
    "matrix_norm_-2": (lambda lib, a: lib.linalg.matrix_norm(a, -2), [spread(3, 3)], "AminBackward0"),
    "matrix_norm_1": (lambda lib, a: lib.linalg.matrix_norm(a, 1), [spread(3, 4)], "AmaxBackward0"),
    "matrix_norm_-1": (lambda lib, a: lib.linalg.matrix_norm(a, -1), [spread(3, 4)], "AminBackward0"),
    "matrix_norm_inf": (lambda lib, a: lib.linalg.matrix_norm(a, float("inf")), [spread(4, 3)],
                        "AmaxBackward0"),
    "matrix_norm_-inf_keepdim": (lambda lib, a: lib.linalg.matrix_norm(a, -float("inf"), keepdim=True),
                                 [spread(4, 3, (2,))], "AminBackward0"),
    "matrix_norm_nuc_dims_keepdim": (lambda lib, a: lib.linalg.matrix_norm(a, "nuc", (0, 2), True),
                                     [spread(3, 2, (4,)).transpose(1, 0, 2)], "PermuteBackward0"),
    "linalg.norm_2": (lambda lib, a: lib.linalg.norm(a, 2), [spread(3, 3)], "AmaxBackward0"),
}


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _run(lib, name, requires_grad=True):
    fn, arrays, _ = CASES[name]
    inputs = [lib.tensor(a.copy(), dtype=lib.float64, requires_grad=requires_grad) for a in arrays]
    return inputs, _as_tuple(fn(lib, *inputs))


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    fn, arrays, _ = CASES[name]
    inputs = tuple(et.tensor(a.copy(), dtype=et.float64, requires_grad=True) for a in arrays)
    assert gradcheck(lambda *xs: fn(et, *xs), inputs)


@pytest.mark.parametrize("name", ["triu", "diagonal", "diag_vector", "dist_2", "solve", "inv",
                                  "det", "svdvals", "svd_tall", "matrix_exp", "qr_tall",
                                  "matrix_norm_nuc"])
def test_gradgradcheck(name):
    fn, arrays, _ = CASES[name]
    inputs = tuple(et.tensor(a.copy(), dtype=et.float64, requires_grad=True) for a in arrays)
    assert gradgradcheck(lambda *xs: fn(et, *xs), inputs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_parity_values_grads_and_grad_fn(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    e_in, e_out = _run(et, name)
    t_in, t_out = _run(torch, name)
    assert len(e_out) == len(t_out)
    rng = _rng(99)
    e_loss = t_loss = 0
    for e, t in zip(e_out, t_out):
        assert tuple(e.shape) == tuple(t.shape)
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-10)
        w = rng.standard_normal(tuple(t.shape))
        e_loss = e_loss + (e * et.tensor(w)).sum()
        t_loss = t_loss + (t * torch.tensor(w)).sum()
    want_name = CASES[name][2]
    if want_name is not None:
        assert type(e_out[0].grad_fn).__name__ == type(t_out[0].grad_fn).__name__ == want_name
    e_loss.backward()
    t_loss.backward()
    for e, t in zip(e_in, t_in):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_svd_returns_what_torch_returns():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    A = spread(4, 3, seed=3)
    for full in (True, False):
        e = et.linalg.svd(et.tensor(A), full_matrices=full)
        t = torch.linalg.svd(torch.tensor(A), full_matrices=full)
        assert [tuple(x.shape) for x in e] == [tuple(x.shape) for x in t]
        np.testing.assert_allclose(e.S.numpy(), t.S.numpy(), rtol=1e-12)
        # the same LAPACK routine (gesdd) picks the same signs
        np.testing.assert_allclose(np.abs(e.U.numpy()), np.abs(t.U.numpy()), atol=1e-12)
        np.testing.assert_allclose(np.abs(e.Vh.numpy()), np.abs(t.Vh.numpy()), atol=1e-12)
    U, S, Vh = et.linalg.svd(et.tensor(A), full_matrices=False)
    np.testing.assert_allclose((U.numpy() * S.numpy()) @ Vh.numpy(), A, atol=1e-12)
    assert type(e).__name__ == type(t).__name__ == "linalg_svd"
    assert repr(et.linalg.svd(et.eye(2))) == repr(torch.linalg.svd(torch.eye(2)))
    q_e, q_t = et.linalg.qr(et.eye(2)), torch.linalg.qr(torch.eye(2))
    assert (q_e.Q.shape, q_e.R.shape) == (q_t.Q.shape, q_t.R.shape)
    assert type(q_e).__name__ == type(q_t).__name__ == "linalg_qr"


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 5)])
def test_qr_modes_match_torch(mode, shape):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    A = spread(*shape, seed=4)
    e, t = et.linalg.qr(et.tensor(A), mode=mode), torch.linalg.qr(torch.tensor(A), mode=mode)
    for x, y in zip(e, t):
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(np.abs(x.numpy()), np.abs(y.numpy()), atol=1e-12)


def test_qr_backward_errors_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for mode, shape in (("r", (3, 3)), ("complete", (4, 2))):
        msgs = []
        for lib in (et, torch):
            A = lib.tensor(spread(*shape), requires_grad=True)
            Q, R = lib.linalg.qr(A, mode=mode)
            with pytest.raises(RuntimeError) as info:
                R.sum().backward()
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1]


@pytest.mark.parametrize("kwargs", [{}, {"atol": 1.0}, {"rtol": 0.3}, {"atol": 0.5, "rtol": 0.1},
                                    {"hermitian": True}])
def test_matrix_rank_matches_torch(kwargs):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    rng = _rng(5)
    low = rng.standard_normal((3, 5, 2)) @ rng.standard_normal((3, 2, 5))  # rank 2
    sym = spread(4, 4, seed=6)
    sym = sym + sym.T
    matrices = (sym, np.zeros((2, 2)), sym.astype(np.float32))
    if not kwargs.get("hermitian"):
        matrices += (low, spread(4, 3), low.astype(np.float32))
    for A in matrices:
        e = et.linalg.matrix_rank(et.tensor(A), **kwargs)
        t = torch.linalg.matrix_rank(torch.tensor(A), **kwargs)
        assert e.dtype == et.int64
        assert e.tolist() == t.tolist()


def test_matrix_rank_counts_rank():
    rng = _rng(7)
    A = rng.standard_normal((6, 3)) @ rng.standard_normal((3, 6))
    assert et.linalg.matrix_rank(et.tensor(A)).item() == 3
    assert et.linalg.matrix_rank(et.eye(4)).item() == 4


def test_diagonal_is_a_writable_view():
    x = et.zeros(3, 3)
    d = x.diagonal()
    d.fill_(1.0)
    np.testing.assert_array_equal(x.numpy(), np.eye(3))
    assert x._version == d._version == 1


def test_triu_tril_in_place():
    x = et.ones(3, 3)
    x.triu_(1)
    np.testing.assert_array_equal(x.numpy(), np.triu(np.ones((3, 3)), 1))
    y = et.ones(2, 3, 3)
    y.tril_()
    np.testing.assert_array_equal(y.numpy(), np.tril(np.ones((2, 3, 3))))


def test_symmetric_and_orthogonal_results():
    A = et.tensor(_rng(8).standard_normal((4, 4)))
    S = A.triu() + A.triu(1).transpose(-1, -2)
    np.testing.assert_allclose(S.numpy(), S.numpy().T)
    Q = et.linalg.matrix_exp(A - A.T)
    np.testing.assert_allclose((Q.T @ Q).numpy(), np.eye(4), atol=1e-12)
    assert et.dist(Q.T @ Q, et.eye(4, dtype=et.float64)).item() < 1e-12


# -- errors: same type and message as PyTorch ------------------------------------------------
ERROR_CASES = {
    "triu_1d": lambda lib: lib.triu(lib.randn(4)),
    "tril_1d": lambda lib: lib.randn(4).tril(),
    "triu_float_diagonal": lambda lib: lib.triu(lib.randn(3, 3), 1.5),
    "matrix_exp_nonsquare": lambda lib: lib.matrix_exp(lib.randn(3, 4)),
    "matrix_exp_1d": lambda lib: lib.linalg.matrix_exp(lib.randn(4)),
    "matrix_exp_long": lambda lib: lib.linalg.matrix_exp(lib.ones(3, 3, dtype=lib.long)),
    "svd_1d": lambda lib: lib.linalg.svd(lib.randn(4)),
    "svdvals_1d": lambda lib: lib.linalg.svdvals(lib.randn(4)),
    "svd_long": lambda lib: lib.linalg.svd(lib.ones(3, 3, dtype=lib.long)),
    "matrix_rank_1d": lambda lib: lib.linalg.matrix_rank(lib.randn(4)),
    "matrix_rank_long": lambda lib: lib.linalg.matrix_rank(lib.ones(3, 3, dtype=lib.long)),
    "solve_nonsquare": lambda lib: lib.linalg.solve(lib.randn(3, 4), lib.randn(3, 4)),
    "solve_incompatible": lambda lib: lib.linalg.solve(lib.randn(3, 3), lib.randn(4, 2)),
    "solve_incompatible_vector": lambda lib: lib.linalg.solve(lib.randn(3, 3), lib.randn(4)),
    "solve_singular": lambda lib: lib.linalg.solve(lib.zeros(3, 3), lib.randn(3, 3)),
    "solve_1d": lambda lib: lib.linalg.solve(lib.randn(4), lib.randn(4)),
    "solve_right_incompatible": lambda lib: lib.linalg.solve(lib.randn(3, 3), lib.randn(3, 4), left=False),
    "solve_right_vector": lambda lib: lib.linalg.solve(lib.randn(3, 3), lib.randn(3), left=False),
    "solve_dtypes": lambda lib: lib.linalg.solve(lib.randn(3, 3), lib.randn(3, 2, dtype=lib.float64)),
    "inv_nonsquare": lambda lib: lib.linalg.inv(lib.randn(3, 4)),
    "inv_singular": lambda lib: lib.linalg.inv(lib.zeros(3, 3)),
    "inv_singular_later_pivot": lambda lib: lib.linalg.inv(lib.tensor([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])),
    "inv_1d": lambda lib: lib.linalg.inv(lib.randn(4)),
    "inv_long": lambda lib: lib.linalg.inv(lib.ones(3, 3, dtype=lib.long)),
    "det_nonsquare": lambda lib: lib.linalg.det(lib.randn(3, 4)),
    "det_1d": lambda lib: lib.det(lib.randn(4)),
    "det_long": lambda lib: lib.linalg.det(lib.ones(3, 3, dtype=lib.long)),
    "qr_1d": lambda lib: lib.linalg.qr(lib.randn(4)),
    "qr_mode": lambda lib: lib.linalg.qr(lib.randn(3, 4), mode="foo"),
    "matrix_norm_1d": lambda lib: lib.linalg.matrix_norm(lib.randn(4)),
    "matrix_norm_order": lambda lib: lib.linalg.matrix_norm(lib.randn(3, 4), 3),
    "matrix_norm_order_str": lambda lib: lib.linalg.matrix_norm(lib.randn(3, 4), "foo"),
    "matrix_norm_long": lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3, dtype=lib.long)),
    "matrix_norm_same_dims": lambda lib: lib.linalg.matrix_norm(lib.randn(3, 4), dim=(0, 0)),
    "norm_3d_with_ord": lambda lib: lib.linalg.norm(lib.randn(2, 3, 4), 2),
    "norm_fro_vector": lambda lib: lib.linalg.norm(lib.randn(4), "fro"),
    "norm_nuc_vector": lambda lib: lib.linalg.norm(lib.randn(4), "nuc"),
    "norm_ord_3_matrix": lambda lib: lib.linalg.norm(lib.randn(3, 4), 3),
    "norm_three_dims": lambda lib: lib.linalg.norm(lib.randn(3, 4), dim=(0, 1, 1)),
    "vector_norm_long": lambda lib: lib.linalg.vector_norm(lib.ones(3, dtype=lib.long)),
    "vector_norm_str": lambda lib: lib.linalg.vector_norm(lib.randn(4), "fro"),
    "vector_norm_inf_empty": lambda lib: lib.linalg.vector_norm(lib.zeros(0), float("inf")),
    "dist_broadcast": lambda lib: lib.dist(lib.randn(4), lib.randn(3)),
    "dist_long": lambda lib: lib.dist(lib.ones(3, dtype=lib.long), lib.ones(3, dtype=lib.long)),
    "dist_str": lambda lib: lib.dist(lib.randn(3), lib.randn(3), "fro"),
    "diag_3d": lambda lib: lib.diag(lib.randn(2, 3, 4)),
    "diagonal_1d": lambda lib: lib.diagonal(lib.randn(4)),
    "diagonal_same_dims": lambda lib: lib.diagonal(lib.randn(3, 4), 0, -2, 0),
    "diagonal_dim_range": lambda lib: lib.diagonal(lib.randn(3, 4), 0, 0, 5),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_match_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    with pytest.raises(Exception) as want:
        ERROR_CASES[name](torch)
    with pytest.raises(Exception) as got:
        ERROR_CASES[name](et)
    assert type(got.value).__name__ == type(want.value).__name__
    assert str(got.value) == str(want.value)


def test_linalg_error_is_a_runtime_error():
    with pytest.raises(et.linalg.LinAlgError, match="singular"):
        et.linalg.inv(et.zeros(2, 2))
    assert issubclass(et.linalg.LinAlgError, RuntimeError)


def test_singular_value_gradient_with_repeated_values():
    """Losses of S alone stay defined when singular values repeat (here: all equal)."""
    A = et.tensor(np.eye(3), requires_grad=True)
    et.linalg.matrix_norm(A, "nuc").backward()
    np.testing.assert_allclose(A.grad.numpy(), np.eye(3), atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_outputs_keep_their_dtype(name):
    """float32 in, float32 out (and float32 gradients), as in PyTorch."""
    fn, arrays, _ = CASES[name]
    inputs = [et.tensor(a.astype(np.float32), requires_grad=True) for a in arrays]
    outs = _as_tuple(fn(et, *inputs))
    assert all(o.dtype == et.float32 for o in outs)
    sum(o.sum() for o in outs).backward()
    assert all(t.grad.dtype == et.float32 for t in inputs)


SINGULAR = [
    np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]]),  # rank 2: the cofactors are not all zero
    np.array([[[1.0, 2], [2, 4]], [[1, 0], [0, 2]]]),  # a batch: one singular, one invertible
    np.zeros((3, 3)),
]


@pytest.mark.parametrize("i", range(len(SINGULAR)))
def test_det_gradient_at_singular_matrices(i):
    """Jacobi's formula with cofactors from the SVD: checked against finite differences.

    (det is a polynomial, so central differences are exact up to rounding.)
    """
    A = et.tensor(SINGULAR[i], requires_grad=True)
    assert gradcheck(et.linalg.det, (A,))


def cofactor_matrix(A):
    """C[i, j] = (-1)**(i+j) * det(A without row i and column j), from the definition."""
    n = A.shape[0]
    C = np.empty_like(A)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(A, i, axis=0), j, axis=1)
            C[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return C


def test_det_gradient_at_singular_matrix_is_the_cofactor_matrix():
    """d det(A) / dA = cofactor matrix of A (Jacobi's formula), also where det(A) = 0.

    Not compared with torch: at a singular matrix torch's answer depends on the
    CPU's LAPACK kernels (4.0 on one machine, 0.0 on another for the same matrix).
    """
    for A in (SINGULAR[0], SINGULAR[2]):
        e = et.tensor(A, requires_grad=True)
        et.linalg.det(e).backward()
        np.testing.assert_allclose(e.grad.numpy(), cofactor_matrix(A), atol=1e-12)
    assert np.abs(cofactor_matrix(SINGULAR[0])).max() > 1  # rank n-1: a non-zero gradient
