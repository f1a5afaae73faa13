"""The ops of ``_tensor_methods/composite.py`` and ``torch.<op>`` forms of ``_functional_more.py``:
values, dtypes and shapes as PyTorch's (parity, from one table), float64 numerical gradient
checks without torch, errors as PyTorch's."""
import warnings

import numpy as np
import pytest

import edutorch


def _inputs(lib):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    a[0, 0], a[1, 1] = 0.0, -2.5
    arrays = {"a": a, "b": rng.standard_normal((3, 4)), "v": rng.standard_normal(4), "w": rng.standard_normal(3),
              "p": rng.uniform(0.05, 0.95, (3, 4)), "sq": rng.standard_normal((3, 3)) + 3 * np.eye(3),
              "B": rng.standard_normal((2, 3, 4)), "C": rng.standard_normal((2, 4, 3)),
              "c3": rng.standard_normal((2, 3)), "d3": rng.standard_normal((2, 3)), "m": rng.standard_normal((4, 3))}
    out = {k: lib.tensor(v) for k, v in arrays.items()}
    out["i"] = lib.tensor([[12, -18, 7], [0, 5, 30]])
    out["j"] = lib.tensor([[8, 4, 3], [9, 0, 4]])
    out["nan"] = lib.tensor([1.0, float("nan"), 3.0, float("nan")])
    out["inf"] = lib.tensor([1.0, float("inf"), -float("inf"), -0.0])
    return out


