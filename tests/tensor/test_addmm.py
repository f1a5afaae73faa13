"""``torch.addmm`` is one op with PyTorch's node (``AddmmBackward0``), its gradient the shared
matrix-product helpers (``mm_mat1_backward``/``mm_mat2_backward``); ``F.linear`` is built on it."""
import numpy as np
import pytest

import edutorch as et
from edutorch.autograd import gradcheck, gradgradcheck

TORCH_REASON = "real PyTorch not installed: parity test skipped"
rng = np.random.default_rng(3)

# (input shape, beta, alpha): input broadcasts to the (3, 5) product
CASES = [((5,), 1, 1), ((3, 5), 0.5, 2), ((3, 1), 1, -1.5), ((), 2, 1), ((1, 5), 0, 1)]


def _t(shape, requires_grad=True):
    return et.tensor(rng.standard_normal(shape), dtype=et.float64, requires_grad=requires_grad)


@pytest.mark.parametrize("shape, beta, alpha", CASES)
def test_addmm_first_and_second_derivatives(shape, beta, alpha):
    inputs = (_t(shape), _t((3, 4)), _t((4, 5)))

    def f(b, x, y):
        return et.addmm(b, x, y, beta=beta, alpha=alpha)

    assert gradcheck(f, inputs)
    assert gradgradcheck(f, inputs)


def test_addmm_node_and_beta_zero_ignores_nan():
    b = et.full((5,), float("nan"), dtype=et.float64, requires_grad=True)
    x, y = _t((3, 4)), _t((4, 5))
    out = et.addmm(b, x, y, beta=0)
    assert out.grad_fn.name() == "AddmmBackward0" and not out.isnan().any()
    assert x.addmm(x, _t((4, 4))).grad_fn.name() == "AddmmBackward0"
    out.sum().backward()
    assert (b.grad == 0).all()


def _graph(lib, a_np, b_np, c_np, **kw):
    b = lib.tensor(a_np, requires_grad=True)
    x = lib.tensor(b_np, requires_grad=True)
    w = lib.tensor(c_np, requires_grad=True)
    out = lib.addmm(b, x, w.t(), **kw)
    (out * lib.tensor(np.arange(15.0).reshape(3, 5))).sum().backward()
    node = out.grad_fn
    saved = {n: getattr(node, n) for n in dir(node) if n.startswith("_saved_") and "mat" not in n[7:11]}
    saved.update({n: tuple(getattr(node, n)) for n in dir(node) if n.startswith("_saved_mat") and "sym" in n})
    nexts = [None if f is None else f.name().split("::")[-1] for f, _ in node.next_functions]
    return out.detach().numpy(), [t.grad.numpy() for t in (b, x, w)], node.name(), nexts, saved


@pytest.mark.parametrize("kw", [{}, {"beta": 0.5, "alpha": 2}])
def test_addmm_matches_torch(kw):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    args = (rng.standard_normal(5), rng.standard_normal((3, 4)), rng.standard_normal((5, 4)))
    ours, theirs = _graph(et, *args, **kw), _graph(torch, *args, **kw)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    for g, h in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(g, h, rtol=1e-12)
    assert ours[2:] == theirs[2:]


@pytest.mark.parametrize("call", [
    lambda T, f, d: T.addmm(T.ones(5, dtype=d), T.ones(3, 4, dtype=f), T.ones(3, 5, dtype=d)),
    lambda T, f, d: T.addmm(T.ones(5, dtype=d), T.ones(3, 4, dtype=f), T.ones(3, 5, dtype=f)),
    lambda T, f, d: T.addmm(T.ones(5, dtype=f), T.ones(3, 4, dtype=d), T.ones(3, 5, dtype=f)),
    lambda T, f, d: T.addmm(T.ones(5, dtype=f), T.ones(3, 4, dtype=f), T.ones(3, 5, dtype=f)),
    lambda T, f, d: T.addmm(T.ones(2, dtype=f), T.ones(3, 4, dtype=f), T.ones(4, 5, dtype=f)),
    lambda T, f, d: T.addmm(T.ones(2, dtype=f), T.ones(4, dtype=f), T.ones(3, 5, dtype=f)),
    lambda T, f, d: T.addmm(T.ones(2, dtype=f), T.ones(3, 4, dtype=f), T.ones(4, dtype=f)),
    lambda T, f, d: T.addmm(T.ones(3, 5, dtype=T.bool), T.ones(3, 4, dtype=T.bool), T.ones(4, 5, dtype=T.bool)),
])
def test_addmm_errors_match_torch(call):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    errors = []
    for lib in (et, torch):
        with pytest.raises(Exception) as info:
            call(lib, lib.float32, lib.float64)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


