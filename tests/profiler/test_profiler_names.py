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


# -- a whole training step: in-place ops, the optimizers' updates, composite ops, kernels of nodes ----

EVALUATE = "autograd::engine::evaluate_function: "
# What PyTorch records that edutorch has no counterpart of, with the reason:
NOT_MODELLED = KERNEL_HELPERS | {
    "aten::_to_copy", "aten::as_strided_", "aten::empty_strided", "aten::empty", "aten::zeros_like",
    "aten::lift_fresh", "aten::ones_like",  # allocation: NumPy's work here (torch.tensor, the backward seed)
    "aten::detach", "detach", "aten::detach_", "detach_",  # AccumulateGrad's and torch.tensor's detach
    "aten::item", "aten::_local_scalar_dense",  # Tensor.item() is not an op here
    "aten::nll_loss_nd",  # F.nll_loss's dispatch to the n-d loss: one op here
    "aten::reshape", "aten::view", "aten::eq",  # the ops inside AmaxBackward0's and AddmmBackward0's formulas
    # edutorch's Linear takes the weight itself: no t() node (README, known differences), and
    # AddmmBackward0's formula transposes once where PyTorch's does three times
    "aten::t", "aten::transpose", "aten::as_strided", "TBackward0", EVALUATE + "TBackward0",
}


def _training_steps(lib, make, optimizer, steps, **options):
    """``steps`` training steps of ``make``'s model; the profile of the last one."""
    model, x = make(lib)
    target = lib.tensor([0, 1, 0, 1, 0][: x.shape[0]])
    opt = getattr(lib.optim, optimizer)(model.parameters(), lr=0.1, **options)
    for _ in range(steps):
        with lib.profiler.profile() as prof:
            opt.zero_grad()
            out = model(x)
            scores = out if out.ndim == 2 else out.amax((2, 3))
            lib.nn.functional.cross_entropy(scores, target).backward()
            opt.step()
    return prof