# (name, fn(lib, inputs), differentiable inputs or ())
CASES = [
    ("absolute", lambda L, i: L.absolute(i["a"]), ("a",)),
    ("positive", lambda L, i: L.positive(i["a"]), ()),
    ("sgn", lambda L, i: L.sgn(i["a"]), ()),
    ("fix", lambda L, i: L.fix(i["a"] * 3), ()),
    ("frac", lambda L, i: L.frac(i["a"] * 3), ("a",)),
    ("ravel", lambda L, i: L.ravel(i["a"].t()), ("a",)),
    ("diagflat", lambda L, i: L.diagflat(i["v"], 1), ("v",)),
    ("ger", lambda L, i: L.ger(i["v"], i["w"]), ("v", "w")),
    ("vdot", lambda L, i: L.vdot(i["v"], i["v"] * 2), ("v",)),
    ("inner", lambda L, i: L.inner(i["a"], i["b"]), ("a", "b")),
    ("inner_scalar", lambda L, i: L.inner(i["a"], L.tensor(2.0, dtype=L.float64)), ("a",)),
    ("msort", lambda L, i: L.msort(i["a"]), ("a",)),
    ("rot90", lambda L, i: L.rot90(i["a"]), ("a",)),
    ("rot90_k2", lambda L, i: L.rot90(i["B"], 2, (1, 2)), ("B",)),
    ("rot90_k-1", lambda L, i: L.rot90(i["a"], -1, [1, 0]), ("a",)),
    ("logit", lambda L, i: L.logit(i["p"]), ("p",)),
    ("logit_eps", lambda L, i: L.logit(i["p"], 0.2), ("p",)),
    ("sinc", lambda L, i: L.sinc(i["a"]), ("a",)),
    ("copysign", lambda L, i: L.copysign(i["a"], i["b"]), ("a",)),
    ("copysign_scalar", lambda L, i: L.copysign(i["a"], -0.0), ("a",)),
    ("fmax", lambda L, i: L.fmax(i["nan"], L.tensor([0.0, 2.0, float("nan"), float("nan")], dtype=L.float32)), ()),
    ("fmax_grad", lambda L, i: L.fmax(i["a"], i["b"]), ("a", "b")),
    ("fmin_grad", lambda L, i: L.fmin(i["a"], i["b"]), ("a", "b")),
    ("float_power", lambda L, i: L.float_power(i["p"], 2.5), ("p",)),
    ("float_power_int", lambda L, i: L.float_power(i["j"], 2), ()),
    ("floor_divide", lambda L, i: i["i"].floor_divide(5), ()),
    ("ldexp", lambda L, i: L.ldexp(i["a"], i["j"][0, :1]), ("a",)),
    ("logcumsumexp", lambda L, i: L.logcumsumexp(i["a"], 1), ("a",)),
    ("logcumsumexp_inf", lambda L, i: L.logcumsumexp(i["inf"], 0), ()),
    ("aminmax", lambda L, i: L.aminmax(i["a"]), ()),
    ("aminmax_dim", lambda L, i: L.aminmax(i["a"], dim=1, keepdim=True), ()),
    ("addmv", lambda L, i: L.addmv(i["w"], i["a"], i["v"], beta=0.5, alpha=2), ("w", "a", "v")),
    ("addr", lambda L, i: L.addr(i["a"], i["w"], i["v"]), ("a", "w", "v")),
    ("addbmm", lambda L, i: L.addbmm(i["sq"], i["B"], i["C"], beta=0), ("B", "C")),
    ("matrix_power", lambda L, i: L.matrix_power(i["sq"], 3), ("sq",)),
    ("slogdet", lambda L, i: L.slogdet(i["sq"]), ("sq",)),
    ("logdet", lambda L, i: L.logdet(i["sq"]), ("sq",)),
    ("linalg.slogdet", lambda L, i: L.linalg.slogdet(-i["sq"]), ("sq",)),
    ("cross", lambda L, i: L.cross(i["c3"], i["d3"], dim=1), ("c3", "d3")),
    ("Tensor.cross", lambda L, i: i["c3"].cross(i["d3"], -1), ("c3", "d3")),
    ("signbit", lambda L, i: L.signbit(i["inf"]), ()),
    ("isposinf", lambda L, i: L.isposinf(i["inf"]), ()),
    ("isneginf", lambda L, i: L.isneginf(i["inf"]), ()),
    ("isreal", lambda L, i: L.isreal(i["a"]), ()),
    ("heaviside", lambda L, i: L.heaviside(i["a"], i["b"]), ()),
    ("nextafter", lambda L, i: L.nextafter(i["a"], i["b"]), ()),
    ("gcd", lambda L, i: L.gcd(i["i"], i["j"]), ()),
    ("lcm", lambda L, i: L.lcm(i["i"], i["j"]), ()),
    ("left_shift", lambda L, i: L.bitwise_left_shift(i["j"], 2), ()),
    ("right_shift", lambda L, i: L.bitwise_right_shift(i["i"], 1), ()),
    ("hsplit", lambda L, i: L.hsplit(i["a"], 2), ("a",)),
    ("vsplit", lambda L, i: i["a"].vsplit([1]), ("a",)),
    ("dsplit", lambda L, i: i["B"].dsplit(2), ("B",)),
    ("relu_", lambda L, i: L.relu_(i["a"].clone()), ()),
    ("sigmoid_", lambda L, i: L.sigmoid_(i["a"].clone()), ()),
    ("frac_", lambda L, i: i["a"].clone().frac_(), ()),
    ("eq_", lambda L, i: i["a"].clone().eq_(i["a"].round()), ()),
    ("greater_", lambda L, i: i["a"].clone().greater_(0.1), ()),
    ("logical_and_", lambda L, i: i["a"].clone().logical_and_(i["b"] > 0), ()),
    ("bitwise_xor_", lambda L, i: i["i"].clone().bitwise_xor_(i["j"]), ()),
    ("round_", lambda L, i: i["a"].clone().round_(decimals=1), ()),
    ("remainder_", lambda L, i: i["a"].clone().remainder_(0.7), ()),
    ("multiply_", lambda L, i: i["a"].clone().multiply_(i["b"]), ()),
    ("true_divide_", lambda L, i: i["a"].clone().true_divide_(3), ()),
    ("addmm_", lambda L, i: i["sq"].clone().addmm_(i["sq"], i["sq"], alpha=0.5), ()),
    ("addr_", lambda L, i: i["a"].clone().addr_(i["w"], i["v"], beta=2), ()),
    ("xlogy_", lambda L, i: i["p"].clone().xlogy_(i["p"]), ()),
    ("conv2d", lambda L, i: L.conv2d(i["B"].unsqueeze(0), i["B"].unsqueeze(0)[:, :, :2, :2], None, 1, 1), ()),
    ("layer_norm", lambda L, i: L.layer_norm(i["a"], (4,)), ()),
    ("batch_norm", lambda L, i: L.batch_norm(i["a"], None, None, None, None, True, 0.1, 1e-5, False), ()),
    ("embedding", lambda L, i: L.embedding(i["a"], L.tensor([2, 0, 2])), ()),
    ("dropout_eval", lambda L, i: L.dropout(i["a"], 0.5, False), ()),
    ("threshold", lambda L, i: L.threshold(i["a"], 0.1, -1.0), ()),
    ("hann_window", lambda L, i: L.hann_window(8), ()),
    ("hann_window_symmetric", lambda L, i: L.hann_window(5, periodic=False, dtype=L.float64), ()),
    ("hamming_window", lambda L, i: L.hamming_window(7), ()),
    ("bartlett_window", lambda L, i: L.bartlett_window(6), ()),
    ("blackman_window", lambda L, i: L.blackman_window(1), ()),
    ("unravel_index", lambda L, i: L.unravel_index(L.tensor([4, 7, -1]), (2, 4)), ()),
    ("vander", lambda L, i: L.vander(i["v"], 3), ("v",)),
    ("vander_increasing", lambda L, i: L.vander(i["w"], increasing=True), ("w",)),
    ("trapezoid", lambda L, i: L.trapezoid(i["a"]), ("a",)),
    ("trapezoid_x", lambda L, i: L.trapezoid(i["a"], i["v"].cumsum(0)), ("a",)),
    ("trapz_dx", lambda L, i: L.trapz(i["a"], dx=0.5, dim=0), ("a",)),
    ("cumulative_trapezoid", lambda L, i: L.cumulative_trapezoid(i["a"], dim=1), ("a",)),
    ("rsub", lambda L, i: L.rsub(i["a"], i["b"], alpha=2), ("a", "b")),
    ("fill", lambda L, i: L.fill(i["a"], 3.0), ()),
    ("scalar_tensor", lambda L, i: L.scalar_tensor(3), ()),
    ("slice_copy", lambda L, i: L.slice_copy(i["a"], 1, 1, 4, 2), ("a",)),
    ("t_copy", lambda L, i: L.t_copy(i["a"]), ("a",)),
    ("permute_copy", lambda L, i: L.permute_copy(i["B"], (2, 0, 1)), ("B",)),
    ("split_with_sizes", lambda L, i: L.split_with_sizes(i["a"], [1, 3], 1), ("a",)),
    ("unbind_copy", lambda L, i: L.unbind_copy(i["a"], 1), ("a",)),
    ("kl_div", lambda L, i: L.kl_div(i["p"].log(), i["p"].flip(0), 2), ("p",)),
    ("bce_with_logits", lambda L, i: L.binary_cross_entropy_with_logits(i["a"], i["p"], None, None, 0), ("a",)),
    ("pinverse", lambda L, i: L.pinverse(i["m"]), ("m",)),
    ("qr_complete", lambda L, i: L.qr(i["m"], some=False)[1].abs(), ()),
    ("constant_pad_nd", lambda L, i: L.constant_pad_nd(i["a"], [1, 0], 2.0), ("a",)),
    ("range", lambda L, i: L.range(1, 4, 0.5), ()),
    ("diagonal_scatter", lambda L, i: L.diagonal_scatter(i["a"], i["w"]), ("a", "w")),
    ("select_scatter", lambda L, i: L.select_scatter(i["a"], i["v"], 0, 1), ("a", "v")),
    ("slice_scatter", lambda L, i: L.slice_scatter(i["a"], i["b"][:, :2], 1, 1, 4, 2), ("a", "b")),
    ("can_cast", lambda L, i: L.tensor([L.can_cast(a, b) for a in (L.float32, L.int64, L.bool)
                                        for b in (L.float64, L.int32, L.bool)]), ()),
    ("frobenius_norm", lambda L, i: L.frobenius_norm(i["B"], (1, 2)), ("B",)),
    ("chain_matmul", lambda L, i: L.chain_matmul(i["a"], i["m"], i["sq"]), ("a", "m", "sq")),
    ("nonzero_static", lambda L, i: L.nonzero_static(i["a"] > 0.5, size=4), ()),
    ("nonzero_static_pad", lambda L, i: L.nonzero_static(i["a"] > 0.5, size=9, fill_value=7), ()),
]
IDS = [c[0] for c in CASES]


