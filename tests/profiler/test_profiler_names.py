"""Profiler events named and nested as PyTorch 2.13's CPU build records them.

``aten::linear`` holds ``aten::t`` (-> ``aten::transpose`` -> ``aten::as_strided``)
and ``aten::addmm``; ``aten::conv2d`` holds ``aten::convolution`` ->
``aten::_convolution`` -> ``aten::mkldnn_convolution``; an optimizer's step and
zero_grad are ``Optimizer.step#SGD.step`` and ``Optimizer.zero_grad#SGD.zero_grad``.
PyTorch's allocation and conjugation helpers (``aten::empty``, ``aten::resolve_conj``,
``aten::expand``, ...) are left out of the comparison: they are how its kernels
manage memory, which NumPy does for edutorch.
"""
import pytest

import edutorch
from edutorch.profiler import _names

# PyTorch's memory and dispatch helpers inside kernels, which edutorch has no counterpart of
KERNEL_HELPERS = {"aten::empty", "aten::empty_like", "aten::empty_strided", "aten::as_strided_", "aten::resize_",
                  "aten::resolve_conj", "aten::expand", "aten::copy_", "aten::to", "aten::zero_", "aten::fill_"}


def _tree(events, keep):
    """The forest of recorded events as nested (name, children) tuples, only names ``keep`` accepts."""
    def node(e):
        kids = [node(c) for c in e.cpu_children if keep(c.name)]
        return (e.name, tuple(kids))
    return [node(e) for e in events if e.cpu_parent is None and keep(e.name)]


def _forward_tree(lib, model, x):
    with lib.profiler.profile() as prof:
        model(x)
    return _tree(prof.events(), lambda name: name not in KERNEL_HELPERS)


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Linear(16, 4)), lib.randn(5, 8)


def _cnn(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2)), lib.randn(2, 1, 8, 8)


@pytest.mark.parametrize("make", [_mlp, _cnn], ids=["mlp", "cnn"])
def test_forward_events_nest_as_torch(real_torch, make):
    got = _forward_tree(edutorch, *make(edutorch))
    expected = _forward_tree(real_torch, *make(real_torch))
    assert got == expected


def test_linear_and_conv_nesting_without_torch():
    linear = edutorch.nn.Linear(3, 2)
    conv = edutorch.nn.Conv1d(2, 3, 2)
    with edutorch.profiler.profile() as prof:
        linear(edutorch.randn(4, 3))
        conv(edutorch.randn(1, 2, 5))
    tree = _tree(prof.events(), lambda name: True)
    t = ("aten::t", (("aten::transpose", (("aten::as_strided", ()),)),))
    assert tree[0] == ("aten::linear", (t, ("aten::addmm", ())))
    # conv1d's implementation (unsqueeze, view, permute of the weights) is inside its kernel: not recorded
    assert tree[1] == ("aten::conv1d", (("aten::convolution", (("aten::_convolution", (
        ("aten::mkldnn_convolution", ()),)),)),))


def test_a_custom_functions_inner_ops_are_recorded():
    """Only a built-in op's kernel hides what it does: a custom Function's forward calls ATen ops."""

    class Double(edutorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.mul(2).relu()

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with edutorch.profiler.profile() as prof:
        Double.apply(edutorch.randn(3))
    assert _tree(prof.events(), lambda name: True) == [
        ("Double", (("aten::mul", ()), ("aten::relu", (("aten::clamp_min", ()),))))]


def test_every_call_chain_ends_in_aten_ops():
    for name, calls in _names.CALLS.items():
        assert _names.is_aten(name) and calls and all(_names.is_aten(c) for c in calls), name


def _training_step(lib, make):
    model, x = make(lib)
    target = lib.tensor([0, 1, 0, 1, 0][: x.shape[0]])
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    with lib.profiler.profile() as prof:
        opt.zero_grad()
        out = model(x)
        scores = out if out.ndim == 2 else out.amax((2, 3))  # the CNN's two channels as two classes
        loss = lib.nn.functional.cross_entropy(scores, target)
        loss.backward()
        opt.step()
    return prof


MAIN_OPS = ("Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad", "aten::linear", "aten::addmm",
            "aten::conv2d", "aten::convolution", "aten::_convolution", "aten::mkldnn_convolution",
            "aten::relu", "aten::clamp_min", "aten::max_pool2d", "aten::max_pool2d_with_indices",
            "aten::_log_softmax", "aten::nll_loss_forward", "aten::mm", "aten::threshold_backward")


@pytest.mark.parametrize("make", [_mlp, _cnn], ids=["mlp", "cnn"])
def test_key_averages_count_the_main_ops_as_torch(real_torch, make):
    """``key_averages()`` (the rows of the self-CPU table): the same counts for the ops that do the work."""
    def counts(lib):
        rows = {e.key: e.count for e in _training_step(lib, make).key_averages()}
        return {name: rows.get(name) for name in MAIN_OPS}

    assert counts(edutorch) == counts(real_torch)


def test_optimizer_events_are_user_annotations(real_torch):
    for lib in (edutorch, real_torch):
        model, _ = _mlp(lib)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        for p in model.parameters():
            p.grad = lib.ones_like(p)
        with lib.profiler.profile() as prof:
            opt.zero_grad(set_to_none=False)
            opt.step()
        names = [e.name for e in prof.events() if e.cpu_parent is None]
        assert names == ["Optimizer.zero_grad#SGD.zero_grad", "Optimizer.step#SGD.step"]
        table = prof.key_averages().table(sort_by="self_cpu_time_total")
        assert "Optimizer.step#SGD.step" in table
