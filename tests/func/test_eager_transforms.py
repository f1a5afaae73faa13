"""``torch.func.grad``, ``grad_and_value``, ``vjp``, ``jacrev``, ``hessian``.

Without torch: float64 checks against central differences and closed forms,
composition (grad of grad, vmap of grad), and what requires grad afterwards.
With torch: the same programs give the same values and the same errors.
"""
import numpy as np
import pytest

import edutorch
from edutorch.func import grad, grad_and_value, hessian, jacrev, vjp
from parity import check_parity
from tests.nn.utils.nn_utils_helpers import numerical_grad

X = np.array([0.3, -1.2, 2.0])
W = np.array([[0.5, -0.1, 0.2], [1.5, 0.7, -0.3]])


def numerical_jacobian(fn, x, eps=1e-6):
    """Central differences of ``fn`` (NumPy in, NumPy out) at ``x``: shape out.shape + x.shape."""
    x = np.array(x, dtype=np.float64)
    out_shape = np.shape(fn(x))
    rows = [numerical_grad(lambda idx=idx: np.asarray(fn(x))[idx], x, eps) for idx in np.ndindex(out_shape)]
    return np.array(rows).reshape(out_shape + x.shape)


def f_np(x):
    return np.tanh(W @ x) * x[:2] ** 2


def f_et(x):
    return (W_t() @ x).tanh() * x[:2] ** 2


def W_t():
    return edutorch.tensor(W)


# -- torch-free checks ---------------------------------------------------------------
def test_jacrev_matches_finite_differences():
    jac = jacrev(f_et)(edutorch.tensor(X))
    np.testing.assert_allclose(jac.numpy(), numerical_jacobian(f_np, X), rtol=1e-6, atol=1e-8)


def test_grad_of_scalar_matches_finite_differences():
    g = grad(lambda x: f_et(x).sum())(edutorch.tensor(X))
    np.testing.assert_allclose(g.numpy(), numerical_jacobian(lambda x: f_np(x).sum(), X), rtol=1e-6, atol=1e-8)


def test_hessian_matches_finite_differences_of_the_gradient():
    h = hessian(lambda x: f_et(x).sum())(edutorch.tensor(X))
    g_np = lambda x: numerical_jacobian(lambda y: f_np(y).sum(), x, eps=1e-5)  # noqa: E731
    np.testing.assert_allclose(h.numpy(), numerical_jacobian(g_np, X, eps=1e-4), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(h.numpy(), h.numpy().T, atol=1e-12)  # a Hessian is symmetric


def test_grad_of_grad_is_the_second_derivative():
    x = edutorch.tensor(0.7, dtype=edutorch.float64)
    assert grad(grad(lambda x: x.sin()))(x).item() == pytest.approx(-np.sin(0.7), abs=1e-15)
    assert grad(grad(grad(lambda x: x ** 4)))(x).item() == pytest.approx(24 * 0.7, abs=1e-12)


def test_results_do_not_require_grad_unless_something_outside_does():
    x = edutorch.tensor(X)
    assert not grad(lambda x: (x ** 2).sum())(x).requires_grad
    out, fn = vjp(lambda x: x.exp(), x)
    assert not out.requires_grad and not fn(edutorch.ones(3))[0].requires_grad
    w = edutorch.tensor(X, requires_grad=True)  # closed over: grad composes with autograd
    g = grad(lambda x: (x * w).sum() ** 2)(x)
    assert g.requires_grad
    (gw,) = edutorch.autograd.grad(g.sum(), w)
    # g = 2 (x.w) w, so d(sum g)/dw = 2 x sum(w) + 2 (x.w)
    np.testing.assert_allclose(gw.numpy(), 2 * X * X.sum() + 2 * (X @ X), rtol=1e-12)


def test_argnums_tuple_and_pytree_inputs():
    x, y = edutorch.tensor(X), edutorch.tensor(2 * X)
    gx, gy = grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx.numpy(), 2 * X)
    np.testing.assert_allclose(gy.numpy(), X)
    g = grad(lambda d: (d["a"] ** 2).sum() + d["b"][0].sum())({"a": x, "b": [y]})
    assert set(g) == {"a", "b"}
    np.testing.assert_allclose(g["a"].numpy(), 2 * X)
    np.testing.assert_allclose(g["b"][0].numpy(), np.ones(3))