def _as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("name,fn,_", CASES, ids=IDS)
def test_values_match_torch(real_torch, name, fn, _):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _as_list(fn(real_torch, _inputs(real_torch)))
    got = _as_list(fn(edutorch, _inputs(edutorch)))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert (str(g.dtype), tuple(g.shape)) == (str(e.dtype), tuple(e.shape)), name
        tol = 1e-12 if g.dtype != edutorch.float32 else 1e-6  # float32: PyTorch's kernels sum in another order
        np.testing.assert_allclose(g.detach().numpy(), e.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,fn,wrt", [c for c in CASES if c[2]], ids=[c[0] for c in CASES if c[2]])
def test_float64_gradients_are_numerically_right(name, fn, wrt):
    inputs = _inputs(edutorch)
    leaves = [inputs[k].requires_grad_() for k in wrt]

    def f(*xs):
        values = dict(inputs, **dict(zip(wrt, xs)))
        outs = [o for o in _as_list(fn(edutorch, values)) if o.is_floating_point() and o.requires_grad]
        return tuple(outs)

    assert edutorch.autograd.gradcheck(f, tuple(leaves))


def test_named_tuples_match_torch(real_torch):
    for lib in (edutorch, real_torch):
        x = lib.tensor([[3.0, 1.0], [1.0, 2.0]])
        assert type(lib.aminmax(x)).__name__ == "aminmax" and lib.aminmax(x).max.item() == 3.0
        U, S, V = lib.svd(x)
        assert type(lib.svd(x)).__name__ == "svd"
        np.testing.assert_allclose((U @ lib.diag(S) @ V.T).numpy(), x.numpy(), atol=1e-6)
        U0, _, V0 = lib.svd(lib.ones(4, 2), compute_uv=False)
        assert U0.shape == (4, 4) and V0.shape == (2, 2) and not U0.any() and not V0.any()


@pytest.mark.parametrize("some", [True, False])
def test_svd_reconstructs_and_its_gradient_matches_torch(real_torch, some):
    """Singular vectors are defined up to sign: compare reconstructions and a sign-free function's gradient."""
    a = np.random.default_rng(3).standard_normal((5, 3))
    grads = []
    for lib in (edutorch, real_torch):
        x = lib.tensor(a, requires_grad=True)
        U, S, V = lib.svd(x, some=some)
        assert U.shape == ((5, 3) if some else (5, 5)) and V.shape == (3, 3)
        np.testing.assert_allclose((U[:, :3] @ lib.diag(S) @ V.mT).detach().numpy(), a, atol=1e-12)
        (S.sum() + (U[:, :3] @ V.mT).pow(2).sum() + (U[:, :3] * U[:, :3]).sum()).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)


