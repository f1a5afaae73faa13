"""Forward-mode corners, vs PyTorch 2.13 and by hand: a dual tensor given by keyword (to a
built-in op, to a custom ``Function``, whose ``apply`` binds keywords to ``forward``'s
parameters as PyTorch's does), and every op of the tables with ONE input dual at a time
(the other inputs without tangent: each formula's missing-tangent terms)."""
import numpy as np
import pytest

import edutorch as et
from forward_ad_cases import EXTRA_CASES
from op_cases import OP_CASES, sample

REASON = "real PyTorch not installed: forward-mode parity test skipped"
RNG = np.random.default_rng(7)
A, T, W, B = (RNG.standard_normal(s) for s in [(3, 4), (3, 4), (2, 4), (2,)])


def _tangent(lib, fn):
    """The tangent of ``fn(dual)``, with ``dual = make_dual(A, T)``."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        dual = fw.make_dual(lib.tensor(A), lib.tensor(T))
        return fw.unpack_dual(fn(lib, dual)).tangent.detach().numpy().copy()


KEYWORD_CASES = {
    "add(other=)": lambda lib, d: lib.add(lib.tensor(A), other=d, alpha=2),
    "sub(input=, other=)": lambda lib, d: lib.sub(input=lib.tensor(A), other=d),
    "F.linear(input=)": lambda lib, d: lib.nn.functional.linear(input=d, weight=lib.tensor(W)),
    "F.linear(bias=)": lambda lib, d: lib.nn.functional.linear(d, lib.tensor(W), bias=lib.tensor(B)),
    "lerp(end=)": lambda lib, d: lib.lerp(lib.tensor(A), end=d, weight=0.3),
    "F.mse_loss(input=, target=)": lambda lib, d: lib.nn.functional.mse_loss(input=d, target=lib.tensor(A)),
}


@pytest.mark.parametrize("name", list(KEYWORD_CASES))
def test_a_dual_given_by_keyword_to_an_op_has_torchs_tangent(name):
    torch = pytest.importorskip("torch", reason=REASON)
    fn = KEYWORD_CASES[name]
    np.testing.assert_allclose(_tangent(et, fn), _tangent(torch, fn), rtol=1e-12, atol=1e-12)


def _scaled_product(lib):
    """``x * y * scale`` as a custom Function in the ctx form, with ``y`` and ``scale`` defaulted."""

    class ScaledProduct(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y=None, scale=1.0):
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)
            ctx.scale = scale
            return x * y * scale

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * y * ctx.scale, grad * x * ctx.scale, None

        @staticmethod
        def jvp(ctx, dx, dy, _dscale=None):  # (no scale given: no tangent slot for it)
            x, y = ctx.saved_tensors
            return (dx * y + x * dy) * ctx.scale

    return ScaledProduct


def _split_product(lib, seen):
    """The same in PyTorch 2's split form (``setup_context``); ``seen`` collects what it gets."""

    class SplitProduct(lib.autograd.Function):
        @staticmethod
        def forward(x, y=None, scale=2.0):
            return x * y * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen.append(len(inputs))
            ctx.save_for_forward(*inputs[:2])
            ctx.scale = inputs[2]

        @staticmethod
        def jvp(ctx, *tangents):
            seen.append(len(tangents))
            x, y = ctx.saved_tensors
            return (tangents[0] * y + x * tangents[1]) * ctx.scale

    return SplitProduct


def test_a_custom_functions_keyword_dual_gets_its_tangent_without_torch():
    fw = et.autograd.forward_ad
    x, y = et.tensor(A), et.tensor(A + 1)
    with fw.dual_level():
        out = _scaled_product(et).apply(x, y=fw.make_dual(y, et.tensor(T)), scale=3.0)
        tangent = fw.unpack_dual(out).tangent
    np.testing.assert_allclose(tangent.numpy(), 3.0 * A * T)  # d(3 x y)/dy . T


def test_a_custom_functions_keyword_tensor_gets_its_edge_and_gradient_without_torch():
    x = et.tensor(A, requires_grad=True)
    y = et.tensor(A + 1, requires_grad=True)
    out = _scaled_product(et).apply(x, y=y, scale=2.0)
    assert len(out.grad_fn.next_functions) == 2
    out.sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), 2 * A)
    np.testing.assert_allclose(x.grad.numpy(), 2 * (A + 1))