def test_unused_input_gets_zeros():
    x, y = edutorch.tensor(X), edutorch.tensor(X)
    assert grad(lambda x, y: x.sum(), argnums=1)(x, y).tolist() == [0.0, 0.0, 0.0]
    assert jacrev(lambda x, y: x * 2, argnums=1)(x, y).abs().sum().item() == 0


def test_grad_and_value_and_has_aux():
    x = edutorch.tensor(X)
    (g, (value, aux)) = grad_and_value(lambda x: ((x ** 2).sum(), x.mean()), has_aux=True)(x)
    np.testing.assert_allclose(g.numpy(), 2 * X)
    assert value.item() == pytest.approx((X ** 2).sum()) and aux.item() == pytest.approx(X.mean())


def test_vjp_fn_can_be_called_again():
    x = edutorch.tensor(X)
    out, fn = vjp(lambda x: x ** 3, x)
    first = fn(edutorch.ones(3))[0]
    second = fn(edutorch.tensor([1.0, 0.0, 0.0], dtype=edutorch.float64))[0]
    np.testing.assert_allclose(first.numpy(), 3 * X ** 2)
    np.testing.assert_allclose(second.numpy(), [3 * X[0] ** 2, 0, 0])


# -- parity with PyTorch -------------------------------------------------------------------
def x_of(T, a=X, dtype=None):
    return T.tensor(a) if dtype is None else T.tensor(a, dtype=getattr(T, dtype))


