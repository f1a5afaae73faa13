"""Trust, round two (issue 23): layers and activations against PyTorch 2.13.

* Every in-place activation trains as PyTorch's does, alone and after another
  in-place activation: each node keeps what PyTorch's keeps (the result, or a
  copy of the input), so only the pairs PyTorch refuses are refused.
* BatchNorm and GroupNorm on an empty batch; checkpoint under autocast;
  argument checks of layers (PyTorch's error types).
"""
import warnings

import numpy as np
import pytest

import edutorch as et

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def _torch():
    return pytest.importorskip("torch", reason=TORCH_REASON)


def _outcome(fn):
    """``("ok", value)`` or ``("raised", exception type name)``."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return "raised", type(e).__name__


# ------------------------------------------------------------ in-place activations ----
# each builds the in-place module with ``lib`` (edutorch or torch), as a user writes it
INPLACE_ACTIVATIONS = {
    "ReLU": lambda nn: nn.ReLU(inplace=True),
    "ReLU6": lambda nn: nn.ReLU6(inplace=True),
    "LeakyReLU": lambda nn: nn.LeakyReLU(0.2, inplace=True),
    "ELU": lambda nn: nn.ELU(0.7, inplace=True),
    "CELU": lambda nn: nn.CELU(1.3, inplace=True),
    "SELU": lambda nn: nn.SELU(inplace=True),
    "Hardtanh": lambda nn: nn.Hardtanh(-2.0, 2.5, inplace=True),
    "Hardsigmoid": lambda nn: nn.Hardsigmoid(inplace=True),
    "Hardswish": lambda nn: nn.Hardswish(inplace=True),
    "SiLU": lambda nn: nn.SiLU(inplace=True),
    "Mish": lambda nn: nn.Mish(inplace=True),
    "Threshold": lambda nn: nn.Threshold(0.1, -0.5, inplace=True),
    "RReLU(eval)": lambda nn: nn.RReLU(0.1, 0.3, inplace=True).eval(),  # eval: no random slopes
    "Dropout(p=1)": lambda nn: nn.Dropout(1.0, inplace=True),  # p=1: a mask both libraries agree on
    "Dropout2d(p=1)": lambda nn: nn.Dropout2d(1.0, inplace=True),
}
# values in every region of every activation (Hardswish's -3 and 3, Threshold's 0.1...), away from kinks
_X = np.linspace(-2.3, 2.1, 12).reshape(3, 4)
_W = np.linspace(-1.9, 2.2, 20).reshape(5, 4)
_B = np.linspace(-0.7, 0.9, 5)
_C = np.linspace(0.5, -1.5, 15).reshape(3, 5)


def _linear_then(lib, *activations):
    """``Linear`` (float64, fixed weights), the activations in place one after the other,
    ``(out * C).sum().backward()``: the output and the gradients of x, W and b, or the error."""
    x = lib.tensor(_X, requires_grad=True)
    lin = lib.nn.Linear(4, 5).double()
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(_W))
        lin.bias.copy_(lib.tensor(_B))
    lin.train()

    def run():
        y = lin(x)
        for make in activations:
            out = make(lib.nn)(y)
            assert out is y  # written into y
        (y * lib.tensor(_C)).sum().backward()
        return [t.detach().numpy().copy() for t in (y, x.grad, lin.weight.grad, lin.bias.grad)]

    return _outcome(run)


def _assert_same(ours, theirs):
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "raised":
        assert ours[1] == theirs[1]
        return
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore:dropout2d")
@pytest.mark.parametrize("name", list(INPLACE_ACTIVATIONS))
def test_inplace_activation_trains_as_torch(name):
    torch = _torch()
    act = INPLACE_ACTIVATIONS[name]
    ours = _linear_then(et, act)
    assert ours[0] == "ok", ours
    _assert_same(ours, _linear_then(torch, act))


@pytest.mark.filterwarnings("ignore:dropout2d")
@pytest.mark.parametrize("second", list(INPLACE_ACTIVATIONS))
@pytest.mark.parametrize("first", list(INPLACE_ACTIVATIONS))
def test_two_inplace_activations_agree_with_torch(first, second):
    """All ordered pairs: where PyTorch trains, the values and gradients agree; where it
    refuses (the first saved its result, which the second overwrites), we refuse too."""
    torch = _torch()
    acts = INPLACE_ACTIVATIONS[first], INPLACE_ACTIVATIONS[second]
    _assert_same(_linear_then(et, *acts), _linear_then(torch, *acts))


def _what_the_node_saved(lib, make):
    """The in-place activation's node: its name, and for each saved tensor whether it holds
    the input's old values or the result (PyTorch clones an input it needs, or saves the result)."""
    x = lib.tensor(_X, requires_grad=True)
    y = x * 1
    old = y.detach().clone()
    make(lib.nn)(y)
    node, seen = y.grad_fn, {}
    for name in ("_saved_self", "_saved_result", "_saved_other"):
        saved = getattr(node, name, None)
        if isinstance(saved, lib.Tensor):
            seen[name] = "old input" if lib.equal(saved, old) else "result" if lib.equal(saved, y) else "other"
    return node.name(), seen


