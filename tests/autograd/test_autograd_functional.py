"""``torch.autograd.functional``: jacobian, hessian, vjp, jvp, hvp, vhp.

Without torch: float64 checks against finite differences and closed forms.
With torch: values, shapes, tuple/non-tuple structure, ``requires_grad`` of the
results and the error type and message of every strict-mode and argument check.
"""
import numpy as np
import pytest

import edutorch as et
from edutorch.autograd import functional as F

REASON = "real PyTorch not installed: parity test skipped"


def t64(a, requires_grad=False):
    return et.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def numerical_jacobian(fn, x, eps=1e-6):
    """Central differences of ``fn`` (NumPy in, NumPy out) at ``x``: shape out.shape + x.shape."""
    out = np.asarray(fn(x))
    jac = np.zeros(out.shape + x.shape)
    for idx in np.ndindex(x.shape):
        dx = np.zeros_like(x)
        dx[idx] = eps
        jac[(...,) + idx] = (np.asarray(fn(x + dx)) - np.asarray(fn(x - dx))) / (2 * eps)
    return jac


def f_np(x):
    return np.sin(x) * x.sum(axis=-1, keepdims=True) ** 2


def f_et(x):
    return x.sin() * x.sum(dim=-1, keepdim=True) ** 2


def scalar_np(x):
    return float((np.exp(x[0]) * x[1]).sum() + (x ** 4).sum())


def scalar_et(x):
    return (x[0].exp() * x[1]).sum() + (x ** 4).sum()


# -- float64 checks, no torch ------------------------------------------------------
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_matches_finite_differences(rng, vectorize):
    x = rng.standard_normal((2, 3))
    jac = F.jacobian(f_et, t64(x), vectorize=vectorize)
    assert tuple(jac.shape) == (2, 3, 2, 3)
    np.testing.assert_allclose(jac.numpy(), numerical_jacobian(f_np, x), rtol=1e-6, atol=1e-8)


def test_jacobian_forward_mode_equals_reverse_mode(rng):
    x = t64(rng.standard_normal((2, 3)))
    rev = F.jacobian(f_et, x)
    fwd = F.jacobian(f_et, x, strategy="forward-mode", vectorize=True)
    np.testing.assert_allclose(fwd.numpy(), rev.numpy(), rtol=1e-12)


@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian_matches_finite_differences_of_the_gradient(rng, vectorize):
    x = rng.standard_normal((2, 3))

    def grad_np(a):
        return F.jacobian(scalar_et, t64(a)).numpy()

    hess = F.hessian(scalar_et, t64(x), vectorize=vectorize)
    assert tuple(hess.shape) == (2, 3, 2, 3)
    np.testing.assert_allclose(hess.numpy(), numerical_jacobian(grad_np, x), rtol=1e-6, atol=1e-7)
    flat = hess.numpy().reshape(6, 6)
    np.testing.assert_allclose(flat, flat.T, rtol=1e-12)  # a smooth function's Hessian is symmetric


def test_products_agree_with_the_full_matrices(rng):
    x, v_in, v_out = (rng.standard_normal((2, 3)) for _ in range(3))
    jac = F.jacobian(f_et, t64(x)).numpy().reshape(6, 6)
    hess = F.hessian(scalar_et, t64(x)).numpy().reshape(6, 6)
    out, vj = F.vjp(f_et, t64(x), t64(v_out))
    np.testing.assert_allclose(out.numpy(), f_np(x), rtol=1e-12)
    np.testing.assert_allclose(vj.numpy().ravel(), v_out.ravel() @ jac, rtol=1e-10)
    _, jv = F.jvp(f_et, t64(x), t64(v_in))
    np.testing.assert_allclose(jv.numpy().ravel(), jac @ v_in.ravel(), rtol=1e-10)
    value, hv = F.hvp(scalar_et, t64(x), t64(v_in))
    assert value.item() == pytest.approx(scalar_np(x), rel=1e-12)
    np.testing.assert_allclose(hv.numpy().ravel(), hess @ v_in.ravel(), rtol=1e-10)
    _, vh = F.vhp(scalar_et, t64(x), t64(v_in))
    np.testing.assert_allclose(vh.numpy().ravel(), v_in.ravel() @ hess, rtol=1e-10)


