"""``torch.func.jvp``, ``jacfwd``, ``linearize`` and ``hessian`` (= ``jacfwd(jacrev)``), forward mode.

Without torch: float64 checks against central differences, jacfwd == jacrev,
the property v·(J u) == (Jᵀ v)·u (forward and reverse mode agree) on random
functions, and the nestings (forward over reverse, reverse over forward,
forward over forward).  With torch: the same programs give the same values
and the same errors.
"""
import numpy as np
import pytest

import edutorch
from edutorch.func import hessian, jacfwd, jacrev, jvp, linearize, vjp
from parity import check_parity

X = np.array([0.3, -1.2, 0.7])
Y = np.array([1.5, 0.2])
W = np.array([[0.5, -0.1, 0.2], [1.5, 0.7, -0.3]])


def t(a):
    return edutorch.tensor(a, dtype=edutorch.float64)


def f_np(x, y):
    return np.tanh(W @ x) * np.exp(y) + (x ** 2).sum()


def f(x, y):  # written for either library's tensors
    w = x.new_tensor(W)
    return (w @ x).tanh() * y.exp() + (x ** 2).sum()


def scalar(x):
    return (x.sin() * x.exp()).sum() + (x ** 3).prod()


def central(fn, arrays, directions, eps=1e-6):
    up = fn(*[a + eps * d for a, d in zip(arrays, directions)])
    down = fn(*[a - eps * d for a, d in zip(arrays, directions)])
    return (up - down) / (2 * eps)


# -- torch-free checks ---------------------------------------------------------------------
def test_jvp_matches_finite_differences():
    u, v = np.array([0.2, -0.5, 1.0]), np.array([0.7, -0.3])
    out, tangent = jvp(f, (t(X), t(Y)), (t(u), t(v)))
    np.testing.assert_allclose(out.numpy(), f_np(X, Y))
    np.testing.assert_allclose(tangent.numpy(), central(f_np, (X, Y), (u, v)), rtol=1e-6, atol=1e-8)
    assert not out.requires_grad and not tangent.requires_grad


def test_jacfwd_equals_jacrev():
    for argnums in (0, 1, (0, 1)):
        fwd = jacfwd(f, argnums=argnums)(t(X), t(Y))
        rev = jacrev(f, argnums=argnums)(t(X), t(Y))
        for a, b in zip(fwd if isinstance(fwd, tuple) else (fwd,), rev if isinstance(rev, tuple) else (rev,)):
            assert a.shape == b.shape
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)


def test_hessian_is_forward_over_reverse():
    x = t(X)
    h = hessian(scalar)(x)
    expected = np.array([[central(lambda z, i=i: jacrev(scalar)(t(z)).numpy()[i], (X,), (e,)) for e in np.eye(3)]
                         for i in range(3)])
    np.testing.assert_allclose(h.numpy(), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h.numpy(), jacrev(jacrev(scalar))(x).numpy(), rtol=1e-12)
    np.testing.assert_allclose(jacfwd(jacfwd(scalar))(x).numpy(), h.numpy(), rtol=1e-12)  # nested forward
    np.testing.assert_allclose(jacrev(jacfwd(scalar))(x).numpy(), h.numpy(), rtol=1e-12)  # reverse over forward


def _mlp(params, x):
    w1, b1, w2 = params
    return ((x @ w1 + b1).tanh() @ w2).sin()


