"""parametrize.register_parametrization & co, and parametrizations.orthogonal/weight_norm/spectral_norm."""
import copy

import numpy as np
import pytest

import edutorch as et
import edutorch.nn as nn
from edutorch.nn.utils import parametrizations, parametrize

from nn_utils_helpers import check_grad, pair, require_torch, to_np

UPPER = np.triu(np.ones((4, 4), dtype=np.float32))
STRICT_UPPER = np.triu(np.ones((4, 4), dtype=np.float32), 1)


class Symmetric(nn.Module):
    """The tutorial's example, with ``triu`` written as a multiplication by a 0/1 mask."""

    def forward(self, X):
        return X * et.tensor(UPPER) + (X * et.tensor(STRICT_UPPER)).T

    def right_inverse(self, A):
        return A * et.tensor(UPPER)


class Double(nn.Module):
    def forward(self, X):
        return 2 * X

    def right_inverse(self, A):
        return A / 2


class NoInverse(nn.Module):
    def forward(self, X):
        return X + 1


class Split(nn.Module):
    """Parametrized by two tensors: ``original0 + original1``."""

    def forward(self, a, b):
        return a + b

    def right_inverse(self, X):
        return X * 0.25, X * 0.75


def test_register_makes_a_property_on_a_new_class():
    m = nn.Linear(4, 4)
    w = m.weight
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and isinstance(m, nn.Linear)
    assert type(nn.Linear(2, 2)).__name__ == "Linear"  # other Linears are untouched
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    W = to_np(m.weight)
    np.testing.assert_allclose(W, W.T)
    assert m.parametrizations.weight.original is w  # the same Parameter object, new values
    np.testing.assert_allclose(to_np(w), np.triu(to_np(w)))
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]


def test_assignment_goes_through_right_inverse():
    m = parametrize.register_parametrization(nn.Linear(4, 4), "weight", Symmetric())
    A = et.rand(4, 4)
    A = A + A.T
    m.weight = A
    np.testing.assert_allclose(to_np(m.weight), to_np(A), rtol=1e-6)


def test_names_and_values_match_torch():
    torch = require_torch()
    import torch.nn.utils.parametrize as tP

    class TDouble(torch.nn.Module):
        def forward(self, X):
            return 2 * X

        def right_inverse(self, A):
            return A / 2

    e, t = pair("Linear", 3, 4)
    parametrize.register_parametrization(e, "weight", Double())
    parametrize.register_parametrization(e, "weight", Double())
    parametrize.register_parametrization(e, "bias", Double())
    tP.register_parametrization(t, "weight", TDouble())
    tP.register_parametrization(t, "weight", TDouble())
    tP.register_parametrization(t, "bias", TDouble())
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert list(e.state_dict()) == list(t.state_dict())
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    np.testing.assert_allclose(to_np(e.weight), to_np(t.weight), rtol=1e-6)
    np.testing.assert_allclose(to_np(e.parametrizations.weight.original),
                               to_np(t.parametrizations.weight.original), rtol=1e-6)
    x = np.ones((2, 3), dtype=np.float32)
    e(et.tensor(x)).sum().backward()
    t(torch.tensor(x)).sum().backward()
    np.testing.assert_allclose(e.parametrizations.weight.original.grad.numpy(),
                               t.parametrizations.weight.original.grad.numpy(), rtol=1e-6)
    assert repr(e) == repr(t).replace("TDouble", "Double")


def test_several_tensors_are_original0_original1():
    m = nn.Linear(3, 2)
    w = to_np(m.weight).copy()
    parametrize.register_parametrization(m, "weight", Split())
    assert [n for n, _ in m.named_parameters()] == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    np.testing.assert_allclose(to_np(m.weight), w, rtol=1e-6)
    np.testing.assert_allclose(to_np(m.parametrizations.weight.original0), 0.25 * w, rtol=1e-6)
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(m, "weight")
    assert isinstance(m.weight, nn.Parameter) and type(m) is nn.Linear


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    m = nn.Linear(3, 3)
    w = m.weight
    before = to_np(w).copy()
    parametrize.register_parametrization(m, "weight", Double())
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=leave)
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert m.weight is w and isinstance(m.weight, nn.Parameter)
    np.testing.assert_allclose(to_np(m.weight), before if leave else before / 2, rtol=1e-6)
    assert list(m.state_dict()) == ["bias", "weight"]


def test_buffers_can_be_parametrized_too():
    m = nn.Module()
    m.register_buffer("scale", et.ones(3))
    parametrize.register_parametrization(m, "scale", Double())
    np.testing.assert_allclose(to_np(m.scale), [1.0, 1.0, 1.0])
    assert [n for n, _ in m.named_buffers()] == ["parametrizations.scale.original"]


