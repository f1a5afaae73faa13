"""Hook-based weight_norm / remove_weight_norm and the fused weight-norm op."""
import warnings

import numpy as np
import pytest

import edutorch as et
from edutorch.nn.utils import remove_weight_norm, weight_norm
from edutorch.nn.utils.weight_norm import _weight_norm, norm_except_dim

from nn_utils_helpers import check_grad, pair, require_torch, to_np


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return fn(*args, **kwargs)


@pytest.mark.parametrize("kind,args,dim", [
    ("Linear", (20, 40), 0), ("Linear", (20, 40), 1), ("Linear", (5, 3), None),
    ("Conv2d", (3, 4, 3), 0), ("Conv2d", (3, 4, 3), 1), ("Conv2d", (3, 4, 3), 3),
    ("Conv2d", (3, 4, 3), -2),
])
def test_weight_norm_matches_torch(kind, args, dim):
    torch = require_torch()
    e, t = pair(kind, *args)
    quiet(weight_norm, e, "weight", dim=dim)
    quiet(torch.nn.utils.weight_norm, t, "weight", dim=dim)
    assert e.weight_g.shape == t.weight_g.shape and e.weight_v.shape == t.weight_v.shape
    np.testing.assert_allclose(to_np(e.weight_g), to_np(t.weight_g), rtol=1e-6)
    np.testing.assert_allclose(to_np(e.weight), to_np(t.weight), rtol=1e-5, atol=1e-7)
    assert e.weight.grad_fn.name() == t.weight.grad_fn.name()
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert list(e.state_dict()) == list(t.state_dict())

    shape = (2, *args[:1]) if kind == "Linear" else (2, args[0], 5, 5)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ye, yt = e(et.tensor(x)), t(torch.tensor(x))
    np.testing.assert_allclose(to_np(ye), to_np(yt), rtol=1e-4, atol=1e-5)
    (ye ** 2).sum().backward()
    (yt ** 2).sum().backward()
    for name in ("weight_g", "weight_v"):
        np.testing.assert_allclose(getattr(e, name).grad.numpy(), getattr(t, name).grad.numpy(),
                                   rtol=1e-3, atol=1e-4)

    quiet(remove_weight_norm, e)
    torch.nn.utils.remove_weight_norm(t)
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(to_np(e.weight), to_np(t.weight), rtol=1e-5, atol=1e-7)


def test_weight_norm_warns_like_torch_and_recomputes_in_forward():
    e, _ = pair("Linear", 3, 2)
    with pytest.warns(FutureWarning, match="torch.nn.utils.weight_norm` is deprecated"):
        weight_norm(e)
    with et.no_grad():
        e.weight_g.mul_(2.0)
    e(et.randn(1, 3))
    np.testing.assert_allclose(np.linalg.norm(to_np(e.weight), axis=1), to_np(e.weight_g)[:, 0], rtol=1e-5)


def test_weight_norm_errors_match_torch():
    torch = require_torch()
    e, t = pair("Linear", 3, 2)
    quiet(weight_norm, e)
    quiet(torch.nn.utils.weight_norm, t)
    with pytest.raises(RuntimeError) as got:
        quiet(weight_norm, e)
    with pytest.raises(RuntimeError) as want:
        quiet(torch.nn.utils.weight_norm, t)
    assert str(got.value) == str(want.value)
    with pytest.raises(ValueError) as got:
        remove_weight_norm(e, "bias")
    with pytest.raises(ValueError) as want:
        torch.nn.utils.remove_weight_norm(t, "bias")
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_weight_norm_op_gradcheck_float64(dim):
    rng = np.random.default_rng(dim + 5)
    v = rng.standard_normal((3, 4, 2))
    g = rng.standard_normal(tuple(norm_except_dim(et.tensor(v), 2, dim).shape))
    check_grad(lambda v_, g_: _weight_norm(v_, g_, dim), v, g)


def test_norm_except_dim_matches_torch():
    torch = require_torch()
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    for dim in (0, 1, 2, -1, -2):
        got = norm_except_dim(et.tensor(x), 2, dim)
        want = torch.norm_except_dim(torch.tensor(x), 2, dim)
        assert got.shape == want.shape
        np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-6)