def test_tuples_in_and_out_give_a_tuple_of_tuples(rng):
    a, b = t64(rng.standard_normal((2, 3))), t64(rng.standard_normal(3))
    jac = F.jacobian(lambda x, y: ((x * y).sum(1), x.exp()), (a, b))
    assert [[tuple(j.shape) for j in row] for row in jac] == [[(2, 2, 3), (2, 3)], [(2, 3, 2, 3), (2, 3, 3)]]
    np.testing.assert_allclose(jac[0][1].numpy(), a.numpy())  # d(sum_j x_ij y_j)/dy_k = x_ik
    np.testing.assert_allclose(jac[1][1].numpy(), 0)  # exp(x) does not depend on y: zeros
    hess = F.hessian(lambda x, y: (x * y).sum(), (a, b))
    assert [[tuple(h.shape) for h in row] for row in hess] == [[(2, 3, 2, 3), (2, 3, 3)], [(3, 2, 3), (3, 3)]]


def test_create_graph_keeps_results_differentiable(rng):
    x = t64(rng.standard_normal(3), requires_grad=True)
    jac = F.jacobian(lambda z: z ** 3, x, create_graph=True)
    assert jac.requires_grad and not F.jacobian(lambda z: z ** 3, x).requires_grad
    (g,) = et.autograd.grad(jac.sum(), x)  # d/dx sum(diag(3x²)) = 6x
    np.testing.assert_allclose(g.numpy(), 6 * x.detach().numpy(), rtol=1e-12)


