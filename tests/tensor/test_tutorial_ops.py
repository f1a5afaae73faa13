"""The top-level ops tutorials use (einsum, roll, cumprod, erf, ...): values, gradients, errors.

Each case is a function of a library, so it runs on edutorch (float64
gradcheck, no torch needed) and on PyTorch (parity of values and gradients).
"""
import math
import warnings

import numpy as np
import pytest

import edutorch as et
from edutorch.autograd import gradcheck

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def _r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _pos(*shape, seed=0):
    return np.abs(_r(*shape, seed=seed)) + 0.5


# name -> (function of (lib, *tensors), input arrays)
DIFFERENTIABLE = {
    "einsum_matmul": (lambda L, a, b: L.einsum("ij,jk->ik", a, b), [_r(3, 4), _r(4, 2, seed=1)]),
    "einsum_batch": (lambda L, a, b: L.einsum("bij,bjk->bik", a, b), [_r(2, 3, 4), _r(2, 4, 2, seed=1)]),
    "einsum_broadcast": (lambda L, a, b: L.einsum("bij,bjk->bik", a, b), [_r(2, 1, 3), _r(1, 3, 4, seed=1)]),
    "einsum_diag": (lambda L, a: L.einsum("ii->i", a), [_r(3, 3)]),
    "einsum_trace": (lambda L, a: L.einsum("ii", a), [_r(3, 3)]),
    "einsum_outer_implicit": (lambda L, a, b: L.einsum("i,j", a, b), [_r(3), _r(4, seed=1)]),
    "einsum_ellipsis": (lambda L, a, b: L.einsum("...ij,...jk->...ik", a, b), [_r(2, 3, 4), _r(4, 5, seed=1)]),
    "einsum_three": (lambda L, a, b, c: L.einsum("ij,jk,kl->il", a, b, c),
                     [_r(2, 3), _r(3, 4, seed=1), _r(4, 2, seed=2)]),
    "einsum_sum_only": (lambda L, a: L.einsum("ijk->j", a), [_r(2, 3, 4)]),
    "einsum_list": (lambda L, a, b: L.einsum("i,i->", [a, b]), [_r(4), _r(4, seed=1)]),
    "tensordot_int": (lambda L, a, b: L.tensordot(a, b, 2), [_r(2, 3, 4), _r(3, 4, 5, seed=1)]),
    "tensordot_lists": (lambda L, a, b: L.tensordot(a, b, dims=([0, 2], [2, 0])), [_r(2, 3, 4), _r(4, 5, 2, seed=1)]),
    "cdist_p2": (lambda L, a, b: L.cdist(a, b), [_r(4, 3), _r(5, 3, seed=1)]),
    "cdist_p1_batch": (lambda L, a, b: L.cdist(a, b, p=1.0), [_r(2, 4, 3), _r(2, 5, 3, seed=1)]),
    "cdist_p3": (lambda L, a, b: L.cdist(a, b, p=3.0), [_r(4, 3), _r(5, 3, seed=1)]),
    "broadcast_tensors": (lambda L, a, b: sum(t.sum() * (i + 1) for i, t in enumerate(L.broadcast_tensors(a, b))),
                          [_r(3, 1), _r(4, seed=1)]),
    "meshgrid_ij": (lambda L, a, b: [g * (i + 2) for i, g in enumerate(L.meshgrid(a, b, indexing="ij"))],
                    [_r(3), _r(4, seed=1)]),
    "meshgrid_xy": (lambda L, a, b: [g * (i + 2) for i, g in enumerate(L.meshgrid(a, b, indexing="xy"))],
                    [_r(3), _r(4, seed=1)]),
    "kron": (lambda L, a, b: L.kron(a, b), [_r(2, 3), _r(3, 2, seed=1)]),
    "kron_ranks": (lambda L, a, b: L.kron(a, b), [_r(2), _r(3, 2, seed=1)]),
    "erf": (lambda L, a: L.erf(a), [_r(3, 4) * 2]),
    "erfinv": (lambda L, a: L.erfinv(a), [np.tanh(_r(3, 4))]),
    "atan2": (lambda L, a, b: L.atan2(a, b), [_r(3, 4), _r(4, seed=1)]),
    "hypot": (lambda L, a, b: L.hypot(a, b), [_r(3, 4), _r(3, 4, seed=1)]),
    "fmod": (lambda L, a, b: L.fmod(a, b), [_r(3, 4) * 3, _pos(3, 4, seed=1)]),
    "fmod_number": (lambda L, a: L.fmod(a, 0.7), [_r(3, 4) * 3]),
    "nan_to_num": (lambda L, a: L.nan_to_num(L.where(L.tensor([True, False, False, False]), a, L.tensor(
        [0.0, float("nan"), float("inf"), -float("inf")], dtype=a.dtype)), nan=0.5, posinf=9.0, neginf=-9.0),
                   [_r(3, 4)]),
    "cumprod": (lambda L, a: L.cumprod(a, 1), [_r(3, 4)]),
    "cumprod_zero": (lambda L, a: L.cumprod(a * L.tensor([1.0, 0.0, 1.0, 1.0], dtype=a.dtype), -1), [_r(3, 4)]),
    "roll": (lambda L, a: L.roll(a, 1), [_r(3, 4)]),
    "roll_dims": (lambda L, a: L.roll(a, (1, -2), (0, 1)), [_r(3, 4)]),
    "trace": (lambda L, a: L.trace(a), [_r(3, 4)]),
    "addmm": (lambda L, i, a, b: L.addmm(i, a, b, beta=0.5, alpha=2.0), [_r(4), _r(3, 2), _r(2, 4, seed=1)]),
    "addmm_beta0": (lambda L, i, a, b: L.addmm(i, a, b, beta=0), [_r(3, 4), _r(3, 2), _r(2, 4, seed=1)]),
    "baddbmm": (lambda L, i, a, b: L.baddbmm(i, a, b, beta=2, alpha=0.5),
                [_r(2, 3, 4), _r(2, 3, 2, seed=1), _r(2, 2, 4, seed=2)]),
    "movedim": (lambda L, a: L.movedim(a, (0, 1), (2, 0)), [_r(2, 3, 4)]),
    "moveaxis": (lambda L, a: L.moveaxis(a, -1, 0), [_r(2, 3, 4)]),
    "tile": (lambda L, a: L.tile(a, (2,)), [_r(2, 3)]),
    "tile_more": (lambda L, a: L.tile(a, (2, 1, 2)), [_r(2, 3)]),
    "repeat_interleave": (lambda L, a: L.repeat_interleave(a, 2), [_r(2, 3)]),
    "repeat_interleave_dim": (lambda L, a: a.repeat_interleave(L.tensor([1, 0, 2]), dim=1), [_r(2, 3)]),
    "take_along_dim": (lambda L, a: L.take_along_dim(a, L.tensor([[0, 2], [1, 1]]), dim=1), [_r(2, 3)]),
    "take_along_dim_flat": (lambda L, a: L.take_along_dim(a, L.tensor([5, 0, 2])), [_r(2, 3)]),
    "vstack": (lambda L, a, b: L.vstack([a, b]), [_r(3), _r(2, 3, seed=1)]),
    "hstack": (lambda L, a, b: L.hstack([a, b]), [_r(2, 3), _r(2, 2, seed=1)]),
    "column_stack": (lambda L, a, b: L.column_stack([a, b]), [_r(3), _r(3, 2, seed=1)]),
    "median_dim": (lambda L, a: L.median(a, 1).values, [_r(3, 5)]),
    "median_all": (lambda L, a: L.median(a), [_r(3, 4)]),
}


