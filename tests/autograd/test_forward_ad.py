"""Forward-mode AD (``torch.autograd.forward_ad``): tangents of every op in the op table.

Per case of ``op_cases.py`` (so coverage grows with the table):

* the tangent equals the central difference (f(x + eps u) - f(x - eps u)) / 2 eps
  in float64 (no PyTorch needed);
* v·(J u) from forward mode equals (Jᵀ v)·u from backward (no PyTorch needed);
* primal and tangent equal real PyTorch's (skipped without it).

Then the API itself: levels, ``make_dual``/``unpack_dual`` and their errors,
views and in-place ops on dual tensors, the printed form, an op without a
tangent formula, and custom ``Function.jvp``.
"""
import numpy as np
import pytest

import edutorch as et
import edutorch.autograd.forward_ad as fwAD
from op_cases import OP_CASES, sample

from forward_ad_cases import EXTRA_CASES

ALL_CASES = OP_CASES + EXTRA_CASES
by_case = pytest.mark.parametrize("case", ALL_CASES, ids=[c.id for c in ALL_CASES])

EPS = 1e-6


def _inputs(case, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [sample(s, case.domain, rng) for s in case.shapes]
    directions = [rng.standard_normal(a.shape) for a in arrays]
    return arrays, directions, rng


def _as_tuple(out):
    return out if isinstance(out, tuple) else (out,)


def _float_outputs(out):
    return [o for o in _as_tuple(out) if o is not None and o.dtype.is_floating_point]


def _forward_mode(lib, case, arrays, directions):
    """Primal and tangent of every float output, with every input dual."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        duals = [fw.make_dual(lib.tensor(a), lib.tensor(d)) for a, d in zip(arrays, directions)]
        outs = _float_outputs(case.fn(lib, *duals))
        pairs = [fw.unpack_dual(o) for o in outs]
        return [(p.detach().numpy().copy(), None if t is None else t.detach().numpy().copy())
                for p, t in pairs]


def _values(case, arrays):
    return [o.detach().numpy() for o in _float_outputs(case.fn(et, *[et.tensor(a) for a in arrays]))]


@by_case
def test_tangent_matches_finite_differences(case):
    arrays, directions, _ = _inputs(case)
    got = _forward_mode(et, case, arrays, directions)
    up = _values(case, [a + EPS * d for a, d in zip(arrays, directions)])
    down = _values(case, [a - EPS * d for a, d in zip(arrays, directions)])
    for (_, tangent), hi, lo in zip(got, up, down):
        expected = (hi - lo) / (2 * EPS)
        actual = np.zeros_like(expected) if tangent is None else tangent
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


@by_case
def test_jvp_agrees_with_vjp(case):
    """v·(J u) == (Jᵀ v)·u: forward and reverse mode describe the same Jacobian."""
    arrays, directions, rng = _inputs(case, seed=1)
    got = _forward_mode(et, case, arrays, directions)
    weights = [rng.standard_normal(primal.shape) for primal, _ in got]
    forward = sum(float((w * t).sum()) for w, (_, t) in zip(weights, got) if t is not None)
    xs = [et.tensor(a, requires_grad=True) for a in arrays]
    outs = _float_outputs(case.fn(et, *xs))
    total = sum((o * et.tensor(w)).sum() for o, w in zip(outs, weights))
    grads = et.autograd.grad(total, xs, allow_unused=True) if total.requires_grad else [None] * len(xs)
    reverse = sum(float((g.numpy() * d).sum()) for g, d in zip(grads, directions) if g is not None)
    np.testing.assert_allclose(forward, reverse, rtol=1e-7, atol=1e-9)


def _node_names(lib, case, arrays, directions):
    """The ``grad_fn`` names of the outputs when the dual inputs also require grad."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        duals = [fw.make_dual(lib.tensor(a, requires_grad=True), lib.tensor(d)) for a, d in zip(arrays, directions)]
        outs = _float_outputs(case.fn(lib, *duals))
        return [None if o.grad_fn is None else type(o.grad_fn).__name__ for o in outs]


# layers edutorch composes from other ops, so their nodes are named after those (a reverse-mode
# matter, the same without forward mode)
COMPOSED = {"square", "fmod", "bilinear", "pad", "pixel_shuffle", "activations", "softmin_glu", "prelu"}


NAMED_CASES = [c for c in ALL_CASES if c.name not in COMPOSED]


@pytest.mark.parity
@pytest.mark.parametrize("case", NAMED_CASES, ids=[c.id for c in NAMED_CASES])
def test_node_names_match_pytorch(case, real_torch):
    arrays, directions, _ = _inputs(case, seed=3)
    assert _node_names(et, case, arrays, directions) == _node_names(real_torch, case, arrays, directions)


@pytest.mark.parity
@by_case
def test_tangent_matches_pytorch(case, real_torch):
    arrays, directions, _ = _inputs(case, seed=2)
    ours = _forward_mode(et, case, arrays, directions)
    theirs = _forward_mode(real_torch, case, arrays, directions)
    assert len(ours) == len(theirs)
    for (p, t), (tp, tt) in zip(ours, theirs):
        np.testing.assert_allclose(p, tp, rtol=1e-10, atol=1e-12)
        assert (t is None) == (tt is None)
        if t is not None:
            np.testing.assert_allclose(t, tt, rtol=1e-9, atol=1e-12)


# -- the API: levels, make_dual, unpack_dual ------------------------------------------------
def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e), str(e)
    return None