PROGRAMS = {
    "grad": lambda T: T.func.grad(lambda x: (x.sin() * x).sum())(x_of(T)),
    "grad_float32": lambda T: T.func.grad(lambda x: (x.exp() / x.sum()).sum())(x_of(T, dtype="float32")),
    "grad_argnums_tuple": lambda T: T.func.grad(lambda x, y: (x * y.cos()).sum(), argnums=(0, 1))(x_of(T), x_of(T)),
    "grad_argnums_negative": lambda T: T.func.grad(lambda x, y: (x * y ** 2).sum(), argnums=-1)(x_of(T), x_of(T)),
    "grad_dict": lambda T: T.func.grad(lambda d: (d["w"] * d["b"]).sum())({"w": x_of(T), "b": x_of(T)}),
    "grad_has_aux": lambda T: T.func.grad(lambda x: (x.sum() ** 2, {"m": x.max()}), has_aux=True)(x_of(T)),
    "grad_and_value": lambda T: T.func.grad_and_value(lambda x: (x ** 3).mean())(x_of(T)),
    "grad_grad": lambda T: T.func.grad(T.func.grad(lambda x: x.tanh()))(T.tensor(0.4)),
    "grad_kwargs": lambda T: T.func.grad(lambda x, scale: (x * scale).sum())(x_of(T), scale=3.0),
    "grad_integer_output": lambda T: T.func.grad(lambda x: x.sum().long())(x_of(T)),
    "vjp": lambda T: T.func.vjp(lambda x: x.sigmoid() * 2, x_of(T))[1](x_of(T, [1.0, 2.0, 3.0])),
    "vjp_tuple_out": lambda T: T.func.vjp(lambda x, y: (x * y, x + y), x_of(T), x_of(T))[1](
        (x_of(T), x_of(T, [1.0, 1.0, 1.0]))),
    "vjp_output": lambda T: T.func.vjp(lambda x: x.exp(), x_of(T))[0],
    "vjp_has_aux": lambda T: T.func.vjp(lambda x: (x.exp(), x.sum()), x_of(T), has_aux=True)[2],
    "jacrev": lambda T: T.func.jacrev(lambda x: x.sin() * x.sum())(x_of(T)),
    "jacrev_matrix_in_out": lambda T: T.func.jacrev(lambda w: w @ x_of(T))(x_of(T, W)),
    "jacrev_argnums": lambda T: T.func.jacrev(lambda x, y: (x * y, x.sum()), argnums=(0, 1))(x_of(T), x_of(T)),
    "jacrev_dict_in": lambda T: T.func.jacrev(lambda d: d["a"] * 2)({"a": x_of(T)}),
    "jacrev_has_aux": lambda T: T.func.jacrev(lambda x: (x ** 2, x.mean()), has_aux=True)(x_of(T)),
    "jacrev_chunk_size": lambda T: T.func.jacrev(lambda x: x.exp(), chunk_size=2)(x_of(T)),
    "hessian": lambda T: T.func.hessian(lambda x: (x.sin() * x.sum()).sum())(x_of(T)),
    "hessian_argnums": lambda T: T.func.hessian(lambda x, y: (x * y * y).sum(), argnums=1)(x_of(T), x_of(T)),
    # errors
    "grad_not_scalar": lambda T: T.func.grad(lambda x: x * 2)(x_of(T)),
    "grad_not_tensor": lambda T: T.func.grad(lambda x: 2.0)(x_of(T)),
    "grad_argnum_range": lambda T: T.func.grad(lambda x: x.sum(), argnums=1)(x_of(T)),
    "grad_argnums_range_tuple": lambda T: T.func.grad(lambda x: x.sum(), argnums=(0, 1))(x_of(T)),
    "grad_argnums_float": lambda T: T.func.grad(lambda x: x.sum(), argnums=1.5)(x_of(T)),
    "grad_argnums_empty": lambda T: T.func.grad(lambda x: x.sum(), argnums=())(x_of(T)),
    "grad_argnums_repeated": lambda T: T.func.grad(lambda x, y: x.sum(), argnums=(0, 0))(x_of(T), x_of(T)),
    "grad_argnums_element": lambda T: T.func.grad(lambda x, y: x.sum(), argnums=(0, 1.0))(x_of(T), x_of(T)),
    "grad_no_inputs": lambda T: T.func.grad(lambda: 1)(),
    "grad_has_aux_not_tuple": lambda T: T.func.grad(lambda x: x.sum(), has_aux=True)(x_of(T)),
    "grad_non_tensor_input": lambda T: T.func.grad(lambda x: x)(2.0),
    "grad_non_tensor_leaf": lambda T: T.func.grad(lambda d: d["a"].sum())({"a": x_of(T), "b": 2.0}),
    "grad_integer_input": lambda T: T.func.grad(lambda x: x.sum())(T.ones(3, dtype=T.long)),
    "vjp_shape": lambda T: T.func.vjp(lambda x: x * 2, x_of(T))[1](T.ones(4, dtype=T.float64)),
    "vjp_structure": lambda T: T.func.vjp(lambda x: (x, x), x_of(T))[1](x_of(T)),
    "vjp_structure_dict": lambda T: T.func.vjp(lambda x: {"a": x, "b": [x, x]}, x_of(T))[1](x_of(T)),
    "vjp_non_tensor_out": lambda T: T.func.vjp(lambda x: 2.0, x_of(T)),
    "vjp_integer_out": lambda T: T.func.vjp(lambda x: x.long(), x_of(T)),
    "vjp_has_aux_not_tuple": lambda T: T.func.vjp(lambda x: x * 2, x_of(T), has_aux=True),
    "jacrev_argnum_range": lambda T: T.func.jacrev(lambda x: x, argnums=1)(x_of(T)),
    "jacrev_integer_out": lambda T: T.func.jacrev(lambda x: x.long())(x_of(T)),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_parity(real_torch, name):
    check_parity(real_torch, PROGRAMS[name], rtol=1e-6, atol=1e-12)


def test_requires_grad_of_results_matches_pytorch(real_torch):
    for T in (real_torch, edutorch):
        w = T.tensor(X, requires_grad=True)
        plain = T.func.grad(lambda x: (x ** 2).sum())(x_of(T))
        closed_over = T.func.grad(lambda x, w=w: (x * w).sum() ** 2)(x_of(T))
        assert (plain.requires_grad, closed_over.requires_grad) == (False, True)
        assert T.func.vjp(lambda x: x.exp(), x_of(T))[0].requires_grad is False