def _tensors(lib, arrays):
    return [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]


def _outs(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradcheck_float64(name):
    fn, arrays = DIFFERENTIABLE[name]
    assert gradcheck(lambda *ts: fn(et, *ts), tuple(_tensors(et, arrays)))


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_values_and_gradients_match_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    fn, arrays = DIFFERENTIABLE[name]
    results = []
    for lib in (et, torch):
        ts = _tensors(lib, arrays)
        outs = _outs(fn(lib, *ts))
        rng = np.random.default_rng(7)
        cots = [lib.tensor(rng.standard_normal(tuple(o.shape))) for o in outs]
        sum((o * c).sum() for o, c in zip(outs, cots)).backward()
        results.append(([o.detach().numpy() for o in outs], [t.grad.numpy() for t in ts]))
    (mine, my_grads), (theirs, their_grads) = results
    for a, b in zip(mine, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for a, b in zip(my_grads, their_grads):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_erf_and_erfinv_are_float64_accurate_against_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x = np.concatenate([np.linspace(-6, 6, 2001), [0.0, -0.0, 1e-300, np.inf, -np.inf, np.nan]])
    np.testing.assert_allclose(et.erf(et.tensor(x)).numpy(), torch.erf(torch.tensor(x)).numpy(),
                               rtol=1e-15, atol=1e-300)
    y = np.concatenate([np.linspace(-0.999999, 0.999999, 2001), [1 - 1e-15, -1 + 1e-15, 1e-20, 1.0, -1.0, 1.5, np.nan]])
    np.testing.assert_allclose(et.erfinv(et.tensor(y)).numpy(), torch.erfinv(torch.tensor(y)).numpy(), rtol=1e-13)
    for dtype in ("float32", "float64"):
        assert et.erf(et.tensor([0.5], dtype=getattr(et, dtype))).dtype == getattr(et, dtype)
    assert et.erf(et.tensor([1, 2])).dtype == et.float32  # integers go through the default float


# -- not differentiable: values and errors ------------------------------------------------------
NON_DIFF = {
    "unique": lambda L: L.unique(L.tensor([3, 1, 2, 3, 1])),
    "unique_all": lambda L: L.unique(L.tensor([[3, 1], [1, 3]]), return_inverse=True, return_counts=True),
    "unique_dim": lambda L: L.unique(L.tensor([[1, 2], [1, 2], [0, 5]]), dim=0, return_inverse=True),
    "nonzero": lambda L: L.nonzero(L.tensor([[0, 1], [2, 0]])),
    "nonzero_tuple": lambda L: L.nonzero(L.tensor([[0, 1], [2, 0]]), as_tuple=True),
    "count_nonzero": lambda L: L.count_nonzero(L.tensor([[0, 1, 3], [2, 0, 0]])),
    "count_nonzero_dim": lambda L: L.count_nonzero(L.tensor([[0, 1, 3], [2, 0, 0]]), dim=0),
    "searchsorted": lambda L: L.searchsorted(L.tensor([1, 3, 5, 7]), L.tensor([3, 6, 9])),
    "searchsorted_right": lambda L: L.searchsorted(L.tensor([1, 3, 5, 7]), L.tensor([3, 6]), right=True),
    "searchsorted_side_2d": lambda L: L.searchsorted(L.tensor([[1, 3], [2, 4]]), L.tensor([[3], [3]]), side="right"),
    "searchsorted_int32": lambda L: L.searchsorted(L.tensor([1.0, 2.0]), L.tensor([1.5]), out_int32=True),
    "bucketize": lambda L: L.bucketize(L.tensor([1, 3, 5, 9]), L.tensor([1, 3, 5, 7])),
    "bucketize_right": lambda L: L.bucketize(L.tensor([1, 3, 5, 9]), L.tensor([1, 3, 5, 7]), right=True),
    "bincount": lambda L: L.bincount(L.tensor([0, 1, 1, 3])),
    "bincount_weights": lambda L: L.bincount(L.tensor([0, 1, 1, 3]), L.tensor([0.5, 1.0, 1.0, 2.0]), minlength=6),
    "histc": lambda L: L.histc(L.tensor([1.0, 2.0, 1.0, 2.5, -4.0]), bins=4, min=0, max=3),
    "histc_range": lambda L: L.histc(L.tensor([1.0, 2.0, 1.0]), bins=4),
    "repeat_interleave_counts": lambda L: L.repeat_interleave(L.tensor([2, 0, 3])),
    "median_int": lambda L: L.tensor([[4, 1, 3, 2]]).median(1),
    "median_nan": lambda L: L.tensor([[1.0, float("nan"), 2.0], [3.0, 1.0, 2.0]]).median(1),
    "median_all_nan": lambda L: L.tensor([1.0, float("nan"), 2.0]).median(),
    "median_keepdim": lambda L: L.tensor([[5.0, 1.0, 3.0]]).median(-1, keepdim=True),
    "cumprod_int": lambda L: L.cumprod(L.tensor([1, 2, 3]), 0),
    "trace_int": lambda L: L.trace(L.tensor([[1, 2], [3, 4]])),
    "fmod_int": lambda L: L.fmod(L.tensor([-7, 7]), 3),
    "dstack": lambda L: L.dstack([L.tensor([1, 2]), L.tensor([3, 4])]),
    "broadcast_shapes": lambda L: L.broadcast_shapes((3, 1), (4,)),
}


def _as_lists(x):
    if isinstance(x, tuple):
        return [_as_lists(v) for v in x]
    return x.tolist() if hasattr(x, "tolist") else x


@pytest.mark.parametrize("name", sorted(NON_DIFF))
def test_non_differentiable_ops_match_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    mine, theirs = NON_DIFF[name](et), NON_DIFF[name](torch)
    if isinstance(theirs, tuple) and not isinstance(theirs, torch.Size):
        assert len(mine) == len(theirs)
        for m, t in zip(mine, theirs):
            assert str(m.dtype) == str(t.dtype)
    elif isinstance(theirs, torch.Tensor):
        assert str(mine.dtype) == str(theirs.dtype), (mine.dtype, theirs.dtype)
    np.testing.assert_equal(_as_lists(mine), _as_lists(theirs))


ERRORS = {
    "trace_1d": lambda L: L.trace(L.ones(3)),
    "roll_misaligned": lambda L: L.roll(L.ones(2, 2), (1, 1), (0,)),
    "einsum_sizes": lambda L: L.einsum("ij,jk->ik", L.ones(2, 3), L.ones(4, 2)),
    "einsum_rank": lambda L: L.einsum("ij->i", L.ones(2, 3, 4)),
    "bincount_float": lambda L: L.bincount(L.tensor([1.0])),
    "bincount_negative": lambda L: L.bincount(L.tensor([-1, 2])),
    "histc_int": lambda L: L.histc(L.tensor([1, 2])),
    "cdist_columns": lambda L: L.cdist(L.ones(2, 3), L.ones(2, 4)),
    "tensordot_sizes": lambda L: L.tensordot(L.ones(2, 3), L.ones(4, 2), dims=([1], [0])),
    "movedim_count": lambda L: L.movedim(L.ones(2, 3), (0, 1), (1,)),
    "meshgrid_indexing": lambda L: L.meshgrid(L.ones(2), indexing="yx"),
    "multinomial_without_replacement": lambda L: L.multinomial(L.tensor([1.0, 1.0]), 3),
    "multinomial_negative": lambda L: L.multinomial(L.tensor([1.0, -1.0]), 1),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as mine:
        ERRORS[name](et)
    assert str(mine.value) == str(theirs.value)


def test_meshgrid_without_indexing_warns_like_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for lib in (torch, et):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grids = lib.meshgrid(lib.arange(2), lib.arange(3))
        assert [tuple(g.shape) for g in grids] == [(2, 3), (2, 3)]
        assert any("indexing argument" in str(w.message) for w in caught)


def test_addmm_with_beta_zero_ignores_nan_in_input():
    out = et.addmm(et.full((2, 2), float("nan")), et.eye(2), et.ones(2, 2), beta=0)
    assert out.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_cumprod_gradient_at_several_zeros():
    x = et.tensor([[2.0, 0.0, 3.0, 0.0, 4.0]], dtype=et.float64, requires_grad=True)
    assert gradcheck(lambda t: t.cumprod(1), (x,))


# -- random ops, sampled: distributions and shapes, not PyTorch's random stream ------------
def test_like_factories_take_shape_dtype_and_device():
    x = et.zeros(3, 4, dtype=et.float64)
    for fn in (et.rand_like, et.randn_like):
        y = fn(x)
        assert tuple(y.shape) == (3, 4) and y.dtype == et.float64 and not y.requires_grad
        assert fn(x, dtype=et.float32, requires_grad=True).requires_grad
    r = et.randint_like(x, 5)
    assert r.dtype == et.float64 and 0 <= r.min().item() and r.max().item() < 5
    r = et.randint_like(et.zeros(1000, dtype=et.int64), 3, 6)
    assert r.dtype == et.int64 and set(r.unique().tolist()) == {3, 4, 5}
    assert 0 <= et.rand_like(et.zeros(1000)).min().item() and et.rand_like(et.zeros(1000)).max().item() < 1


def test_bernoulli_frequencies_and_shape():
    et.manual_seed(0)
    p = et.tensor([0.0, 0.2, 0.9, 1.0]).expand(20000, 4)
    draws = et.bernoulli(p)
    assert tuple(draws.shape) == (20000, 4) and draws.dtype == et.float32
    assert set(draws.unique().tolist()) <= {0.0, 1.0}
    np.testing.assert_allclose(draws.mean(0).numpy(), [0.0, 0.2, 0.9, 1.0], atol=0.015)
    assert et.ones(5).bernoulli(0.0).sum().item() == 0.0  # p given: the tensor is only the shape
    with pytest.raises(RuntimeError):
        et.bernoulli(et.tensor([1.5]))


def test_bernoulli_with_generator_is_reproducible():
    g1, g2 = et.Generator().manual_seed(3), et.Generator().manual_seed(3)
    p = et.full((50,), 0.5)
    assert et.bernoulli(p, generator=g1).tolist() == et.bernoulli(p, generator=g2).tolist()


def test_multinomial_frequencies_shapes_and_no_repeats():
    et.manual_seed(0)
    w = et.tensor([1.0, 2.0, 7.0, 0.0])
    s = et.multinomial(w, 20000, replacement=True)
    assert tuple(s.shape) == (20000,) and s.dtype == et.int64
    counts = np.bincount(s.numpy(), minlength=4) / 20000
    np.testing.assert_allclose(counts, [0.1, 0.2, 0.7, 0.0], atol=0.015)
    rows = et.multinomial(et.tensor([[1.0, 1.0, 1.0, 1.0], [0.0, 5.0, 1.0, 1.0]]), 3)
    assert tuple(rows.shape) == (2, 3)
    for row in rows.tolist():
        assert len(set(row)) == 3  # without replacement: no index twice
    assert 0 not in rows.tolist()[1]  # a zero weight is never drawn


def test_multinomial_errors_match_torch_messages():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for bad in ([[[1.0]]], [0.0, 0.0]):
        with pytest.raises(RuntimeError) as theirs:
            torch.multinomial(torch.tensor(bad), 1)
        with pytest.raises(RuntimeError) as mine:
            et.multinomial(et.tensor(bad), 1)
        assert str(mine.value) == str(theirs.value)


# -- defaults: device, print options, formatting -------------------------------------------
def test_default_device_round_trip():
    assert et.get_default_device() == et.device("cpu")
    try:
        et.set_default_device("cpu")
        assert et.get_default_device() == et.device("cpu") and et.zeros(2).device == et.device("cpu")
        with pytest.raises(RuntimeError):
            et.set_default_device("tpu")
    finally:
        et.set_default_device(None)
    assert repr(et.get_default_device()) == "device(type='cpu')"


def test_default_device_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    assert repr(et.get_default_device()) == repr(torch.get_default_device())


def test_set_printoptions_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    values = [[1.23456789, 2000.5, -3.0], [0.5, 1e-3, 7.0]]
    big = np.arange(30.0).tolist()
    settings = [dict(precision=2), dict(sci_mode=True), dict(sci_mode=False, precision=6),
                dict(threshold=5, edgeitems=1), dict(profile="short"), dict(linewidth=30),
                dict(profile="full")]
    try:
        for kw in settings:
            torch.set_printoptions(**kw)
            et.set_printoptions(**kw)
            for v in (values, big):
                assert repr(et.tensor(v)) == repr(torch.tensor(v)), kw
            torch.set_printoptions(profile="default", sci_mode=None)
            et.set_printoptions(profile="default", sci_mode=None)
    finally:
        torch.set_printoptions(profile="default", sci_mode=None)
        et.set_printoptions(profile="default", sci_mode=None)


def test_format_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for spec in ("{:+.2f}", "{:.3e}", "{:>8.1f}", "{}"):
        assert spec.format(et.tensor(1.5)) == spec.format(torch.tensor(1.5))
    assert "{}".format(et.tensor([1.5])) == "{}".format(torch.tensor([1.5]))
    with pytest.raises(TypeError) as theirs:
        "{:.2f}".format(torch.tensor([1.5]))
    with pytest.raises(TypeError) as mine:
        "{:.2f}".format(et.tensor([1.5]))
    assert str(mine.value) == str(theirs.value)
    assert math.isclose(float(f"{et.tensor(2.25):.2f}"), 2.25)


# -- elementary functions: one table, inputs inside each domain ------------------------------
_UNIT = np.tanh(_r(3, 4)) * 0.9          # (-0.9, 0.9): asin, acos, atanh
ELEMENTARY = {
    "tan": _r(3, 4) * 0.7, "asin": _UNIT, "acos": _UNIT, "atan": _r(3, 4) * 3, "arcsin": _UNIT,
    "arccos": _UNIT, "arctan": _r(3, 4), "sinh": _r(3, 4), "cosh": _r(3, 4), "asinh": _r(3, 4) * 3,
    "acosh": _pos(3, 4) + 1.0, "atanh": _UNIT, "arcsinh": _r(3, 4), "arccosh": _pos(3, 4) + 1.0,
    "arctanh": _UNIT, "log2": _pos(3, 4), "log10": _pos(3, 4), "expm1": _r(3, 4), "exp2": _r(3, 4),
    "erfc": _r(3, 4) * 2, "deg2rad": _r(3, 4) * 90, "rad2deg": _r(3, 4),
}


@pytest.mark.parametrize("name", sorted(ELEMENTARY))
def test_elementary_gradcheck_float64(name):
    x = et.tensor(ELEMENTARY[name], requires_grad=True)
    assert gradcheck(getattr(et, name), (x,))
    assert gradcheck(lambda t: getattr(t, name)(), (x,))


@pytest.mark.parametrize("name", sorted(ELEMENTARY))
def test_elementary_match_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    results = []
    for lib in (et, torch):
        x = lib.tensor(ELEMENTARY[name], requires_grad=True)
        y = getattr(lib, name)(x)
        (y * lib.tensor(_r(3, 4, seed=5))).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__,
                        str(getattr(lib, name)(lib.tensor([1, 2])).dtype)))
    (y1, g1, n1, d1), (y2, g2, n2, d2) = results
    np.testing.assert_allclose(y1, y2, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-15)
    assert (n1, d1) == (n2, d2)


def test_constants_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    assert (et.pi, et.e, et.inf) == (torch.pi, torch.e, torch.inf)
    assert math.isnan(et.nan) and et.newaxis is torch.newaxis is None


def test_factories_take_size_as_a_keyword_like_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for name in ("zeros", "ones", "empty", "rand", "randn"):
        assert tuple(getattr(et, name)(size=(2, 3)).shape) == tuple(getattr(torch, name)(size=(2, 3)).shape)
        assert tuple(getattr(et, name)(size=[4]).shape) == (4,)
        with pytest.raises(TypeError):
            getattr(et, name)(2, size=(2, 3))


# -- more shapes, moments, membership: values and gradients against torch -------------------
_NAN_ROW = np.array([[1.0, np.nan, 2.0, 4.0], [np.nan, np.nan, 3.0, -1.0], [0.5, 1.0, 2.0, 3.0]])
MORE = {
    "broadcast_to": (lambda L, a: L.broadcast_to(a, (2, 3, 4)), [_r(3, 1)]),
    "fliplr": (lambda L, a: L.fliplr(a), [_r(3, 4)]),
    "flipud": (lambda L, a: L.flipud(a), [_r(3, 4)]),
    "tensor_split_n": (lambda L, a: list(L.tensor_split(a, 3, dim=1)), [_r(2, 7)]),
    "tensor_split_idx": (lambda L, a: list(L.tensor_split(a, [1, 5])), [_r(7, 2)]),
    "hsplit": (lambda L, a: list(L.hsplit(a, 2)), [_r(3, 4)]),
    "vsplit": (lambda L, a: list(L.vsplit(a, [1])), [_r(3, 4)]),
    "diff": (lambda L, a: L.diff(a), [_r(3, 5)]),
    "diff_n2_dim0_pre": (lambda L, a, p: L.diff(a, n=2, dim=0, prepend=p), [_r(3, 5), _r(1, 5, seed=1)]),
    "diag_embed": (lambda L, a: L.diag_embed(a), [_r(2, 3)]),
    "diag_embed_offset_dims": (lambda L, a: L.diag_embed(a, -1, 0, 2), [_r(2, 3)]),
    "std_mean": (lambda L, a: list(L.std_mean(a, 1)), [_r(3, 4)]),
    "var_mean": (lambda L, a: list(L.var_mean(a, 0, correction=0, keepdim=True)), [_r(3, 4)]),
    "logaddexp": (lambda L, a, b: L.logaddexp(a, b), [_r(3, 4) * 30, _r(4, seed=1) * 30]),
    "logaddexp2": (lambda L, a, b: L.logaddexp2(a, b), [_r(3, 4), _r(3, 4, seed=1)]),
    "xlogy": (lambda L, a, b: L.xlogy(a, b), [_r(3, 4), _pos(3, 4, seed=1)]),
    "atleast_3d": (lambda L, a, b: list(L.atleast_3d(a, b)), [_r(4), _r(2, 3, seed=1)]),
    "atleast_2d": (lambda L, a: L.atleast_2d(a), [_r(4)]),
    "block_diag": (lambda L, a, b, c: L.block_diag(a, b, c), [_r(2, 2), _r(3), _r(1, 2, seed=1)]),
    "cartesian_prod": (lambda L, a, b: L.cartesian_prod(a, b), [_r(2), _r(3, seed=1)]),
    "true_divide": (lambda L, a, b: L.true_divide(a, b), [_r(3, 4), _pos(3, 4, seed=1)]),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_ops_gradcheck_float64(name):
    fn, arrays = MORE[name]
    assert gradcheck(lambda *ts: fn(et, *ts), tuple(_tensors(et, arrays)))


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_ops_match_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    fn, arrays = MORE[name]
    results = []
    for lib in (et, torch):
        ts = _tensors(lib, arrays)
        outs = _outs(fn(lib, *ts))
        rng = np.random.default_rng(7)
        sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in outs).backward()
        results.append(([o.detach().numpy() for o in outs], [t.grad.numpy() for t in ts]))
    for a, b in zip(results[0][0] + results[0][1], results[1][0] + results[1][1]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


NON_DIFF_MORE = {
    "nansum": lambda L: L.nansum(L.tensor(_NAN_ROW), 1),
    "nansum_all": lambda L: L.nansum(L.tensor(_NAN_ROW)),
    "nanmean": lambda L: L.nanmean(L.tensor(_NAN_ROW), 0),
    "isin": lambda L: L.isin(L.tensor([[1, 2], [3, 4]]), L.tensor([2, 3, 9])),
    "isin_invert": lambda L: L.isin(L.tensor([1, 2, 3]), L.tensor([2]), invert=True),
    "argwhere": lambda L: L.argwhere(L.tensor([[0, 1], [2, 0]])),
    "tril_indices": lambda L: L.tril_indices(3, 4, 1),
    "triu_indices": lambda L: L.triu_indices(4, 3, -1),
    "logspace": lambda L: L.logspace(-1, 2, 5),
    "logspace_base2": lambda L: L.logspace(0, 4, 5, base=2),
    "diff_bool": lambda L: L.diff(L.tensor([True, False, False, True])),
    "diff_int_append": lambda L: L.diff(L.tensor([1, 4, 9]), append=L.tensor([16, 25])),
    "atleast_1d_scalar": lambda L: L.atleast_1d(L.tensor(3.0)),
}


@pytest.mark.parametrize("name", sorted(NON_DIFF_MORE))
def test_more_non_differentiable_match_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    mine, theirs = NON_DIFF_MORE[name](et), NON_DIFF_MORE[name](torch)
    assert str(mine.dtype) == str(theirs.dtype) and tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6)


# -- in-place forms: same values as the out-of-place op, a version bump, and autograd through them ---
INPLACE = {
    "sin_": (), "cos_": (), "log1p_": (), "rsqrt_": (), "reciprocal_": (), "sign_": (), "floor_": (), "ceil_": (),
    "trunc_": (), "square_": (), "erf_": (), "erfinv_": (), "tan_": (), "asin_": (), "acos_": (), "atan_": (),
    "sinh_": (), "cosh_": (), "asinh_": (), "atanh_": (), "arcsin_": (), "arctan_": (), "log2_": (),
    "log10_": (), "expm1_": (), "exp2_": (), "erfc_": (), "deg2rad_": (), "rad2deg_": (),
    "nan_to_num_": (), "cumprod_": (1,), "cumsum_": (0,), "fmod_": (0.7,), "atan2_": ("other",),
    "hypot_": ("other",), "acosh_": ("shift",),
}


def _inplace_input(lib, name):
    base = np.tanh(_r(3, 4)) * 0.8 + (0.0 if name not in ("log1p_", "rsqrt_", "log2_", "log10_", "reciprocal_")
                                      else 1.0)
    if name == "acosh_":
        base = np.abs(base) + 1.5
    return lib.tensor(base, requires_grad=True)


NO_INPLACE_DERIVATIVE = ("asinh_", "acosh_", "atanh_")  # PyTorch refuses these under autograd


@pytest.mark.parametrize("name", NO_INPLACE_DERIVATIVE)
def test_inplace_without_derivative_is_refused_like_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    messages = []
    for lib in (torch, et):
        x = _inplace_input(lib, name) * 1.0
        getattr(x, name)()
        with pytest.raises(NotImplementedError) as err:
            x.sum().backward()
        messages.append(str(err.value))
        with lib.no_grad():
            y = _inplace_input(lib, name) * 1.0
            getattr(y, name)()  # fine without autograd
    assert messages[0] == messages[1]


@pytest.mark.parametrize("name", sorted(set(INPLACE) - set(NO_INPLACE_DERIVATIVE)))
def test_inplace_forms_match_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    results = []
    for lib in (et, torch):
        leaf = _inplace_input(lib, name)
        x = leaf * 1.0  # a non-leaf: in-place is allowed, and autograd goes through it
        args = [lib.tensor(_pos(3, 4, seed=2)) if a == "other" else a for a in INPLACE[name] if a != "shift"]
        out = getattr(x, name)(*args)
        assert out is x and x._version == 1
        differentiable = name not in ("sign_", "floor_", "ceil_", "trunc_")
        if differentiable:
            (x * lib.tensor(_r(3, 4, seed=3))).sum().backward()
        results.append((x.detach().numpy(), leaf.grad.numpy() if differentiable else None))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-14)
    if results[0][1] is not None:
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10, atol=1e-12)