def test_strict_mode_raises_where_an_output_ignores_an_input():
    x, y = t64([1.0, 2.0]), t64([3.0, 4.0])
    np.testing.assert_allclose(F.vjp(lambda a, b: a * 2, (x, y), t64([1.0, 1.0]))[1][1].numpy(), 0)
    with pytest.raises(RuntimeError, match="independent of input 1. This is not allowed in strict mode"):
        F.vjp(lambda a, b: a * 2, (x, y), t64([1.0, 1.0]), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients"):
        F.jacobian(lambda a: a.detach(), x, strict=True)


def test_argument_errors():
    x = t64([1.0, 2.0])
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors but the given inputs has type"):
        F.jacobian(lambda a: a, [x])
    with pytest.raises(RuntimeError, match="The vector v can only be None"):
        F.vjp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be torch.Size\(\[2\]\) but got torch.Size\(\[3\]\)"):
        F.jvp(lambda a: a * 2, x, t64([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="The function given to hvp should return a single Tensor"):
        F.hvp(lambda a: (a.sum(), a.sum()), x, x)


# -- parity with torch ------------------------------------------------------------------
def _fn_pair(torch):
    """The same functions written once, for either library."""
    return {
        "elementwise": (lambda x: x.exp() * x, 1),
        "two_in_two_out": (lambda x, y: ((x.exp() * y).sum(1), x.sin() * y), 2),
        "reduce": (lambda x: x.pow(2).sum(0), 1),
        "scalar": (lambda x: (x ** 3).sum() + (x[0] * x[1]).sum(), 1),
        "scalar2": (lambda x, y: (x * y).sum() ** 2, 2),
        "ignores_y": (lambda x, y: (x ** 2).sum(), 2),
        "linear": (lambda x: 3 * x.sum(), 1),
    }


CASES = {
    "jacobian": ["elementwise", "two_in_two_out", "reduce", "ignores_y", "linear"],
    "hessian": ["scalar", "scalar2", "ignores_y", "linear"],
    "vjp": ["elementwise", "two_in_two_out", "reduce", "ignores_y"],
    "jvp": ["elementwise", "two_in_two_out", "reduce", "ignores_y"],
    "hvp": ["scalar", "scalar2", "ignores_y", "linear"],
    "vhp": ["scalar", "scalar2", "ignores_y", "linear"],
}
PARAMS = [(fn, case, cg, strict, inputs_grad)
          for fn, cases in CASES.items() for case in cases
          for cg in (False, True) for strict in (False, True) for inputs_grad in (False, True)]


def _inputs(lib, arity, rng_seed, requires_grad):
    rng = np.random.default_rng(rng_seed)
    arrays = [rng.standard_normal((2, 3))] + [rng.standard_normal(3)] * (arity == 2)
    ts = tuple(lib.tensor(a, requires_grad=requires_grad) for a in arrays)
    return ts if arity == 2 else ts[0]


def _v(lib, fn_name, func, inputs, seed):
    """A random ``v`` shaped like the outputs (vjp) or the inputs (jvp/hvp/vhp)."""
    rng = np.random.default_rng(seed + 1)
    if fn_name == "vjp":
        with lib.no_grad():
            out = func(*inputs) if isinstance(inputs, tuple) else func(inputs)
        ref = out
    else:
        ref = inputs
    if isinstance(ref, tuple):
        return tuple(lib.tensor(rng.standard_normal(tuple(r.shape))) for r in ref)
    return lib.tensor(rng.standard_normal(tuple(ref.shape)))


def _call(lib, fn_name, case, create_graph, strict, inputs_grad, vectorize=False):
    func, arity = _fn_pair(lib)[case]
    inputs = _inputs(lib, arity, 7, inputs_grad)
    fn = getattr(lib.autograd.functional, fn_name)
    try:
        if fn_name in ("jacobian", "hessian"):
            return fn(func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize)
        return fn(func, inputs, _v(lib, fn_name, func, inputs, 7), create_graph=create_graph, strict=strict)
    except Exception as e:  # noqa: BLE001  (compared below: type and message)
        return e


def _assert_same(mine, ref, where=""):
    if isinstance(ref, BaseException):
        assert type(mine) is type(ref) and str(mine) == str(ref), (where, mine, ref)
        return
    assert not isinstance(mine, BaseException), (where, mine)
    if isinstance(ref, (tuple, list)):
        assert type(mine) is type(ref) and len(mine) == len(ref), (where, mine)
        for i, (m, r) in enumerate(zip(mine, ref)):
            _assert_same(m, r, f"{where}[{i}]")
        return
    assert tuple(mine.shape) == tuple(ref.shape), (where, mine.shape, ref.shape)
    assert mine.requires_grad == ref.requires_grad, (where, mine.requires_grad, ref.requires_grad)
    np.testing.assert_allclose(mine.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12,
                               err_msg=where)


@pytest.mark.parametrize("fn_name,case,create_graph,strict,inputs_grad", PARAMS,
                         ids=[f"{p[0]}-{p[1]}-cg{int(p[2])}-strict{int(p[3])}-rg{int(p[4])}" for p in PARAMS])
def test_parity(fn_name, case, create_graph, strict, inputs_grad):
    torch = pytest.importorskip("torch", reason=REASON)
    _assert_same(_call(et, fn_name, case, create_graph, strict, inputs_grad),
                 _call(torch, fn_name, case, create_graph, strict, inputs_grad))


@pytest.mark.parametrize("fn_name,case", [("jacobian", c) for c in CASES["jacobian"]]
                         + [("hessian", c) for c in CASES["hessian"]])
@pytest.mark.parametrize("strict", [False, True])
def test_parity_vectorized(fn_name, case, strict):
    torch = pytest.importorskip("torch", reason=REASON)
    _assert_same(_call(et, fn_name, case, False, strict, False, vectorize=True),
                 _call(torch, fn_name, case, False, strict, False, vectorize=True))


@pytest.mark.parametrize("case", ["elementwise", "two_in_two_out", "reduce"])
@pytest.mark.parametrize("inputs_grad", [False, True])
def test_parity_forward_mode(case, inputs_grad):
    torch = pytest.importorskip("torch", reason=REASON)
    results = []
    for lib in (et, torch):
        func, arity = _fn_pair(lib)[case]
        results.append(lib.autograd.functional.jacobian(
            func, _inputs(lib, arity, 3, inputs_grad), strategy="forward-mode", vectorize=True))
    _assert_same(*results)


def test_parity_forward_over_reverse_hessian():
    torch = pytest.importorskip("torch", reason=REASON)
    results = [lib.autograd.functional.hessian(_fn_pair(lib)["scalar"][0], _inputs(lib, 1, 5, False),
                                               outer_jacobian_strategy="forward-mode", vectorize=True)
               for lib in (et, torch)]
    _assert_same(*results)


def _bad_calls(lib):
    F_ = lib.autograd.functional
    x = lib.tensor([1.0, 2.0], dtype=lib.float64)
    y = lib.tensor([3.0], dtype=lib.float64)
    return [
        lambda: F_.jacobian(lambda a: a, [x]),
        lambda: F_.jacobian(lambda a, b: a, (x, 3.0)),
        lambda: F_.jacobian(lambda a: 3.0, x),
        lambda: F_.jacobian(lambda a: a, x, strategy="sideways"),
        lambda: F_.jacobian(lambda a: a, x, strategy="forward-mode"),
        lambda: F_.jacobian(lambda a: a, x, strategy="forward-mode", create_graph=True),
        lambda: F_.jacobian(lambda a: a, x, strategy="forward-mode", strict=True, vectorize=True),
        lambda: F_.vjp(lambda a: a * 2, x),
        lambda: F_.vjp(lambda a: a * 2, x, (x, x)),
        lambda: F_.vjp(lambda a: (a * 2, a), x, (x,)),
        lambda: F_.vjp(lambda a: a * 2, x, y),
        lambda: F_.vjp(lambda a: (a * 2, a), x, (x, y)),
        lambda: F_.jvp(lambda a: a * 2, x),
        lambda: F_.jvp(lambda a, b: a * 2, (x, y), (x, x)),
        lambda: F_.jvp(lambda a: a * 0 + 1, x, x, strict=True),
        lambda: F_.hvp(lambda a: a, x, x),
        lambda: F_.hvp(lambda a: (a.sum(),), x, x),
        lambda: F_.vhp(lambda a: a.sum() * 2, x, x, strict=True),
        lambda: F_.hvp(lambda a: (a ** 2).sum(), x, x, strict=True),
        lambda: F_.hessian(lambda a: a, x),
        lambda: F_.hessian(lambda a: (a.sum(), a.sum()), x),
        lambda: F_.hessian(lambda a: a.sum(), x, outer_jacobian_strategy="up"),
        lambda: F_.hessian(lambda a: 2 * a.sum(), x, strict=True),
        lambda: F_.jacobian(lambda a: a.detach() * 2, x, strict=True),
        lambda: F_.jacobian(lambda a: a * 2, x, create_graph=True, strict=True),
        lambda: F_.vjp(lambda a: a * 2, x, x, create_graph=True, strict=True),
    ]


@pytest.mark.parametrize("i", range(len(_bad_calls(et))))
def test_errors_match_torch(i):
    torch = pytest.importorskip("torch", reason=REASON)
    results = []
    for lib in (et, torch):
        try:
            results.append(_bad_calls(lib)[i]())
        except Exception as e:  # noqa: BLE001
            results.append(e)
    mine, ref = results
    if not isinstance(ref, BaseException):
        _assert_same(mine, ref)
        return
    assert type(mine) is type(ref), (mine, ref)
    # PyTorch names a Python type in some messages: torch.Tensor vs edutorch's Tensor
    assert str(mine).replace("edutorch._tensor.Tensor", "torch.Tensor") == str(ref)