def test_custom_functions_bind_keywords_as_torch():
    torch = pytest.importorskip("torch", reason=REASON)

    def run(lib):
        fw = lib.autograd.forward_ad
        seen, x, y = [], lib.tensor(A), lib.tensor(A + 1)
        with fw.dual_level():
            ctx_form = fw.unpack_dual(_scaled_product(lib).apply(x, y=fw.make_dual(y, lib.tensor(T)))).tangent
            split = fw.unpack_dual(_split_product(lib, seen).apply(x, fw.make_dual(y, lib.tensor(T)))).tangent
            by_keyword = fw.unpack_dual(_split_product(lib, seen).apply(x, y=fw.make_dual(y, lib.tensor(T)))).tangent
        xg, yg = lib.tensor(A, requires_grad=True), lib.tensor(A + 1, requires_grad=True)
        node = _scaled_product(lib).apply(xg, y=yg).grad_fn
        return [t.numpy() for t in (ctx_form, split, by_keyword)], seen, len(node.next_functions)

    (ours, our_seen, our_edges), (theirs, their_seen, their_edges) = run(et), run(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert our_seen == their_seen == [3, 3, 3, 3]  # the split form gets forward's defaults too
    assert our_edges == their_edges == 2


def test_an_unknown_keyword_is_torchs_type_error():
    torch = pytest.importorskip("torch", reason=REASON)
    messages = []
    for lib in (et, torch):
        with pytest.raises(TypeError) as info:
            _scaled_product(lib).apply(lib.tensor(A), z=lib.tensor(A))
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "forward() got an unexpected keyword argument 'z'"


# -- one input dual at a time, every op of the tables ------------------------------------------------

ONE_AT_A_TIME = [(case, i) for case in OP_CASES + EXTRA_CASES for i in range(len(case.shapes))]


def _tangents_with_one_dual(lib, case, i):
    """The tangent of each float output (None: none) with only input ``i`` dual."""
    rng = np.random.default_rng(5)
    arrays = [sample(s, case.domain, rng) for s in case.shapes]
    direction = rng.standard_normal(arrays[i].shape)
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        args = [lib.tensor(a) for a in arrays]
        args[i] = fw.make_dual(args[i], lib.tensor(direction))
        out = case.fn(lib, *args)
        outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o is not None and o.dtype.is_floating_point]
        tangents = [fw.unpack_dual(o).tangent for o in outs]
        return [None if t is None else t.numpy().copy() for t in tangents]


@pytest.mark.parametrize("case, i", ONE_AT_A_TIME, ids=[f"{c.id}-dual{i}" for c, i in ONE_AT_A_TIME])
def test_one_dual_input_gives_torchs_tangent(case, i):
    torch = pytest.importorskip("torch", reason=REASON)
    ours, theirs = _tangents_with_one_dual(et, case, i), _tangents_with_one_dual(torch, case, i)
    assert len(ours) == len(theirs)
    for t, tt in zip(ours, theirs):
        if t is None:  # no tangent: PyTorch's is none either, or zeros
            assert tt is None or not np.any(tt)
        else:
            assert tt is not None
            np.testing.assert_allclose(t, tt, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("case, i", ONE_AT_A_TIME, ids=[f"{c.id}-dual{i}" for c, i in ONE_AT_A_TIME])
def test_one_dual_input_matches_finite_differences(case, i):
    """Without torch: the tangent is (f(x_i + eps u) - f(x_i - eps u)) / 2 eps, the others fixed."""
    eps = 1e-6
    rng = np.random.default_rng(5)
    arrays = [sample(s, case.domain, rng) for s in case.shapes]
    direction = rng.standard_normal(arrays[i].shape)

    def values(shift):
        args = [et.tensor(a + shift * direction if k == i else a) for k, a in enumerate(arrays)]
        out = case.fn(et, *args)
        return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))
                if o is not None and o.dtype.is_floating_point]

    for tangent, up, down in zip(_tangents_with_one_dual(et, case, i), values(eps), values(-eps)):
        expected = (up - down) / (2 * eps)
        np.testing.assert_allclose(np.zeros_like(expected) if tangent is None else tangent, expected,
                                   rtol=1e-5, atol=1e-6)
