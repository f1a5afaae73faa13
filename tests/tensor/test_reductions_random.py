"""Random reductions against torch: dims (int, tuple, negative), keepdim, empty inputs.

Values, gradients and error types must be PyTorch's; two corners found this
way are pinned below: the std of equal values has gradient 0 (PyTorch masks
0/0), and a dim listed twice is PyTorch's RuntimeError, not NumPy's ValueError.
"""
import random

import numpy as np
import pytest

import edutorch as et

OPS = ["sum", "mean", "var", "std", "prod", "amax", "amin", "max", "min", "argmax", "argmin",
       "logsumexp", "norm", "all", "any", "cumsum"]
NO_GRAD = {"argmax", "argmin", "all", "any"}


def _dims(nd, r):
    c = r.random()
    if c < 0.2 or nd == 0:
        return None
    if c < 0.6:
        return r.randint(-nd, nd - 1)
    return tuple(r.sample(range(-nd, nd) if r.random() < 0.5 else range(nd), r.randint(1, nd)))


def _kwargs(op, d, keep, nd):
    if op in ("sum", "mean", "var", "std", "amax", "amin", "logsumexp", "norm") and d is not None:
        return {"dim": d, "keepdim": keep}
    if op in ("prod", "argmax", "argmin", "max", "min", "all", "any") and isinstance(d, int):
        return {"dim": d, "keepdim": keep}
    if op == "logsumexp":
        return {"dim": 0}
    if op == "cumsum":
        return {"dim": d if isinstance(d, int) else 0}
    return {}


def _run(lib, op, x0, kwargs):
    try:
        x = lib.tensor(x0, requires_grad=op not in NO_GRAD)
        out = getattr(x, op)(**kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        floats = [o for o in outs if o.dtype.is_floating_point and o.requires_grad]
        grad = None
        if floats:
            sum((o * 1.5).sum() for o in floats).backward()
            grad = x.grad.numpy()
        return [o.detach().numpy() for o in outs], grad
    except (RuntimeError, IndexError, ValueError, TypeError) as err:
        return type(err).__name__


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning",
                            "ignore::RuntimeWarning")  # both libraries warn alike on N - correction <= 0
@pytest.mark.parametrize("block", range(4))
def test_random_reductions_match_torch(block):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    r = random.Random(100 + block)
    for _ in range(200):
        shape = r.choice([(3,), (2, 3), (2, 3, 4), (1, 3), (0, 3), (3, 1, 2)])
        op, d, keep = r.choice(OPS), _dims(len(shape), r), r.random() < 0.4
        x0 = np.random.default_rng(r.randint(0, 10**6)).standard_normal(shape).round(1)
        kwargs = _kwargs(op, d, keep, len(shape))
        with np.errstate(all="ignore"):
            theirs, mine = _run(torch, op, x0, kwargs), _run(et, op, x0, kwargs)
        case = (op, shape, kwargs)
        assert type(mine) is type(theirs), (case, mine if isinstance(mine, str) else theirs)
        if isinstance(mine, str):
            assert mine == theirs, case
            continue
        for a, b in zip(mine[0], theirs[0]):
            assert a.shape == b.shape, case
            np.testing.assert_allclose(a, b, atol=1e-6, equal_nan=True, err_msg=str(case))
        assert (mine[1] is None) == (theirs[1] is None), case
        if mine[1] is not None:
            np.testing.assert_allclose(mine[1], theirs[1], atol=1e-6, equal_nan=True, err_msg=str(case))


def test_std_of_equal_values_has_zero_gradient():
    x = et.tensor([[0.5, 1.0], [0.5, 3.0]], requires_grad=True)
    x.std(0).sum().backward()
    assert x.grad[:, 0].tolist() == [0.0, 0.0]


def test_no_degrees_of_freedom_warns_like_pytorch():
    with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom is <= 0"):
        et.ones(1, 3).var(0)


def test_dim_listed_twice_is_pytorchs_error():
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        et.ones(2, 3).sum((1, -1))
