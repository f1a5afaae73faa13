"""``gradcheck`` / ``gradgradcheck``: pass on right gradients, PyTorch's report on wrong ones."""
import warnings

import pytest

import edutorch as et
from edutorch.autograd import GradcheckError, gradcheck, gradgradcheck

REASON = "real PyTorch not installed: parity test skipped"


def x64(values, requires_grad=True):
    return et.tensor(values, dtype=et.float64, requires_grad=requires_grad)


def wrong_square(lib):
    """x² with a backward that forgets the factor 2."""

    class WrongSquare(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x

    return WrongSquare


@pytest.mark.parametrize("fn", [
    lambda x: x.tanh(),
    lambda x: (x * x).sum(),
    lambda x: x.sigmoid() * x.exp(),
    lambda x: (x @ x.t()).relu(),
    lambda x: (x - 0.3) / (x * x + 1),
])
def test_gradcheck_passes_on_correct_gradients(fn):
    x = x64([[0.3, -0.7, 1.1], [0.5, 0.2, -1.3]])
    assert gradcheck(fn, (x,))


def test_gradcheck_two_inputs_and_two_outputs():
    a, b = x64([0.3, -0.2]), x64([1.5, 0.5])
    assert gradcheck(lambda a, b: (a * b, (a + b).tanh().sum()), (a, b), check_batched_grad=True)


def test_gradcheck_reports_mismatch_like_pytorch():
    torch = pytest.importorskip("torch", reason=REASON)
    messages = []
    for lib in (et, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            lib.autograd.gradcheck(wrong_square(lib).apply, (x,))
        assert type(info.value).__name__ == "GradcheckError"
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")


def test_gradcheck_mismatch_without_torch():
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(wrong_square(et).apply, (x64([1.0, 2.0]),))
    assert gradcheck(wrong_square(et).apply, (x64([1.0, 2.0]),), raise_exception=False) is False
    assert issubclass(GradcheckError, RuntimeError)


def test_gradcheck_sees_input_index():
    def f(a, b):
        return a * b.detach()  # wrong: ignores b's gradient

    with pytest.raises(GradcheckError, match="for output 0 with respect to input 1"):
        gradcheck(f, (x64([1.0, 2.0]), x64([3.0, 4.0])))


def test_gradcheck_needs_an_input_that_requires_grad():
    torch = pytest.importorskip("torch", reason=REASON)
    errors = []
    for lib in (et, torch):
        with pytest.raises(ValueError) as info:
            lib.autograd.gradcheck(lambda t: t * 2, (lib.ones(2, dtype=lib.float64),))
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_gradcheck_warns_about_float32():
    x = et.tensor([0.5, 0.25], requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision"):
        gradcheck(lambda t: t * 2, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)


def test_gradcheck_leaves_input_values_unchanged():
    x = x64([0.1, 0.2, 0.3])
    before = x.tolist()
    gradcheck(lambda t: t.exp(), (x,))
    assert x.tolist() == before


def test_gradgradcheck_passes_and_fails():
    x = x64([0.4, -1.2, 0.9])
    assert gradgradcheck(lambda t: (t ** 3).tanh(), (x,))

    class BadDoubleBackward(et.autograd.Function):
        """x³ whose backward is right but built from a detached x: 2nd derivative is lost."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() ** 2

    assert gradcheck(BadDoubleBackward.apply, (x,))
    assert gradgradcheck(BadDoubleBackward.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_matches_torch_verdicts():
    torch = pytest.importorskip("torch", reason=REASON)
    for lib in (et, torch):
        x = lib.tensor([0.4, -1.2], dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradgradcheck(lambda t: t.sigmoid() * t, (x,))


def test_gradcheck_no_differentiable_output():
    x = x64([1.0, 2.0])
    assert gradcheck(lambda t: t.detach() * 0, (x,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
            gradcheck(lambda t: t.detach() * 2, (x,))



# -- check_batched_forward_grad: tangents pushed through vmap, as PyTorch checks them ------------

def _square_with_jvp(lib, jvp_guard):
    """x² with a right jvp that first asks ``jvp_guard(tangent)`` something (vmap may refuse it)."""

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            jvp_guard(t)
            return 2 * t * x

    return Square


GUARDS = {
    "nothing": lambda t: None,
    "control flow on the tangent": lambda t: bool(t.abs().sum() >= 0),
    "item of the tangent": lambda t: t.abs().sum().item(),
}


def _batched_forward_verdict(lib, guard):
    x = lib.tensor([0.3, -1.2, 0.7], dtype=lib.float64, requires_grad=True)
    try:
        return lib.autograd.gradcheck(_square_with_jvp(lib, GUARDS[guard]).apply, (x,), check_forward_ad=True,
                                      check_batched_forward_grad=True)
    except GradcheckError as error:
        return str(error)
    except Exception as error:  # torch's own GradcheckError
        if type(error).__name__ != "GradcheckError":
            raise
        return str(error)


@pytest.mark.parametrize("guard", list(GUARDS))
def test_batched_forward_grad_runs_the_tangents_through_vmap_without_torch(guard):
    """The unbatched checks pass for all three; only a batch of tangents (vmap) meets the refusals."""
    x = x64([0.3, -1.2, 0.7])
    square = _square_with_jvp(et, GUARDS[guard]).apply
    assert gradcheck(square, (x,), check_forward_ad=True)
    verdict = _batched_forward_verdict(et, guard)
    if guard == "nothing":
        assert verdict is True
    else:
        assert verdict.startswith("While computing batched gradients, got: vmap: ")
        assert "testing batched gradient computation with forward-mode AD" in verdict
        assert gradcheck(square, (x,), check_forward_ad=True, check_batched_forward_grad=True,
                         raise_exception=False) is False


@pytest.mark.parametrize("guard", list(GUARDS))
def test_batched_forward_grad_verdicts_match_torch(guard):
    torch = pytest.importorskip("torch", reason=REASON)
    ours, theirs = _batched_forward_verdict(et, guard), _batched_forward_verdict(torch, guard)
    if theirs is True:
        assert ours is True
    else:  # the same report around it; the inner line is vmap's own (PyTorch's legacy vmap words it otherwise)
        assert ours.split("\n", 1)[1] == theirs.split("\n", 1)[1]


def test_batched_forward_grad_of_several_inputs_and_outputs():
    a, b = x64([0.5, -0.2, 1.3]), x64([[1.0, 2.0], [0.1, -0.3], [0.7, 0.2]])
    assert gradcheck(lambda u, v: ((u.sin() @ v).exp(), u.sum(), None), (a, b), check_forward_ad=True,
                     check_batched_forward_grad=True)


def test_batched_checks_need_their_mode_as_torch():
    x = x64([0.3])
    with pytest.raises(AssertionError, match="^Setting check_batched_forward_grad=True requires check_forward_ad "
                                             "to be True$"):
        gradcheck(lambda t: t * 2, (x,), check_batched_forward_grad=True)
    with pytest.raises(AssertionError, match="^Setting check_batched_grad=True requires check_backward_ad to be True$"):
        gradcheck(lambda t: t * 2, (x,), check_batched_grad=True, check_backward_ad=False, check_forward_ad=True)


def test_the_batched_forward_report_is_torchs_text():
    pytest.importorskip("torch", reason=REASON)
    import importlib

    ours, theirs = (importlib.import_module(f"{lib}.autograd.gradcheck") for lib in ("edutorch", "torch"))
    assert ours.FAILED_BATCHED_GRAD_MSG_FWD_AD == theirs.FAILED_BATCHED_GRAD_MSG_FWD_AD
