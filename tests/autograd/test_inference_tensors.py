"""Inference tensors: made inside ``inference_mode``, they never enter autograd (PyTorch's rules).

``is_inference()`` is true for them and their views; saving one for backward,
changing one in place outside inference mode, asking its version or making it
require grad raise PyTorch's errors.  Using one where nothing is saved (``w + x``)
is allowed, and ``clone()`` outside inference mode gives a normal tensor.
"""
import pytest

import edutorch

CASES = [
    ("saved for backward", lambda L, w, x: (w * x).sum().backward()),
    ("in place outside", lambda L, w, x: x.add_(1)),
    ("copy into it", lambda L, w, x: x.copy_(L.zeros(3))),
    ("fill outside", lambda L, w, x: x.fill_(2.0)),
    ("in place under no_grad", lambda L, w, x: _under(L.no_grad(), lambda: x.mul_(2))),
    ("requires_grad_", lambda L, w, x: x.requires_grad_()),
    ("version", lambda L, w, x: x._version),
    ("view in place", lambda L, w, x: x.view(3).zero_()),
]


def _under(context, fn):
    with context:
        return fn()


def _made_inside(lib):
    with lib.inference_mode():
        return lib.ones(3)


@pytest.mark.parametrize("name,use", CASES, ids=[c[0] for c in CASES])
def test_errors_match_torch(real_torch, name, use):
    messages = []
    for lib in (real_torch, edutorch):
        w, x = lib.ones(3, requires_grad=True), _made_inside(lib)
        with pytest.raises(RuntimeError) as info:
            use(lib, w, x)
        messages.append(str(info.value).splitlines()[0].split(" (Triggered")[0])
    assert messages[1] == messages[0]


def test_which_tensors_are_inference_tensors():
    w = edutorch.ones(3, requires_grad=True)
    normal = edutorch.ones(3)
    with edutorch.inference_mode():
        x = edutorch.ones(3)
        y = x * 2
        view_of_normal = normal.view(3)
        assert edutorch.is_inference_mode_enabled()
        x.add_(1)  # in place inside inference mode: allowed
    assert x.is_inference() and y.is_inference() and x.view(3).is_inference()
    assert not normal.is_inference() and not view_of_normal.is_inference()
    assert not (x * 2).is_inference() and not x.clone().is_inference() and not edutorch.ones(1).is_inference()
    assert edutorch.is_inference(x) and not x.requires_grad
    out = w + x  # nothing saved: allowed, and a normal tensor with a graph
    assert out.grad_fn is not None and not out.is_inference()
    out.sum().backward()
    assert w.grad.tolist() == [1.0, 1.0, 1.0] and x.tolist() == [2.0, 2.0, 2.0]
    with edutorch.inference_mode(False):
        assert not edutorch.ones(1).is_inference()
    (w * x.clone()).sum().backward()  # the work-around PyTorch's message gives


def test_inference_mode_as_decorator_makes_inference_tensors(real_torch):
    for lib in (edutorch, real_torch):
        @lib.inference_mode()
        def predict(t):
            return t * 2

        assert predict(lib.ones(2)).is_inference()
