"""Padding layers, PixelShuffle/PixelUnshuffle, F.scaled_dot_product_attention: torch parity, gradchecks."""
import numpy as np
import pytest

import edutorch as et
from edutorch.autograd import gradcheck

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def _r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


PADS = [("ZeroPad1d", (2,), (2, 3, 5)), ("ZeroPad2d", ((1, 0, 2, 1),), (2, 3, 4, 5)),
        ("ConstantPad1d", ((1, 2), 3.5), (2, 3, 5)), ("ConstantPad2d", (1, -1.0), (1, 2, 3, 4)),
        ("ReflectionPad1d", (2,), (2, 3, 5)), ("ReflectionPad2d", ((1, 2, 0, 1),), (1, 2, 4, 5)),
        ("ReplicationPad1d", ((1, 0),), (2, 3, 5)), ("ReplicationPad2d", (2,), (1, 2, 3, 4)),
        ("CircularPad1d", (1,), (2, 3, 5)), ("CircularPad2d", ((1, 1, 2, 0),), (1, 2, 3, 4))]


@pytest.mark.parametrize("name,args,shape", PADS, ids=[p[0] for p in PADS])
def test_padding_layers_match_torch(name, args, shape):
    x = _r(*shape)
    assert gradcheck(getattr(et.nn, name)(*args), (et.tensor(x, requires_grad=True),))
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    results = []
    for lib in (et, torch):
        m = getattr(lib.nn, name)(*args)
        t = lib.tensor(x, requires_grad=True)
        out = m(t)
        (out * lib.tensor(_r(*out.shape, seed=1))).sum().backward()
        results.append((repr(m), out.detach().numpy(), t.grad.numpy()))
    assert results[0][0] == results[1][0]
    for a, b in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("shape,r", [((2, 8, 3, 3), 2), ((9, 2, 2), 3), ((2, 1, 4, 2, 2), 2)])
def test_pixel_shuffle_round_trip_and_parity(shape, r):
    x = et.tensor(_r(*shape), requires_grad=True)
    y = et.nn.PixelShuffle(r)(x)
    np.testing.assert_array_equal(et.nn.PixelUnshuffle(r)(y).detach().numpy(), x.detach().numpy())
    assert gradcheck(lambda t: et.nn.functional.pixel_shuffle(t, r), (x,))
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    np.testing.assert_array_equal(y.detach().numpy(), torch.nn.functional.pixel_shuffle(torch.tensor(_r(*shape)), r).numpy())
    assert repr(et.nn.PixelShuffle(r)) == repr(torch.nn.PixelShuffle(r))
    assert repr(et.nn.PixelUnshuffle(r)) == repr(torch.nn.PixelUnshuffle(r))


def test_pixel_shuffle_errors_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for call in (lambda L: L.nn.functional.pixel_shuffle(L.ones(1, 3, 2, 2), 2),
                 lambda L: L.nn.functional.pixel_unshuffle(L.ones(1, 1, 3, 4), 2),
                 lambda L: L.nn.functional.pixel_unshuffle(L.ones(1, 1, 4, 3), 2)):
        with pytest.raises(RuntimeError) as theirs:
            call(torch)
        with pytest.raises(RuntimeError) as mine:
            call(et)
        assert str(mine.value) == str(theirs.value)


SDPA = {
    "plain": dict(),
    "causal": dict(is_causal=True),
    "scale": dict(scale=0.3),
    "bool_mask": dict(attn_mask="bool"),
    "float_mask": dict(attn_mask="float"),
}


@pytest.mark.parametrize("name", sorted(SDPA))
def test_scaled_dot_product_attention_matches_torch(name):
    q, k, v = _r(2, 3, 4, 8), _r(2, 3, 5, 8, seed=1), _r(2, 3, 5, 6, seed=2)
    mask_bool = np.random.default_rng(3).random((4, 5)) > 0.3
    mask_bool[:, 0] = True  # every query sees at least one key
    kwargs = dict(SDPA[name])
    if name == "causal":
        k, v = k[:, :, :4], v[:, :, :4]
    results = []
    for lib in (et, pytest.importorskip("torch", reason=TORCH_REASON)):
        ts = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        kw = dict(kwargs)
        if kw.get("attn_mask") == "bool":
            kw["attn_mask"] = lib.tensor(mask_bool)
        elif kw.get("attn_mask") == "float":
            kw["attn_mask"] = lib.tensor(_r(4, 5, seed=4))
        out = lib.nn.functional.scaled_dot_product_attention(*ts, **kw)
        (out * lib.tensor(_r(*out.shape, seed=5))).sum().backward()
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_scaled_dot_product_attention_gradcheck():
    q, k, v = (et.tensor(_r(1, 3, 4, seed=s), requires_grad=True) for s in range(3))
    assert gradcheck(lambda a, b, c: et.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=True),
                     (q, k, v))
