"""More activations, similarities and ``F.normalize``: values and gradients against torch, gradchecks."""
import numpy as np
import pytest

import edutorch as et
from edutorch.autograd import gradcheck

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def _x(*shape, scale=3.0, seed=0):
    """Random values, none within 1e-3 of the kinks used below (0, +-0.5, +-1, +-3, 6)."""
    x = np.random.default_rng(seed).standard_normal(shape) * scale
    for kink in (0.0, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0, 6.0, 0.1):
        x[np.abs(x - kink) < 1e-3] += 2e-3
    return x


F_CASES = {
    "hardtanh": (lambda F, x: F.hardtanh(x, -1.5, 2.0), [_x(3, 4)]),
    "relu6": (lambda F, x: F.relu6(x * 2), [_x(3, 4)]),
    "hardsigmoid": (lambda F, x: F.hardsigmoid(x), [_x(3, 4)]),
    "hardswish": (lambda F, x: F.hardswish(x), [_x(3, 4)]),
    "softsign": (lambda F, x: F.softsign(x), [_x(3, 4)]),
    "logsigmoid": (lambda F, x: F.logsigmoid(x), [_x(3, 4, scale=10)]),
    "mish": (lambda F, x: F.mish(x), [_x(3, 4)]),
    "tanhshrink": (lambda F, x: F.tanhshrink(x), [_x(3, 4)]),
    "softshrink": (lambda F, x: F.softshrink(x, 0.5), [_x(3, 4)]),
    "hardshrink": (lambda F, x: F.hardshrink(x, 0.5), [_x(3, 4)]),
    "threshold": (lambda F, x: F.threshold(x, 0.1, 20.0), [_x(3, 4)]),
    "selu": (lambda F, x: F.selu(x), [_x(3, 4)]),
    "celu": (lambda F, x: F.celu(x, 0.7), [_x(3, 4)]),
    "softmin": (lambda F, x: F.softmin(x, dim=1), [_x(3, 4)]),
    "glu": (lambda F, x: F.glu(x, 0), [_x(4, 3)]),
    "normalize": (lambda F, x: F.normalize(x, dim=1), [_x(3, 4)]),
    "normalize_p1": (lambda F, x: F.normalize(x, p=1.0, dim=0), [_x(3, 4)]),
    "cosine_similarity": (lambda F, a, b: F.cosine_similarity(a, b), [_x(3, 4), _x(3, 4, seed=1)]),
    "cosine_similarity_bcast": (lambda F, a, b: F.cosine_similarity(a, b, dim=-1), [_x(3, 4), _x(4, seed=1)]),
    "pairwise_distance": (lambda F, a, b: F.pairwise_distance(a, b), [_x(3, 4), _x(3, 4, seed=1)]),
    "pairwise_distance_p1": (lambda F, a, b: F.pairwise_distance(a, b, p=1.0, keepdim=True),
                             [_x(3, 4), _x(3, 4, seed=1)]),
}


@pytest.mark.parametrize("name", sorted(F_CASES))
def test_gradcheck_float64(name):
    fn, arrays = F_CASES[name]
    ts = tuple(et.tensor(a, requires_grad=True) for a in arrays)
    assert gradcheck(lambda *t: fn(et.nn.functional, *t), ts)


# PyTorch's float64 backward kernels for these use float32 constants (1/6, 1/alpha): ~1e-8 apart
LOOSE = {"hardsigmoid": 1e-7, "hardswish": 1e-7, "celu": 1e-7}


@pytest.mark.parametrize("name", sorted(F_CASES))
def test_values_and_gradients_match_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    fn, arrays = F_CASES[name]
    results = []
    for lib in (et, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib.nn.functional, *ts)
        (out * lib.tensor(np.random.default_rng(9).standard_normal(tuple(out.shape)))).sum().backward()
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(*results):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=LOOSE.get(name, 1e-10), atol=1e-12)


MODULES = [("ReLU6", ()), ("Hardtanh", (-2.0, 2.0)), ("Hardsigmoid", ()), ("Hardswish", ()), ("Mish", ()),
           ("SELU", ()), ("Softsign", ()), ("LogSigmoid", ()), ("Tanhshrink", ()), ("CELU", (0.5,)),
           ("Threshold", (0.1, 20.0)), ("Softshrink", (0.3,)), ("Hardshrink", ()), ("Softmin", (1,)),
           ("GLU", ()), ("CosineSimilarity", ()), ("PairwiseDistance", ())]


@pytest.mark.parametrize("name,args", MODULES, ids=[m for m, _ in MODULES])
def test_modules_match_torch(name, args):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    e, t = getattr(et.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(e) == repr(t)
    x, y = _x(4, 6), _x(4, 6, seed=1)
    n_inputs = 2 if name in ("CosineSimilarity", "PairwiseDistance") else 1
    mine = e(*[et.tensor(a) for a in (x, y)[:n_inputs]])
    theirs = t(*[torch.tensor(a) for a in (x, y)[:n_inputs]])
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["relu6", "hardtanh", "hardswish", "hardsigmoid", "mish", "selu", "celu",
                                  "threshold"])
def test_inplace_flag_writes_into_the_input(name):
    F = et.nn.functional
    x = et.tensor(_x(3, 4))
    args = (0.1, 20.0) if name == "threshold" else ()
    expected = getattr(F, name)(x.clone(), *args)
    out = getattr(F, name)(x, *args, inplace=True)
    assert out is x and x._version == 1
    np.testing.assert_allclose(x.numpy(), expected.numpy())


def test_glu_odd_dimension_is_torchs_error():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.functional.glu(torch.ones(3, 3))
    with pytest.raises(RuntimeError) as mine:
        et.nn.functional.glu(et.ones(3, 3))
    assert str(mine.value) == str(theirs.value)