def _linear_graph(lib, x_shape, bias):
    gen = np.random.default_rng(0)
    x = lib.tensor(gen.standard_normal(x_shape), requires_grad=True)
    w = lib.tensor(gen.standard_normal((5, 4)), requires_grad=True)
    b = lib.tensor(gen.standard_normal(5), requires_grad=True) if bias else None
    out = lib.nn.functional.linear(x, w, b)
    out.sum().backward()
    first = out.grad_fn.next_functions[0][0]
    grads = [t.grad.numpy() for t in (x, w, b) if t is not None]
    return out.grad_fn.name(), first.name() if first is not None else None, out.detach().numpy(), grads


@pytest.mark.parametrize("x_shape", [(3, 4), (2, 3, 4), (4,)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_nodes_match_torch(x_shape, bias):
    """F.linear's node and the one below it, as PyTorch names them (the weight's TBackward0
    edge aside: a known difference)."""
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    ours, theirs = _linear_graph(et, x_shape, bias), _linear_graph(torch, x_shape, bias)
    if x_shape == (3, 4):
        assert ours[0] == theirs[0]
    else:
        assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    for g, h in zip(ours[3], theirs[3]):
        np.testing.assert_allclose(g, h, rtol=1e-12)


def test_linear_second_derivatives():
    x, w, b = _t((3, 4)), _t((5, 4)), _t((5,))
    f = et.nn.functional.linear
    assert gradcheck(f, (x, w, b)) and gradgradcheck(f, (x, w, b))
    assert gradcheck(lambda x, w: f(x, w), (x, w)) and gradgradcheck(lambda x, w: f(x, w), (x, w))


@pytest.mark.parametrize("alpha", [1, -0.5])
def test_transposed_helpers_are_the_transposed_formula(alpha):
    """``transposed=True`` (F.linear: the caller holds W = mat2ᵀ) is the same formula, with no
    transpose op on W: dA = G (Wᵀ)ᵀ = G W, and W's gradient (Aᵀ G)ᵀ."""
    from edutorch.autograd._functions.blas import mm_mat1_backward, mm_mat2_backward

    g, a, w = _t((3, 5), False), _t((3, 4), False), _t((5, 4), False)
    np.testing.assert_allclose(mm_mat1_backward(g, w, alpha, transposed=True).numpy(),
                               mm_mat1_backward(g, w.t(), alpha).numpy(), rtol=1e-12)
    np.testing.assert_allclose(mm_mat2_backward(g, a, alpha, transposed=True).numpy(),
                               mm_mat2_backward(g, a, alpha).t().numpy(), rtol=1e-12)


def test_linear_backward_makes_no_view_of_the_weight():
    """Under create_graph, F.linear's input gradient is one ``mm`` of grad and W itself, and
    W's gradient ``mm(gradᵀ, x)``: PyTorch's node names, no ``W.t().t()`` pair of views."""
    x, w, b = _t((3, 4)), _t((5, 4)), _t((5,))
    y = et.nn.functional.linear(x, w, b)
    gx, gw = et.autograd.grad((y * y).sum(), (x, w), create_graph=True)
    names = [[f.name() for f, _ in g.grad_fn.next_functions] for g in (gx, gw)]
    assert (gx.grad_fn.name(), gw.grad_fn.name()) == ("MmBackward0", "MmBackward0")
    assert names == [["AddBackward0", "AccumulateGrad"], ["TBackward0", "AccumulateGrad"]]  # (y*y): y g + g y


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5))])
def test_product_gradients_record_torchs_transpose_nodes(shapes):
    """Under create_graph the helpers transpose as PyTorch's formulas do: ``t()`` for ``mm``
    (``TBackward0``), ``transpose(1, 2)`` for ``bmm`` (``TransposeBackward0``)."""
    torch = pytest.importorskip("torch", reason=TORCH_REASON)

    def names(lib):
        a, b = (lib.ones(s, dtype=lib.float64, requires_grad=True) for s in shapes)
        y = a @ b
        grads = lib.autograd.grad((y * y).sum(), (a, b), create_graph=True)
        return [[g.grad_fn.name()] + [f.name() for f, _ in g.grad_fn.next_functions] for g in grads]

    assert names(et) == names(torch)
