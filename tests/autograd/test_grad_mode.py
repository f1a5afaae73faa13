"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode, as contexts and decorators."""
import pytest

import edutorch as et

REASON = "real PyTorch not installed: parity test skipped"


def records(lib):
    x = lib.ones(1, requires_grad=True)
    return (x * 2).requires_grad


def modes(lib):
    """Whether an op records, in every form of the grad-mode API."""
    out = []
    with lib.no_grad():
        out.append(("no_grad", records(lib), lib.is_grad_enabled()))
        with lib.enable_grad():
            out.append(("enable_grad inside", records(lib)))
    out.append(("after", records(lib)))

    @lib.no_grad()
    def decorated():
        return records(lib)

    @lib.no_grad
    def bare():
        return records(lib)

    out += [("decorated", decorated()), ("bare", bare()), ("after decorators", records(lib))]
    lib.set_grad_enabled(False)
    out.append(("set_grad_enabled(False) call", records(lib)))
    lib.set_grad_enabled(True)
    with lib.set_grad_enabled(False):
        out.append(("set_grad_enabled ctx", records(lib)))
    out.append(("restored", records(lib)))

    @lib.set_grad_enabled(False)
    def sge():
        return records(lib)

    out += [("set_grad_enabled decorator", sge()), ("after sge", lib.is_grad_enabled())]
    with lib.inference_mode():
        out.append(("inference_mode", records(lib), lib.is_inference_mode_enabled()))
    with lib.inference_mode(False):
        out.append(("inference_mode(False)", records(lib)))

    @lib.inference_mode()
    def inf():
        return records(lib)

    out += [("inference decorator", inf()), ("end", lib.is_grad_enabled(), lib.is_inference_mode_enabled())]
    return out


def test_modes_match_pytorch():
    torch = pytest.importorskip("torch", reason=REASON)
    assert modes(et) == modes(torch)


def test_modes_without_torch():
    got = dict((row[0], row[1:]) for row in modes(et))
    assert got["no_grad"] == (False, False)
    assert got["enable_grad inside"] == (True,)
    assert got["decorated"] == (False,) and got["bare"] == (False,)
    assert got["set_grad_enabled decorator"] == (False,) and got["after sge"] == (True,)
    assert got["inference_mode"] == (False, True)
    assert got["end"] == (True, False)


def test_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with et.no_grad():
            raise ValueError
    assert et.is_grad_enabled()


def test_decorator_keeps_function_metadata():
    @et.no_grad()
    def documented(a):
        """Docs."""
        return a

    assert documented.__name__ == "documented" and documented.__doc__ == "Docs."
    assert documented(3) == 3


def test_backward_inside_no_grad_still_works():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    with et.no_grad():
        y.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_in_place_update_under_no_grad_is_allowed_on_leaf():
    w = et.tensor([1.0, 2.0], requires_grad=True)
    (w * 3).sum().backward()
    with et.no_grad():
        w.sub_(w.grad * 0.5)
    assert w.tolist() == [-0.5, 0.5] and w.is_leaf and w.requires_grad