def test_cached_computes_once():
    calls = []

    class Counting(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X

    m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Counting(), unsafe=True)
    calls.clear()
    with parametrize.cached():
        a, b = m.weight, m.weight
    assert a is b and len(calls) == 1
    _ = m.weight
    assert len(calls) == 2


def test_errors():
    torch = require_torch()
    import torch.nn.utils.parametrize as tP

    class Shrink(nn.Module):
        def forward(self, X):
            return X[0]

    with pytest.raises(ValueError, match="may not change the shape of the tensor") as got:
        parametrize.register_parametrization(nn.Linear(3, 2), "weight", Shrink())
    assert "unparametrized shape: torch.Size([2, 3])\nparametrized shape: torch.Size([3])" in str(got.value)
    m = nn.Linear(3, 2)
    with pytest.raises(ValueError) as got:
        parametrize.register_parametrization(m, "foo", Double())
    t = torch.nn.Linear(3, 2)

    class TDouble(torch.nn.Module):
        def forward(self, X):
            return 2 * X

    with pytest.raises(ValueError) as want:
        tP.register_parametrization(t, "foo", TDouble())
    assert str(got.value) == str(want.value)
    with pytest.raises(ValueError) as got:
        parametrize.remove_parametrizations(m, "weight")
    with pytest.raises(ValueError) as want:
        tP.remove_parametrizations(t, "weight")
    assert str(got.value) == str(want.value)
    parametrize.register_parametrization(m, "weight", NoInverse())
    with pytest.raises(RuntimeError, match="parametrization NoInverse does not implement right_inverse."):
        m.weight = et.zeros(2, 3)


def test_deepcopy_works_but_pickling_state_is_refused():
    m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Double())
    m2 = copy.deepcopy(m)
    np.testing.assert_allclose(to_np(m2.weight), to_np(m.weight))
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        m.__getstate__()


# -- parametrizations -------------------------------------------------------------------------
@pytest.mark.parametrize("shape,orth_map", [
    ((5, 5), None), ((5, 5), "cayley"), ((5, 5), "householder"),
    ((3, 5), None), ((5, 3), None), ((3, 5), "matrix_exp"), ((5, 3), "cayley"),
])
def test_orthogonal_weight_is_orthogonal_and_matches_torch(shape, orth_map):
    torch = require_torch()
    out_f, in_f = shape
    e, t = pair("Linear", in_f, out_f)
    parametrizations.orthogonal(e, orthogonal_map=orth_map)
    torch.nn.utils.parametrizations.orthogonal(t, orthogonal_map=orth_map)
    W = to_np(e.weight).astype(np.float64)
    small = min(shape)
    gram = W.T @ W if shape[0] >= shape[1] else W @ W.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)
    # the initial weight is the orthogonalized original weight: the same as PyTorch's
    np.testing.assert_allclose(W, to_np(t.weight), atol=1e-5)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]

    # the random completion of a non-square base: start from PyTorch's to compare gradients
    e.parametrizations.weight[0].base.data = et.from_numpy(to_np(t.parametrizations.weight[0].base).copy())

    # one training step keeps it orthogonal, and the gradient matches PyTorch's
    x = np.random.default_rng(0).standard_normal((2, in_f)).astype(np.float32)
    (e(et.tensor(x)) ** 2).sum().backward()
    (t(torch.tensor(x)) ** 2).sum().backward()
    g_e = e.parametrizations.weight.original.grad.numpy()
    g_t = t.parametrizations.weight.original.grad.numpy()
    np.testing.assert_allclose(g_e, g_t, atol=1e-4, rtol=1e-3)
    with et.no_grad():
        e.parametrizations.weight.original.sub_(0.1 * e.parametrizations.weight.original.grad)
    W = to_np(e.weight).astype(np.float64)
    gram = W.T @ W if shape[0] >= shape[1] else W @ W.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)


def test_orthogonal_without_trivialization_householder_matches_torch():
    torch = require_torch()
    e, t = pair("Linear", 3, 5)
    parametrizations.orthogonal(e, orthogonal_map="householder", use_trivialization=False)
    torch.nn.utils.parametrizations.orthogonal(t, orthogonal_map="householder", use_trivialization=False)
    np.testing.assert_allclose(to_np(e.weight), to_np(t.weight), atol=1e-5)
    np.testing.assert_allclose(to_np(e.parametrizations.weight.original),
                               to_np(t.parametrizations.weight.original), atol=1e-5)


def test_orthogonal_errors():
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a tensor of 1 dimensions."):
        parametrizations.orthogonal(nn.Linear(3, 3), "bias")
    with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: foo'):
        parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="foo")