def test_numpy_argument_names_are_accepted_like_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x = _r(2, 3)
    calls = [lambda L, t: L.sum(t, axis=0, keepdims=True), lambda L, t: t.sum(1, keepdims=True),
             lambda L, t: t.mean(axis=1), lambda L, t: L.cat([t, t], axis=1), lambda L, t: t.max(axis=0).values,
             lambda L, t: t.softmax(axis=1), lambda L, t: L.argmax(t, axis=1), lambda L, t: t.std(axis=0),
             lambda L, t: L.cumsum(t, axis=1), lambda L, t: t.amax(axis=1, keepdims=True)]
    for call in calls:
        np.testing.assert_allclose(call(et, et.tensor(x)).numpy(), call(torch, torch.tensor(x)).numpy(), rtol=1e-12)
    with pytest.raises(TypeError):
        et.tensor(x).sum(dim=0, axis=0)


# -- order statistics along a dim, sampling in place, small facts ---------------------------------
ORDER = {
    "kthvalue": lambda L, t: t.kthvalue(2, 1),
    "kthvalue_keepdim": lambda L, t: L.kthvalue(t, 3, 0, keepdim=True) if hasattr(L, "kthvalue") else t.kthvalue(3, 0, True),
    "cummax": lambda L, t: L.cummax(t, 1) if hasattr(L, "cummax") else t.cummax(1),
    "cummin": lambda L, t: t.cummin(0),
}