@pytest.mark.filterwarnings("ignore:dropout2d")
@pytest.mark.parametrize("name", list(INPLACE_ACTIVATIONS))
def test_inplace_activation_saves_what_torch_saves(name):
    torch = _torch()
    make = INPLACE_ACTIVATIONS[name]
    assert _what_the_node_saved(et, make) == _what_the_node_saved(torch, make)


FUNCTIONAL_INPLACE = {
    "relu_": lambda F, t: F.relu_(t),
    "leaky_relu_": lambda F, t: F.leaky_relu_(t, 0.3),
    "elu_": lambda F, t: F.elu_(t, 0.5),
    "celu_": lambda F, t: F.celu_(t, 0.8),
    "selu_": lambda F, t: F.selu_(t),
    "hardtanh_": lambda F, t: F.hardtanh_(t, -0.5, 1.5),
    "threshold_": lambda F, t: F.threshold_(t, 0.2, 3.0),
}


@pytest.mark.parametrize("name", list(FUNCTIONAL_INPLACE))
def test_functional_inplace_variants_agree_with_torch(name):
    torch = _torch()

    def run(lib):
        x = lib.tensor(_X, requires_grad=True)
        y = x * 2
        out = FUNCTIONAL_INPLACE[name](lib.nn.functional, y)
        (out * lib.tensor(_X[::-1].copy())).sum().backward()
        return out is y, out.grad_fn.name(), out.detach().numpy().copy(), x.grad.numpy().copy()

    ours, theirs = run(et), run(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12)


GRADCHECK_ACTIVATIONS = {
    "hardtanh": lambda F, t, inplace: F.hardtanh(t, -1.1, 0.9, inplace=inplace),
    "relu6": lambda F, t, inplace: F.relu6(t * 4, inplace=inplace),
    "hardsigmoid": lambda F, t, inplace: F.hardsigmoid(t * 4, inplace=inplace),
    "hardswish": lambda F, t, inplace: F.hardswish(t * 4, inplace=inplace),
    "mish": lambda F, t, inplace: F.mish(t, inplace=inplace),
    "threshold": lambda F, t, inplace: F.threshold(t, 0.1, 2.0, inplace=inplace),
    "celu": lambda F, t, inplace: F.celu(t, 0.7, inplace=inplace),
    "selu": lambda F, t, inplace: F.selu(t, inplace=inplace),
    "elu": lambda F, t, inplace: F.elu(t, 1.4, inplace=inplace),
    "rrelu (eval)": lambda F, t, inplace: F.rrelu(t, 0.1, 0.3, False, inplace=inplace),
}


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("name", list(GRADCHECK_ACTIVATIONS))
def test_activation_gradient_is_the_numerical_one(name, inplace):
    """float64 central differences (no torch needed), first and second derivatives."""
    rng = np.random.default_rng(1)
    values = rng.choice([-1.0, 1.0], (3, 4)) * rng.uniform(0.15, 1.4, (3, 4))  # away from the kinks
    x = et.tensor(values, requires_grad=True)
    fn = GRADCHECK_ACTIVATIONS[name]
    assert et.autograd.gradcheck(lambda t: fn(et.nn.functional, t * 1, inplace), (x,))
    if name not in ("hardtanh", "relu6", "hardsigmoid", "threshold", "rrelu (eval)"):  # piecewise linear: no second derivative
        assert et.autograd.gradgradcheck(lambda t: fn(et.nn.functional, t * 1, inplace), (x,))