STEPS = [(_mlp, "SGD", 1, {}), (_mlp, "SGD", 2, {"momentum": 0.9}), (_mlp, "Adam", 2, {}),
         (_mlp, "AdamW", 1, {}), (_cnn, "SGD", 2, {"momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
         (_cnn, "Adam", 1, {})]
STEP_IDS = ["mlp-sgd", "mlp-momentum-2nd-step", "mlp-adam-2nd-step", "mlp-adamw", "cnn-nesterov-2nd-step",
            "cnn-adam"]


@pytest.mark.parametrize("make, optimizer, steps, options", STEPS, ids=STEP_IDS)
def test_a_training_steps_counts_by_name_match_torch(real_torch, make, optimizer, steps, options):
    """Every row of ``key_averages()`` (the self-CPU table's names) with PyTorch's call count,
    but the rows of :data:`NOT_MODELLED`."""
    def counts(lib):
        averages = _training_steps(lib, make, optimizer, steps, **options).key_averages()
        return {e.key: e.count for e in averages if e.key not in NOT_MODELLED}

    assert counts(edutorch) == counts(real_torch)


@pytest.mark.parametrize("make, optimizer, steps, options", STEPS, ids=STEP_IDS)
def test_the_optimizers_updates_are_recorded_as_torch(real_torch, make, optimizer, steps, options):
    """Inside ``Optimizer.step#SGD.step``: PyTorch's in-place updates, in order (``aten::add_``...)."""
    def updates(lib):
        prof = _training_steps(lib, make, optimizer, steps, **options)
        step = next(e for e in prof.events() if e.name.startswith("Optimizer.step#"))
        return [c.name for c in step.cpu_children if c.name not in NOT_MODELLED]

    assert updates(edutorch) == updates(real_torch)


def test_inplace_ops_are_recorded_with_their_own_names():
    x = edutorch.zeros(3)
    y = edutorch.ones(3, requires_grad=True) * 1
    with edutorch.profiler.profile() as prof:
        x.add_(1)
        x *= 2
        x.zero_()
        x.addcmul_(x, x, value=2)
        x.relu_()
        y[0].mul_(2)  # on a view: one op (its base's rewrite is how edutorch records it)
    top = [(e.name, [c.name for c in e.cpu_children]) for e in prof.events() if e.cpu_parent is None]
    assert top == [("aten::add_", []), ("aten::mul_", []), ("aten::zero_", []), ("aten::addcmul_", []),
                   ("aten::relu_", ["aten::clamp_min_"]), ("aten::select", []), ("aten::mul_", [])]
    assert x.tolist() == [0.0, 0.0, 0.0] and y.tolist() == [2.0, 1.0, 1.0]


def test_an_optimizer_step_records_its_updates_and_computes_the_same():
    """While recording, ``p.add_`` takes the general path (the fast one records nothing): same values."""
    def trained(profiled):
        edutorch.manual_seed(0)
        p = edutorch.nn.Parameter(edutorch.randn(4))
        opt = edutorch.optim.SGD([p], lr=0.1, momentum=0.9)
        names = []
        for _ in range(2):
            p.grad = p.detach() * 3
            if profiled:
                with edutorch.profiler.profile() as prof:
                    opt.step()
                names.append([c.name for c in prof.events()[0].cpu_children])
            else:
                opt.step()
        return p.tolist(), names

    values, names = trained(True)
    assert names == [["aten::clone", "aten::add_"], ["aten::mul_", "aten::add_", "aten::add_"]]
    assert values == trained(False)[0]


def test_a_composite_op_holds_the_ops_it_is_written_as():
    with edutorch.profiler.profile() as prof:
        edutorch.nn.functional.cross_entropy(edutorch.randn(3, 4), edutorch.tensor([0, 1, 2]))
    assert _tree(prof.events(), lambda name: True) == [("aten::cross_entropy_loss", (
        ("aten::log_softmax", (("aten::_log_softmax", ()),)), ("aten::nll_loss", (("aten::nll_loss_forward", ()),))))]


def test_a_nodes_one_kernel_holds_its_formula():
    """ConvolutionBackward0 runs ``aten::convolution_backward``; the Tensor ops of edutorch's formula
    are that kernel's implementation, not recorded (and still differentiable: create_graph)."""
    conv = edutorch.nn.Conv2d(1, 2, 3)
    x = edutorch.randn(1, 1, 5, 5, requires_grad=True)
    with edutorch.profiler.profile() as prof:
        (gx,) = edutorch.autograd.grad(conv(x).sum(), x, create_graph=True)
    node = next(e for e in prof.events() if e.name == "ConvolutionBackward0")
    assert [(c.name, c.cpu_children) for c in node.cpu_children] == [("aten::convolution_backward", [])]
    assert gx.requires_grad


OPTIMIZERS = [("Adagrad", {}), ("RMSprop", {"momentum": 0.9, "centered": True}), ("Adamax", {}), ("NAdam", {}),
              ("RAdam", {}), ("Adadelta", {}), ("Adam", {"amsgrad": True}), ("AdamW", {"weight_decay": 0.1}),
              ("SGD", {"maximize": True, "weight_decay": 0.1})]


@pytest.mark.parametrize("optimizer, options", OPTIMIZERS, ids=[name for name, _ in OPTIMIZERS])
def test_every_optimizers_second_step_records_torchs_ops(real_torch, optimizer, options):
    def updates(lib):
        p = lib.nn.Parameter(lib.ones(3))
        opt = getattr(lib.optim, optimizer)([p], lr=0.1, **options)
        for _ in range(2):
            p.grad = lib.ones(3) * 0.5
            with lib.profiler.profile() as prof:
                opt.step()
        return [c.name for c in prof.events()[0].cpu_children if c.name not in NOT_MODELLED]

    assert updates(edutorch) == updates(real_torch)


def test_inplace_ops_and_inplace_views_nest_as_torch(real_torch):
    def tree(lib):
        x, y = lib.zeros(3, 1, 4), lib.ones(2, 3, requires_grad=True) * 1
        with lib.profiler.profile() as prof:
            x.add_(1).mul_(2).clamp_(0, 1).relu_()
            x.transpose_(0, 2).squeeze_(1).unsqueeze_(0)
            y.t_().sub_(y.detach(), alpha=2).zero_()
        return _tree(prof.events(), lambda name: name not in NOT_MODELLED)

    assert tree(edutorch) == tree(real_torch)