@pytest.mark.parametrize("name", sorted(ORDER))
def test_order_statistics_match_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x = _r(4, 5)
    results = []
    for lib in (et, torch):
        t = lib.tensor(x, requires_grad=True)
        values, indices = ORDER[name](lib, t)
        (values * lib.tensor(_r(*values.shape, seed=4))).sum().backward()
        results.append((values.detach().numpy(), indices.numpy(), t.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b)


def test_cummax_ties_and_nan_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    data = [[1.0, 3.0, 3.0, 2.0, float("nan"), 5.0, float("nan"), 0.0]]
    for op in ("cummax", "cummin"):
        (mv, mi), (tv, ti) = getattr(et.tensor(data), op)(1), getattr(torch.tensor(data), op)(1)
        np.testing.assert_allclose(mv.numpy(), tv.numpy())
        assert mi.tolist() == ti.tolist()


def test_kthvalue_error_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2, 3).kthvalue(5)
    with pytest.raises(RuntimeError) as mine:
        et.ones(2, 3).kthvalue(5)
    assert str(mine.value) == str(theirs.value)


def test_in_place_samplers_have_their_distributions():
    et.manual_seed(0)
    n = 40000
    assert abs(et.empty(n).exponential_(2.0).mean().item() - 0.5) < 0.02
    g = et.empty(n).geometric_(0.25)
    assert g.min().item() >= 1 and abs(g.mean().item() - 4.0) < 0.1
    assert abs(et.empty(n, dtype=et.float64).log_normal_(0.0, 0.5).log().std().item() - 0.5) < 0.02
    assert abs(et.empty(n).cauchy_(1.0, 2.0).median().item() - 1.0) < 0.1
    r = et.empty(n, dtype=et.int64).random_(3, 7)
    assert set(r.unique().tolist()) == {3, 4, 5, 6}
    with pytest.raises(RuntimeError):
        et.zeros(2, requires_grad=True).exponential_()


def test_small_facts_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for lib in (et, torch):
        x = lib.ones(2, 3)
        y = (lib.ones(2, requires_grad=True) * 2).unbind(0)[1]
        assert (x.itemsize, x.nbytes, x.is_cpu, x.get_device(), y.output_nr) == (4, 24, True, -1, 1)
        assert (x.is_signed(), lib.ones(1, dtype=lib.uint8).is_signed(), x.is_inference()) == (True, False, False)
        assert x.is_same_size(lib.zeros(2, 3)) and lib.tensor([2]).is_nonzero()
        assert x.take(lib.tensor([[0, 5]])).tolist() == [[1.0, 1.0]]
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2).is_nonzero()
    with pytest.raises(RuntimeError) as mine:
        et.ones(2).is_nonzero()
    assert str(mine.value) == str(theirs.value)