# -------------------------------------------------------------- empty batches ----
def _norm_on_empty(lib, make, shape):
    """A normalization layer in training on an input with no element: output, grad_fn, the
    running statistics afterwards, the gradients; or the error."""
    def run():
        lib.manual_seed(0)
        layer = make(lib.nn)
        x = lib.ones(shape, dtype=lib.float64, requires_grad=True)
        layer.double().train()
        y = layer(x)
        y.sum().backward()
        stats = [None if t is None else t.tolist() for t in (getattr(layer, "running_mean", None),
                                                             getattr(layer, "running_var", None))]
        tracked = getattr(layer, "num_batches_tracked", None)
        return (tuple(y.shape), y.grad_fn.name(), stats, None if tracked is None else tracked.item(),
                tuple(x.grad.shape), layer.weight.grad.tolist(), layer.bias.grad.tolist())

    return _outcome(run)


EMPTY_BATCH_LAYERS = {
    "BatchNorm1d (0, 3)": (lambda nn: nn.BatchNorm1d(3), (0, 3)),
    "BatchNorm1d (0, 3, 5)": (lambda nn: nn.BatchNorm1d(3), (0, 3, 5)),
    "BatchNorm2d (0, 3, 4, 4)": (lambda nn: nn.BatchNorm2d(3), (0, 3, 4, 4)),
    "BatchNorm2d (2, 3, 0, 4)": (lambda nn: nn.BatchNorm2d(3), (2, 3, 0, 4)),
    "BatchNorm1d momentum=None": (lambda nn: nn.BatchNorm1d(3, momentum=None), (0, 3)),
    "BatchNorm1d untracked": (lambda nn: nn.BatchNorm1d(3, track_running_stats=False), (0, 3)),
    "GroupNorm (0, 3)": (lambda nn: nn.GroupNorm(1, 3), (0, 3)),
    "GroupNorm (0, 6, 4)": (lambda nn: nn.GroupNorm(3, 6), (0, 6, 4)),
    "GroupNorm (0, 4, 2, 2)": (lambda nn: nn.GroupNorm(2, 4), (0, 4, 2, 2)),
    "LayerNorm (0, 3)": (lambda nn: nn.LayerNorm(3), (0, 3)),
}


@pytest.mark.parametrize("name", list(EMPTY_BATCH_LAYERS))
def test_normalization_on_an_empty_batch_runs_as_torch(name):
    """BatchNorm leaves its running statistics as they are (they used to become NaN) and
    returns ``input.clone() * weight[0] + bias[0]``, as PyTorch; GroupNorm runs."""
    torch = _torch()
    make, shape = EMPTY_BATCH_LAYERS[name]
    ours = _norm_on_empty(et, make, shape)
    assert ours[0] == "ok", ours
    assert ours == _norm_on_empty(torch, make, shape)


def test_batch_norm_on_an_empty_batch_keeps_running_stats_and_trains_on():
    bn = et.nn.BatchNorm1d(2)
    bn(et.tensor([[1.0, 2.0], [3.0, 6.0]]))
    before = bn.running_mean.tolist(), bn.running_var.tolist()
    out = bn(et.ones(0, 2))
    assert (bn.running_mean.tolist(), bn.running_var.tolist()) == before
    assert out.shape == (0, 2) and bn.num_batches_tracked.item() == 2
    bn(et.tensor([[1.0, 2.0], [3.0, 6.0]]))
    assert not any(np.isnan(v) for v in bn.running_mean.tolist() + bn.running_var.tolist())