def test_levels_open_and_close():
    assert fwAD.enter_dual_level() == 0
    with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"):
        fwAD.enter_dual_level()
    with pytest.raises(RuntimeError, match="was not the last one that was created"):
        fwAD.exit_dual_level(level=3)
    fwAD.exit_dual_level()
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()
    with fwAD.dual_level() as level:
        assert level == 0


def test_dual_level_as_decorator():
    @fwAD.dual_level()
    def tangent_of_double(x, t):
        return fwAD.unpack_dual(fwAD.make_dual(x, t) * 2).tangent

    assert tangent_of_double(et.ones(2), et.ones(2)).tolist() == [2.0, 2.0]
    assert fwAD._state.level is None


def test_exit_drops_every_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(et.ones(3), et.ones(3))
        y = d.exp()
    assert fwAD.unpack_dual(d).tangent is None and fwAD.unpack_dual(y).tangent is None
    assert "tangent" not in repr(y)


def test_unpack_dual_returns_the_namedtuple():
    x, t = et.randn(3), et.randn(3)
    outside = fwAD.unpack_dual(x)
    assert type(outside).__name__ == "UnpackedDualTensor" and outside.primal is x and outside.tangent is None
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        primal, tangent = fwAD.unpack_dual(d)
        assert tangent is t  # kept as given
        assert primal is not d and fwAD.unpack_dual(primal).tangent is None
        assert d._view_of is x and primal._view_of is x  # both views of x, as PyTorch's
        assert fwAD.unpack_dual(d, level=0).tangent is t


def test_tangent_that_requires_grad_is_kept():
    t = et.randn(3, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(et.randn(3), t)
        assert fwAD.unpack_dual(d).tangent is t and not d.requires_grad
        out = d * 3
        assert not out.requires_grad and fwAD.unpack_dual(out).tangent.requires_grad


def test_transposed_tangent_is_copied_to_the_primal_layout():
    t = et.randn(3, 2).t()
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(fwAD.make_dual(et.randn(2, 3), t)).tangent
    assert tangent is not t and tangent.is_contiguous() and np.array_equal(tangent.numpy(), t.numpy())


MAKE_DUAL_ERRORS = {
    "no_level": (False, lambda L, fw: fw.make_dual(L.ones(2), L.ones(2))),
    "int_primal": (True, lambda L, fw: fw.make_dual(L.arange(3), L.ones(3))),
    "int_tangent": (True, lambda L, fw: fw.make_dual(L.ones(3), L.ones(3).int())),
    "shape": (True, lambda L, fw: fw.make_dual(L.ones(3), L.ones(4))),
    "level": (True, lambda L, fw: fw.make_dual(L.ones(3), L.ones(3), level=5)),
    "twice": (True, lambda L, fw: fw.make_dual(fw.make_dual(L.ones(3), L.ones(3)), L.ones(3))),
    "unpack_level": (True, lambda L, fw: fw.unpack_dual(fw.make_dual(L.ones(3), L.ones(3)), level=2)),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MAKE_DUAL_ERRORS))
def test_make_dual_errors_match_pytorch(name, real_torch):
    inside, fn = MAKE_DUAL_ERRORS[name]

    def run(lib):
        fw = lib.autograd.forward_ad
        if not inside:
            return _error(lambda: fn(lib, fw))
        with fw.dual_level():
            return _error(lambda: fn(lib, fw))

    ours, theirs = run(et), run(real_torch)
    assert theirs is not None and ours == theirs