@pytest.mark.parametrize("seed", range(6))
def test_forward_and_reverse_mode_agree(seed):
    """v·(J u) == (Jᵀ v)·u for a random small network and random u, v (no torch needed)."""
    rng = np.random.default_rng(seed)
    n, d, h, o = rng.integers(1, 4), rng.integers(1, 5), rng.integers(1, 5), rng.integers(1, 4)
    params = (t(rng.standard_normal((d, h))), t(rng.standard_normal(h)), t(rng.standard_normal((h, o))))
    x = t(rng.standard_normal((n, d)))
    us = tuple(t(rng.standard_normal(p.shape)) for p in params)
    out, ju = jvp(lambda *p: _mlp(p, x), params, us)
    v = t(rng.standard_normal(tuple(out.shape)))
    _, vjp_fn = vjp(lambda *p: _mlp(p, x), *params)
    jtv = vjp_fn(v)
    forward = float((v * ju).sum())
    reverse = sum(float((g * u).sum()) for g, u in zip(jtv, us))
    np.testing.assert_allclose(forward, reverse, rtol=1e-10, atol=1e-12)


def test_has_aux_linearize_and_requires_grad():
    x = t(X).requires_grad_()
    out, tangent, aux = jvp(lambda a: (a.exp(), {"n": a.sum()}), (x,), (t(np.ones(3)),), has_aux=True)
    assert out.requires_grad and tangent.requires_grad  # an outer graph is kept, as PyTorch's
    np.testing.assert_allclose(tangent.detach().numpy(), np.exp(X))
    assert float(aux["n"]) == pytest.approx(X.sum())
    value, jvp_fn = linearize(lambda a: a.sin(), t(X))
    np.testing.assert_allclose(jvp_fn(t(np.ones(3))).numpy(), np.cos(X))
    np.testing.assert_allclose(value.numpy(), np.sin(X))