# ------------------------------------------------------- checkpoint under autocast ----
def _checkpointed_under_autocast(lib, use_reentrant, sequential):
    """A two-layer model run through ``checkpoint`` (or ``checkpoint_sequential``, or neither:
    ``use_reentrant=None``) inside ``autocast("cpu", bfloat16)``, then backward outside it."""
    from importlib import import_module

    checkpoint = import_module(lib.__name__ + ".utils.checkpoint")
    model = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.ReLU(), lib.nn.Linear(4, 3))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(p.shape).astype(np.float32)))
    x = lib.tensor(np.linspace(-2, 2, 8).reshape(2, 4).astype(np.float32), requires_grad=True)
    with lib.autocast("cpu", dtype=lib.bfloat16):
        if use_reentrant is None:
            y = model(x)
        elif sequential:
            y = checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=use_reentrant)
        else:
            y = checkpoint.checkpoint(model, x, use_reentrant=use_reentrant)
    y.float().sum().backward()
    assert not lib.is_autocast_enabled("cpu")  # the recomputation's autocast region is closed again
    return str(y.dtype), y.float().tolist(), x.grad.tolist(), [p.grad.tolist() for p in model.parameters()]


@pytest.mark.parametrize("sequential", [False, True], ids=["checkpoint", "checkpoint_sequential"])
@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_recomputes_under_the_forward_autocast_state(use_reentrant, sequential):
    """The recomputation runs in bfloat16 as the forward did (it used to run in float32 and fail
    with "Recomputed values ... have different metadata"): the same result as no checkpoint."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # use_reentrant=True warns that it is not recommended
        ours = _checkpointed_under_autocast(et, use_reentrant, sequential)
    assert ours == _checkpointed_under_autocast(et, None, False)
    assert ours[0] == "torch.bfloat16"


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_under_autocast_agrees_with_torch(use_reentrant):
    torch = _torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _checkpointed_under_autocast(et, use_reentrant, False)
        theirs = _checkpointed_under_autocast(torch, use_reentrant, False)
    assert ours == theirs


def test_bfloat16_and_float16_linear_round_once_as_torch():
    """PyTorch's CPU addmm adds the bias to the float32 product and rounds once."""
    torch = _torch()
    rng = np.random.default_rng(0)
    for dtype in ("bfloat16", "float16"):
        for _ in range(10):
            n, i, o = rng.integers(1, 9, 3)
            x, w, b = rng.normal(size=(n, i)), rng.normal(size=(o, i)), rng.normal(size=o)
            ours, theirs = (lib.nn.functional.linear(*(lib.tensor(a).to(getattr(lib, dtype)) for a in (x, w, b)))
                            for lib in (et, torch))
            np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


# -------------------------------------------------- arguments PyTorch refuses ----
def _x4(lib):
    return lib.ones(1, 2, 5, 5)