# -- views, in-place ops and the printed form, as PyTorch -----------------------------------
def _dual_story(lib):
    """A walk through views and in-place ops on dual tensors; every printed form along the way."""
    fw = lib.autograd.forward_ad
    x, t = lib.tensor([1.0, 2.0, 3.0]), lib.tensor([0.5, -1.0, 2.0])
    seen = []
    with fw.dual_level():
        d = fw.make_dual(x, t)
        seen += [repr(d), repr(d.sum()), repr(d.t())]
        y = d * 1
        y[1:].mul_(2)  # in place on a view: the base's tangent changes too
        seen.append(repr(y))
        z = x.clone()
        z[:2].mul_(fw.make_dual(lib.ones(2), lib.ones(2)))  # the base had no tangent: it gets one
        seen.append(repr(z))
        w = x.clone()
        w.add_(d)
        seen.append(repr(w))
        u = d.clone()
        u.unsqueeze_(0)
        seen.append(repr(u))
        m = lib.zeros(3)
        m.copy_(d)
        seen.append(repr(m))
        with lib.no_grad():
            seen.append(repr(d * 2))
        e = d.clone()
        e[0] = 5.0
        seen.append(repr(e))
        tangent = fw.unpack_dual(y).tangent
        fw.unpack_dual(y[1:]).tangent.mul_(10)  # the tangent of a view is a view of the tangent
        seen.append(repr(tangent))
        seen.append(repr(fw.unpack_dual(fw.make_dual(x.clone(), t)[1:]).tangent))
        seen.append(repr(fw.unpack_dual(d.detach()).tangent))
    return seen


@pytest.mark.parity
def test_views_and_inplace_ops_match_pytorch(real_torch):
    assert _dual_story(et) == _dual_story(real_torch)


def test_views_and_inplace_ops_without_torch():
    seen = _dual_story(et)
    assert seen[0] == "tensor([1., 2., 3.], tangent=tensor([ 0.5000, -1.0000,  2.0000]))"
    assert seen[3] == "tensor([1., 4., 6.], tangent=tensor([ 0.5000, -2.0000,  4.0000]))"
    assert seen[4] == "tensor([1., 2., 3.], tangent=tensor([1., 2., 0.]))"
    assert seen[-1] == "None"


# -- ops without a tangent formula, custom Functions ------------------------------------------
class NoTangent(et.autograd.Function):
    """A built-in-style op (named node) without a ``jvp``."""

    _backward_name = "CtcLossBackward0"
    _profiler_name = "aten::_ctc_loss"

    @staticmethod
    def forward(ctx, a):
        return a._data * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


@pytest.mark.parity
def test_an_op_without_tangent_formula_raises_pytorchs_error(real_torch):
    with fwAD.dual_level():
        ours = _error(lambda: NoTangent.apply(fwAD.make_dual(et.ones(2), et.ones(2))))
    fw = real_torch.autograd.forward_ad
    with fw.dual_level():
        z = fw.make_dual(real_torch.zeros(3, 1, 2), real_torch.ones(3, 1, 2)).log_softmax(2)
        theirs = _error(lambda: real_torch.nn.functional.ctc_loss(
            z, real_torch.tensor([[1]]), real_torch.tensor([3]), real_torch.tensor([1])))
    assert ours == theirs