def test_matrix_exp_and_solve_gradcheck_float64():
    """The ops the orthogonal maps are built from (public API: matrix_exp, linalg.solve,
    linalg.householder_product)."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 4))
    np.testing.assert_allclose(et.matrix_exp(et.tensor(A)).numpy(),
                               _reference_expm(A), rtol=1e-10, atol=1e-12)
    check_grad(lambda a: et.matrix_exp(a), A)
    check_grad(lambda a, b: et.linalg.solve(a, b), A + 4 * np.eye(4), rng.standard_normal((4, 2)))
    check_grad(lambda a, tau: et.linalg.householder_product(a, tau), rng.standard_normal((5, 3)),
               rng.uniform(0.5, 1.5, 3))


@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 4), (3, 6)])
def test_geqrf_and_householder_product_match_torch(shape):
    """``geqrf`` (Householder form of QR) and ``householder_product`` rebuilding Q."""
    torch = require_torch()
    A = np.random.default_rng(1).standard_normal(shape)
    a, tau = et.geqrf(et.tensor(A))
    ta, ttau = torch.geqrf(torch.tensor(A))
    np.testing.assert_allclose(a.numpy(), ta.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tau.numpy(), ttau.numpy(), rtol=1e-10, atol=1e-12)
    if shape[-2] >= shape[-1]:
        Q = et.linalg.householder_product(a, tau)
        np.testing.assert_allclose(Q.numpy(), torch.linalg.householder_product(ta, ttau).numpy(),
                                   rtol=1e-10, atol=1e-12)
    else:
        with pytest.raises(RuntimeError, match=r"input.shape\[-2\] must be greater than or equal"):
            et.linalg.householder_product(a, tau)
    assert type(et.geqrf(et.tensor(A))).__name__ == "geqrf" and et.geqrf(et.tensor(A)).tau.shape == tau.shape


def _reference_expm(A, terms=60):
    """Plain Taylor series in float64 (fine for a small-norm test matrix)."""
    out, term = np.eye(len(A)), np.eye(len(A))
    for i in range(1, terms):
        term = term @ A / i
        out = out + term
    return out


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrized_weight_norm_matches_torch(dim):
    torch = require_torch()
    e, t = pair("Linear", 4, 3)
    parametrizations.weight_norm(e, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(t, dim=dim)
    assert list(e.state_dict()) == list(t.state_dict()) == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    for name in ("original0", "original1"):
        np.testing.assert_allclose(to_np(getattr(e.parametrizations.weight, name)),
                                   to_np(getattr(t.parametrizations.weight, name)), rtol=1e-6)
    np.testing.assert_allclose(to_np(e.weight), to_np(t.weight), rtol=1e-6, atol=1e-7)
    assert e.weight.grad_fn.name() == t.weight.grad_fn.name()


def test_old_weight_norm_state_dict_loads_into_the_parametrized_module():
    import warnings

    from edutorch.nn.utils import weight_norm

    old = nn.Linear(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        weight_norm(old)
    new = parametrizations.weight_norm(nn.Linear(4, 3))
    new.load_state_dict(old.state_dict())
    np.testing.assert_allclose(to_np(new.weight), to_np(old.weight), rtol=1e-6)


def test_parametrized_spectral_norm_matches_torch():
    torch = require_torch()
    e, t = pair("Linear", 6, 4)
    parametrizations.spectral_norm(e)
    torch.nn.utils.parametrizations.spectral_norm(t)
    assert list(e.state_dict()) == list(t.state_dict())
    pe, pt = e.parametrizations.weight[0], t.parametrizations.weight[0]
    pe._u.data = et.from_numpy(to_np(pt._u).copy())
    pe._v.data = et.from_numpy(to_np(pt._v).copy())
    for _ in range(2):  # each read in training mode runs one power iteration
        np.testing.assert_allclose(to_np(e.weight), to_np(t.weight), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(to_np(pe._u), to_np(pt._u), rtol=1e-4, atol=1e-6)
    e.eval()
    t.eval()
    np.testing.assert_allclose(to_np(e.weight), to_np(t.weight), rtol=1e-4, atol=1e-6)
    sigma = np.linalg.svd(to_np(e.parametrizations.weight.original), compute_uv=False)[0]
    assert sigma > 0


def test_matrix_exp_double_backward_float64():
    from nn_utils_helpers import numerical_grad

    rng = np.random.default_rng(4)
    A0 = rng.standard_normal((3, 3)) * 0.5
    R = et.tensor(rng.standard_normal((3, 3)))
    W = et.tensor(rng.standard_normal((3, 3)))

    def second(a_array, create_graph):
        """sum(W * d/dA sum(exp(A) * R)): a first derivative, differentiated again."""
        a = et.tensor(a_array, requires_grad=True)
        (g,) = et.autograd.grad((et.matrix_exp(a) * R).sum(), a, create_graph=create_graph)
        return a, (g * W).sum()

    a, s = second(A0, create_graph=True)
    s.backward()
    numeric = numerical_grad(lambda: float(second(A0, False)[1].item()), A0)
    np.testing.assert_allclose(a.grad.numpy(), numeric, rtol=1e-4, atol=1e-6)