def test_jacfwd_of_a_model_as_a_function_of_its_parameters():
    model = edutorch.nn.Sequential(edutorch.nn.Linear(3, 4), edutorch.nn.Tanh(), edutorch.nn.Linear(4, 2)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = t(X)

    def run(p):
        return edutorch.func.functional_call(model, p, (x,))

    fwd, rev = jacfwd(run)(params), jacrev(run)(params)
    assert list(fwd) == list(params)
    for k in params:
        assert fwd[k].shape == (2,) + tuple(params[k].shape)
        np.testing.assert_allclose(fwd[k].numpy(), rev[k].numpy(), rtol=1e-12, atol=1e-14)


# -- parity with PyTorch ----------------------------------------------------------------------
def _inputs(T):
    return T.tensor(X, dtype=T.float64), T.tensor(Y, dtype=T.float64)


PROGRAMS = {
    "jvp": lambda T: T.func.jvp(f, _inputs(T), tuple(T.ones_like(a) for a in _inputs(T))),
    "jvp_list_tangent_structure": lambda T: T.func.jvp(f, _inputs(T), list(_inputs(T))),
    "jvp_primals_not_tuple": lambda T: T.func.jvp(scalar, _inputs(T)[0], _inputs(T)[0]),
    "jvp_structure": lambda T: T.func.jvp(scalar, (_inputs(T)[0],), (_inputs(T)[0], _inputs(T)[0])),
    "jvp_empty": lambda T: T.func.jvp(scalar, (), ()),
    "jvp_number_tangent": lambda T: T.func.jvp(scalar, (_inputs(T)[0],), (1.0,)),
    "jvp_non_tensor_output": lambda T: T.func.jvp(lambda a: 3, (_inputs(T)[0],), (_inputs(T)[0],)),
    "jvp_strict": lambda T: T.func.jvp(lambda a: _inputs(T)[1] * 2, (_inputs(T)[0],), (_inputs(T)[0],), strict=True),
    "jvp_independent": lambda T: T.func.jvp(lambda a: _inputs(T)[1] * 2, (_inputs(T)[0],), (_inputs(T)[0],)),
    "jvp_has_aux_not_pair": lambda T: T.func.jvp(scalar, (_inputs(T)[0],), (_inputs(T)[0],), has_aux=True),
    "jacfwd": lambda T: T.func.jacfwd(f)(*_inputs(T)),
    "jacfwd_argnums": lambda T: T.func.jacfwd(f, argnums=(0, 1))(*_inputs(T)),
    "jacfwd_has_aux": lambda T: T.func.jacfwd(lambda a: (a.exp(), a.sum()), has_aux=True)(_inputs(T)[0]),
    "jacfwd_dict": lambda T: T.func.jacfwd(lambda d: d["a"] * d["b"].sum())({"a": _inputs(T)[0], "b": _inputs(T)[1]}),
    "jacfwd_random": lambda T: T.func.jacfwd(lambda a: a * T.rand(3, dtype=a.dtype))(_inputs(T)[0]),
    "jacfwd_bad_argnums": lambda T: T.func.jacfwd(f, argnums=2)(*_inputs(T)),
    "hessian": lambda T: T.func.hessian(scalar)(_inputs(T)[0]),
    "hessian_argnums": lambda T: T.func.hessian(lambda a, b: (f(a, b) ** 2).sum(), argnums=(0, 1))(*_inputs(T)),
    "jacrev_of_jacfwd": lambda T: T.func.jacrev(T.func.jacfwd(f))(*_inputs(T)),
    "linearize": lambda T: T.func.linearize(lambda a: a.sin() * a, _inputs(T)[0])[1](T.ones(3, dtype=T.float64)),
    "functional_jacobian_forward": lambda T: T.autograd.functional.jacobian(
        f, _inputs(T), vectorize=True, strategy="forward-mode"),
    "functional_hessian_forward": lambda T: T.autograd.functional.hessian(
        scalar, _inputs(T)[0], vectorize=True, outer_jacobian_strategy="forward-mode"),
    "functional_jvp": lambda T: T.autograd.functional.jvp(f, _inputs(T), tuple(T.ones_like(a) for a in _inputs(T))),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_pytorch(name, real_torch):
    check_parity(real_torch, PROGRAMS[name], rtol=1e-10, atol=1e-12)


# -- signed zeros of forward over forward: a term per input, a missing tangent counted as zeros ----

NESTED = {"tanh": lambda x: x.tanh(), "sigmoid": lambda x: x.sigmoid(),
          "tanh_sum": lambda x: (x.tanh() * 2).sum(), "tanh_layer": lambda x: (x.new_tensor(W) @ x).tanh(),
          "x_sin_x": lambda x: (x * x.sin()).sum(), "times_a_number": lambda x: (x * 3.0).sin().sum()}


def _zero_signs(lib, fn, transform="jacfwd(jacfwd)"):
    """Second derivatives, and where they are -0.  (A product's tangent adds nothing for a factor
    without tangent, as PyTorch's zero tangents add nothing: hessian keeps torch's -0.)"""
    twice = {"jacfwd(jacfwd)": lambda f: lib.func.jacfwd(lib.func.jacfwd(f)), "hessian": lib.func.hessian}
    second = twice[transform](fn)(lib.tensor(X, dtype=lib.float64)).numpy()
    return second, np.signbit(second) & (second == 0)


def test_second_derivative_by_forward_over_forward_has_no_negative_zeros_without_torch():
    """d²tanh(x_i)/dx_j dx_k is 0 off the diagonal: +0, as PyTorch prints it (``0.``, not ``-0.``)."""
    second, negative_zeros = _zero_signs(edutorch, NESTED["tanh"])
    y = np.tanh(X)
    expected = np.zeros((3, 3, 3))
    expected[range(3), range(3), range(3)] = -2 * y * (1 - y * y)
    np.testing.assert_allclose(second, expected, rtol=1e-12, atol=0)
    assert not negative_zeros.any()


@pytest.mark.parametrize("transform", ["jacfwd(jacfwd)", "hessian"])
@pytest.mark.parametrize("name", list(NESTED))
def test_second_derivatives_zero_signs_match_torch(name, transform, real_torch):
    fn = NESTED[name]
    (ours, our_signs), (theirs, their_signs) = _zero_signs(edutorch, fn, transform), _zero_signs(real_torch, fn, transform)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)
    assert (our_signs == their_signs).all()