def _weight_norm_forward_mode(lib):
    """A real op without a tangent formula in PyTorch either: weight_norm's fused kernel."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nn.utils.weight_norm is deprecated
        model = lib.nn.utils.weight_norm(lib.nn.Linear(4, 3).double())
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = lib.ones(2, 4, dtype=lib.float64)
    return _error(lambda: lib.func.jacfwd(lambda p: lib.func.functional_call(model, p, (x,)))(params))


@pytest.mark.parity
def test_weight_norm_refuses_forward_mode_as_pytorch(real_torch):
    ours = _weight_norm_forward_mode(et)
    assert ours[0] is NotImplementedError and "_weight_norm_interface" in ours[1]
    assert ours == _weight_norm_forward_mode(real_torch)


def _custom_functions(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, k, b):
            ctx.save_for_forward(a, b)
            ctx.k = k
            return a * k * b

        @staticmethod
        def jvp(ctx, da, dk, db):
            a, b = ctx.saved_tensors
            assert dk is None  # a number has no tangent; a tensor without one gets zeros
            return (da * b + a * db) * ctx.k

    return Double, Scale


def _custom_story(lib):
    fw = lib.autograd.forward_ad
    Double, Scale = _custom_functions(lib)
    a, b = lib.tensor([1.0, 2.0]), lib.tensor([3.0, -1.0])
    with fw.dual_level():
        refused = _error(lambda: Double.apply(fw.make_dual(a, lib.ones(2))))
        one = fw.unpack_dual(Scale.apply(fw.make_dual(a, lib.ones(2)), 2, b)).tangent.tolist()
        other = fw.unpack_dual(Scale.apply(a, 3, fw.make_dual(b, lib.ones(2)))).tangent.tolist()
    return refused, one, other


def test_custom_function_jvp():
    refused, one, other = _custom_story(et)
    assert refused[0] is NotImplementedError and "You must implement the jvp function" in refused[1]
    assert one == [6.0, -2.0] and other == [3.0, 6.0]


@pytest.mark.parity
def test_custom_function_jvp_matches_pytorch(real_torch):
    assert _custom_story(et) == _custom_story(real_torch)


# -- gradcheck(check_forward_ad=True), gradgradcheck(check_fwd_over_rev=True) --------------------
def _wrong_jvp(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_forward(a)
            ctx.save_for_backward(a)
            return a ** 3

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 3 * a * a * g

        @staticmethod
        def jvp(ctx, da):
            (a,) = ctx.saved_tensors
            return 2 * a * a * da  # wrong on purpose

    return Cube


def _gradcheck_story(lib):
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([[0.3, -0.2, 1.0]], dtype=lib.float64, requires_grad=True)
    ok = (lib.autograd.gradcheck(lambda a, b: (b @ a.sin()).tanh(), (x, w), check_forward_ad=True),
          lib.autograd.gradcheck(lambda a: a.exp().cumsum(0), (x,), check_forward_ad=True, check_backward_ad=False),
          lib.autograd.gradgradcheck(lambda a: (a * a.sigmoid()).sum(), (x,), check_fwd_over_rev=True))
    error = _error(lambda: lib.autograd.gradcheck(_wrong_jvp(lib).apply, (x,), check_forward_ad=True))
    return ok, (error[0].__name__, error[1].split("\n")[0])


def test_gradcheck_checks_forward_mode():
    ok, error = _gradcheck_story(et)
    assert ok == (True, True, True)
    assert error == ("GradcheckError",
                     "Jacobian computed with forward mode mismatch for output 0 with respect to input 0,")


@pytest.mark.parity
def test_gradcheck_forward_mode_matches_pytorch(real_torch):
    assert _gradcheck_story(et) == _gradcheck_story(real_torch)


def _custom_details(lib):
    """mark_dirty with a jvp that updates the tangent in place, the setup_context style, and PyTorch's
    errors for a wrong number or size of tangents and for torch.func.jvp inside an open level."""
    fw = lib.autograd.forward_ad

    class MulInplace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.mark_dirty(a)
            return a.mul_(2)  # forward sees no tangent: only jvp updates it

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, da):
            return da.mul_(2)

    class Scaled(lib.autograd.Function):
        @staticmethod
        def forward(a, k):
            return a * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

        @staticmethod
        def jvp(ctx, da, dk):
            return da * ctx.k

    class TwoOutputs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

        @staticmethod
        def jvp(ctx, da):
            return da * 2

    class WrongSize(TwoOutputs):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def jvp(ctx, da):
            return da.sum()

    x, t = lib.tensor([1.0, 2.0]), lib.tensor([1.0, -1.0])
    seen = []
    with fw.dual_level():
        d = fw.make_dual(x.clone(), t.clone())
        seen.append(repr(MulInplace.apply(d)))
        seen.append(repr(Scaled.apply(fw.make_dual(x, t), 3.0)))
        seen.append(_error(lambda: TwoOutputs.apply(fw.make_dual(x, t))))
        seen.append(_error(lambda: WrongSize.apply(fw.make_dual(x, t))))
        seen.append(_error(lambda: lib.func.jvp(lambda a: a * 2, (x,), (t,))))
    return seen


@pytest.mark.parity
def test_custom_function_details_match_pytorch(real_torch):
    assert _custom_details(et) == _custom_details(real_torch)