REFUSED = {  # each is refused by PyTorch 2.13; we must raise the same type with the same message
    "cross_entropy weight too short": lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(4, 3), lib.tensor([0, 1, 2, 1]), weight=lib.ones(2)),
    "cross_entropy weight too long": lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(4, 3), lib.tensor([0, 1, 2, 1]), weight=lib.ones(4)),
    "cross_entropy weight 2-D": lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(4, 3), lib.tensor([0, 1, 2, 1]), weight=lib.ones(3, 1)),
    "cross_entropy probabilities, weight too short": lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(4, 3), lib.ones(4, 3) / 3, weight=lib.ones(2)),
    "cross_entropy label smoothing, weight too short": lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(4, 3), lib.tensor([0, 1, 2, 1]), weight=lib.ones(2), label_smoothing=0.1),
    "cross_entropy (N, C, H, W), weight too short": lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(2, 3, 2, 2), lib.zeros(2, 2, 2, dtype=lib.long), weight=lib.ones(2)),
    "nll_loss weight too long": lambda lib: lib.nn.functional.nll_loss(
        lib.ones(4, 3), lib.tensor([0, 1, 2, 1]), weight=lib.ones(5)),
    "nll_loss unbatched, weight too short": lambda lib: lib.nn.functional.nll_loss(
        lib.ones(3), lib.tensor(1), weight=lib.ones(2)),
    "Embedding uint8 indices": lambda lib: lib.nn.Embedding(5, 2)(lib.tensor([1, 2], dtype=lib.uint8)),
    "Embedding int16 indices": lambda lib: lib.nn.Embedding(5, 2)(lib.tensor([1, 2], dtype=lib.int16)),
    "Embedding bool indices": lambda lib: lib.nn.functional.embedding(lib.tensor([True]), lib.ones(5, 2)),
    "Conv2d dilation=0": lambda lib: lib.nn.Conv2d(2, 4, 3, dilation=0)(_x4(lib)),
    "Conv1d dilation=0": lambda lib: lib.nn.Conv1d(2, 4, 3, dilation=0)(lib.ones(1, 2, 5)),
    "Conv2d dilation=-1": lambda lib: lib.nn.Conv2d(2, 4, 3, dilation=-1)(_x4(lib)),
    "Conv2d stride=0": lambda lib: lib.nn.Conv2d(2, 4, 3, stride=0)(_x4(lib)),
    "Conv2d stride=(1, 0)": lambda lib: lib.nn.functional.conv2d(_x4(lib), lib.ones(4, 2, 3, 3), stride=(1, 0)),
    "Conv1d stride=-1": lambda lib: lib.nn.Conv1d(2, 4, 3, stride=-1)(lib.ones(1, 2, 5)),
    "Conv2d padding=-1": lambda lib: lib.nn.Conv2d(2, 4, 3, padding=-1)(_x4(lib)),
    "Conv2d kernel 0": lambda lib: lib.nn.functional.conv2d(_x4(lib), lib.ones(4, 2, 0, 3)),
    "conv2d groups=0": lambda lib: lib.nn.functional.conv2d(_x4(lib), lib.ones(4, 2, 3, 3), groups=0),
    "conv2d groups=0 and stride=0": lambda lib: lib.nn.functional.conv2d(_x4(lib), lib.ones(4, 2, 3, 3), groups=0,
                                                                         stride=0),
    "conv2d weight not divisible by groups": lambda lib: lib.nn.functional.conv2d(_x4(lib), lib.ones(4, 1, 3, 3),
                                                                                  groups=3),
    "conv_transpose2d stride=0": lambda lib: lib.nn.functional.conv_transpose2d(_x4(lib), lib.ones(2, 4, 3, 3),
                                                                                stride=0),
    "conv_transpose2d dilation=0": lambda lib: lib.nn.functional.conv_transpose2d(_x4(lib), lib.ones(2, 4, 3, 3),
                                                                                  dilation=0),
    "conv_transpose2d padding=-1": lambda lib: lib.nn.functional.conv_transpose2d(_x4(lib), lib.ones(2, 4, 3, 3),
                                                                                  padding=-1),
    "MaxPool2d stride=0": lambda lib: lib.nn.MaxPool2d(2, stride=0)(_x4(lib)),
    "AvgPool2d stride=0": lambda lib: lib.nn.AvgPool2d(2, stride=0)(_x4(lib)),
    "max_pool2d kernel 0": lambda lib: lib.nn.functional.max_pool2d(_x4(lib), 0),
    "max_pool2d kernel -1": lambda lib: lib.nn.functional.max_pool2d(_x4(lib), -1),
    "max_pool2d padding=-1": lambda lib: lib.nn.functional.max_pool2d(_x4(lib), 2, padding=-1),
    "max_pool2d stride=-1": lambda lib: lib.nn.functional.max_pool2d(_x4(lib), 2, stride=-1),
    "max_pool2d dilation=0": lambda lib: lib.nn.functional.max_pool2d(_x4(lib), 2, dilation=0),
    "avg_pool2d stride=-1": lambda lib: lib.nn.functional.avg_pool2d(_x4(lib), 2, stride=-1),
    "max_pool1d stride=0": lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 2, 5), 2, stride=0),
    "max_pool1d kernel 0": lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 2, 5), 0),
    "max_pool1d padding=-1": lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 2, 5), 2, padding=-1),
    "max_pool1d dilation=0": lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 2, 5), 2, dilation=0),
    "max_pool1d padding > kernel / 2": lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 2, 5), 2, padding=2),
    "adaptive_avg_pool2d size -1": lambda lib: lib.nn.functional.adaptive_avg_pool2d(_x4(lib), (-1, 2)),
    "Upsample scale_factor=-1": lambda lib: lib.nn.Upsample(scale_factor=-1.0)(_x4(lib)),
    "interpolate scale_factor=0": lambda lib: lib.nn.functional.interpolate(_x4(lib), scale_factor=0.0),
    "interpolate scale_factor=0.1 (size 0)": lambda lib: lib.nn.functional.interpolate(_x4(lib), scale_factor=0.1),
    "interpolate size=0": lambda lib: lib.nn.functional.interpolate(_x4(lib), size=0),
    "interpolate size=(3, -1) bilinear": lambda lib: lib.nn.functional.interpolate(_x4(lib), size=(3, -1),
                                                                                   mode="bilinear"),
    "interpolate 1-D size=0": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5), size=0),
    "interpolate 3-D scale_factor=0.1": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5, 5, 5),
                                                                                  scale_factor=0.1),
    "interpolate empty input": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 0, 5), size=3),
}