def test_cross_without_dim_warns_and_picks_the_first_size_3_dim(real_torch):
    a, b = np.random.default_rng(1).standard_normal((2, 3, 3, 2))
    for lib in (edutorch, real_torch):
        with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is deprecated"):
            got = lib.cross(lib.tensor(a), lib.tensor(b))
        np.testing.assert_allclose(got.numpy(), np.cross(a, b, axis=0 if a.shape[0] == 3 else 1))
        with pytest.raises(RuntimeError, match="no dimension of size 3 in input"):
            lib.cross(lib.ones(2, 4), lib.ones(2, 4))
        with pytest.raises(RuntimeError, match="inputs dimension 0 must have length 3. Got 2 and 2"):
            lib.cross(lib.ones(2, 3), lib.ones(2, 3), dim=0)


ERRORS = [
    lambda L: L.vdot(L.ones(2, 2), L.ones(2, 2)),
    lambda L: L.rot90(L.ones(3), 1, (0, 1)),
    lambda L: L.rot90(L.ones(3, 3), 1, (0, 0)),
    lambda L: L.rot90(L.ones(3, 3), 1, (0, 1, 2)),
    lambda L: L.inner(L.ones(2, 3), L.ones(2, 2)),
    lambda L: L.positive(L.ones(2, dtype=L.bool)),
    lambda L: L.hsplit(L.ones(2, 3), 2),
    lambda L: L.vsplit(L.ones(3), 1),
    lambda L: L.gcd(L.ones(2), L.ones(2)),
]


@pytest.mark.parametrize("make", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_match_torch(real_torch, make):
    with pytest.raises(Exception) as expected:
        make(real_torch)
    with pytest.raises(type(expected.value)) as got:
        make(edutorch)
    assert str(got.value).splitlines()[0] == str(expected.value).splitlines()[0]


def test_inplace_variants_keep_autograd_working():
    """``x.name_(...)`` on a non-leaf records the op as its out-of-place form would."""
    a = edutorch.tensor([0.2, 0.7], dtype=edutorch.float64, requires_grad=True)
    y = a * 1
    y.logit_()
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 1 / (a.detach().numpy() * (1 - a.detach().numpy())))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        a.frac_()
