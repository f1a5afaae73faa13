"""``F.interpolate`` and ``nn.Upsample``: every mode against torch (values and gradients), gradchecks, errors."""
import numpy as np
import pytest

import edutorch as et
from edutorch.autograd import gradcheck

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def _r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


CASES = [
    ((2, 3, 5), dict(scale_factor=2)),
    ((2, 3, 5), dict(size=8, mode="linear")),
    ((2, 3, 5), dict(scale_factor=2.5, mode="linear", align_corners=True)),
    ((2, 2, 4, 5), dict(scale_factor=2)),
    ((2, 2, 4, 5), dict(size=(7, 3))),
    ((2, 2, 4, 5), dict(size=(6, 7), mode="nearest-exact")),
    ((2, 2, 4, 5), dict(scale_factor=2, mode="bilinear")),
    ((2, 2, 4, 5), dict(size=(7, 9), mode="bilinear", align_corners=True)),
    ((2, 2, 4, 5), dict(size=(3, 4), mode="bilinear")),
    ((2, 2, 4, 5), dict(scale_factor=(1.5, 2.5), mode="bilinear")),
    ((2, 2, 4, 5), dict(scale_factor=1.7, mode="bicubic")),
    ((2, 2, 4, 5), dict(size=(6, 11), mode="bicubic", align_corners=True)),
    ((2, 2, 7, 6), dict(size=(3, 4), mode="area")),
    ((1, 2, 3, 4, 5), dict(size=(4, 6, 7), mode="trilinear")),
    ((1, 2, 3, 4, 5), dict(scale_factor=1.5, recompute_scale_factor=True)),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_interpolate_gradcheck(case):
    shape, kw = CASES[case]
    x = et.tensor(_r(*shape), requires_grad=True)
    assert gradcheck(lambda t: et.nn.functional.interpolate(t, **kw), (x,))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_interpolate_matches_torch(case):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    shape, kw = CASES[case]
    results = []
    for lib in (et, torch):
        x = lib.tensor(_r(*shape), requires_grad=True)
        out = lib.nn.functional.interpolate(x, **kw)
        (out * lib.tensor(_r(*out.shape, seed=1))).sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy()))
    for a, b in zip(*results):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_upsample_module_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for kw in (dict(scale_factor=2, mode="nearest"), dict(size=(5, 6), mode="bilinear", align_corners=True),
               dict(scale_factor=(2, 3))):
        e, t = et.nn.Upsample(**kw), torch.nn.Upsample(**kw)
        assert repr(e) == repr(t)
        x = _r(1, 2, 3, 4)
        np.testing.assert_allclose(e(et.tensor(x)).numpy(), t(torch.tensor(x)).numpy(), rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda L, x: L.nn.functional.interpolate(x, scale_factor=2, mode="linear"),
    lambda L, x: L.nn.functional.interpolate(x, size=3, scale_factor=2),
    lambda L, x: L.nn.functional.interpolate(x),
    lambda L, x: L.nn.functional.interpolate(x, scale_factor=2, mode="nearest", align_corners=True),
    lambda L, x: L.nn.functional.interpolate(x, scale_factor=2, mode="foo"),
])
def test_interpolate_errors_match_torch(call):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    with pytest.raises(Exception) as theirs:
        call(torch, torch.ones(1, 1, 3, 4))
    with pytest.raises(type(theirs.value)) as mine:
        call(et, et.ones(1, 1, 3, 4))
    assert str(mine.value) == str(theirs.value)