def _pruned_then_deepcopied(lib):
    import copy
    from importlib import import_module

    prune = import_module(lib.__name__ + ".nn.utils.prune")
    layer = lib.nn.Linear(3, 2)
    prune.l1_unstructured(layer, "weight", 0.5)
    return copy.deepcopy(layer)


REFUSED["deepcopy of a pruned module"] = _pruned_then_deepcopied
REFUSED["deepcopy of a non-leaf tensor"] = lambda lib: __import__("copy").deepcopy(lib.ones(2, requires_grad=True) * 2)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("name", list(REFUSED))
def test_refused_as_torch_refuses(name):
    torch = _torch()
    theirs = _error(lambda: REFUSED[name](torch))
    assert theirs is not None, "PyTorch accepts this: the case is wrong"
    assert _error(lambda: REFUSED[name](et)) == theirs


def test_a_deepcopy_of_a_leaf_still_copies_values_grad_and_attributes():
    import copy

    x = et.tensor([1.0, 2.0], requires_grad=True)
    x.grad, x.note = et.tensor([3.0, 4.0]), "kept"
    c = copy.deepcopy(x)
    assert c is not x and c.requires_grad and c.note == "kept" and c.grad.tolist() == [3.0, 4.0]
    c.data.add_(1)
    assert x.tolist() == [1.0, 2.0]


def test_inplace_dropout_then_inplace_relu_train_through_the_mask():
    """p = 0.5 (a random mask, so no torch parity): the gradient of the pre-dropout values is
    ``2`` where the output is positive and 0 elsewhere, as the formula says."""
    et.manual_seed(0)
    lin = et.nn.Linear(4, 5).double()
    x = et.tensor(_X, requires_grad=True)
    y = lin(x)
    et.nn.Dropout(0.5, inplace=True)(y)
    et.nn.ReLU(inplace=True)(y)
    y.sum().backward()
    grad_y = 2.0 * (y.detach().numpy() > 0)
    np.testing.assert_allclose(x.grad.numpy(), grad_y @ lin.weight.detach().numpy(), rtol=1e-12)
    assert 0 < (y.detach().numpy() == 0).sum() < y.numel()


@pytest.mark.parametrize("inplace", [False, True])
def test_rrelu_in_training_scales_each_negative_value_by_its_drawn_slope(inplace):
    """The slopes are random (no torch parity): each lies in [lower, upper], and the gradient
    is exactly the slope that scaled the value (PyTorch's noise)."""
    et.manual_seed(3)
    x = et.tensor(np.linspace(-2, 2, 8), requires_grad=True)  # no zero: slopes = y / x
    y = et.nn.functional.rrelu(x * 1, 0.1, 0.3, training=True, inplace=inplace)
    y.sum().backward()
    slopes = y.detach().numpy() / x.detach().numpy()
    negative = x.detach().numpy() < 0
    assert ((slopes[negative] >= 0.1) & (slopes[negative] <= 0.3)).all()
    np.testing.assert_allclose(x.grad.numpy()[negative], slopes[negative], rtol=1e-12)
    assert (x.grad.numpy()[~negative] == 1).all()
    assert y.grad_fn.name() == ("RreluWithNoiseBackward1" if inplace else "RreluWithNoiseBackward0")

