"""No layer gradient is ever silently wrong: an in-place change before ``backward``.

The nn counterpart of ``tests/autograd/test_inplace_before_backward.py``: for every
layer of the layer table (``test_layers.LAYERS``) and every functional form below
(normalization without weights, pooling, convolution, losses, activations), the
output and then each input, parameter and buffer is modified in place after the
forward and before ``backward``.  PyTorch then raises its version error (it saved
that tensor) or computes the gradient the graph still defines; edutorch must do
the same.  Layers run in training and in eval mode.
"""
import re

import numpy as np
import pytest

import edutorch as et
from test_layers import LAYERS

torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")

# PyTorch warns that padding='same' with an even kernel copies the input: expected here
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")
R = np.random.default_rng(5)


def randn(*shape):
    return R.standard_normal(shape)


def modify(t):
    """New values everywhere (integer tensors, e.g. indices, become 0: still valid)."""
    if t.dtype.is_floating_point:
        t.mul_(-1.5).add_(0.25)
    else:
        t.mul_(0)


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


# functional forms: ``fn(F, *tensors)``; float inputs are differentiable
FUNCTIONAL = [
    ("layer_norm_noweight", lambda F, x: F.layer_norm(x, (4,)), (randn(3, 4),)),
    ("layer_norm_weight", lambda F, x, w, b: F.layer_norm(x, (4,), w, b), (randn(3, 4), randn(4), randn(4))),
    ("batch_norm_noweight", lambda F, x: F.batch_norm(x, None, None, training=True), (randn(4, 3),)),
    ("batch_norm_weight", lambda F, x, w, b: F.batch_norm(x, None, None, w, b, True), (randn(4, 3), randn(3), randn(3))),
    ("batch_norm_eval", lambda F, x, m, v, w, b: F.batch_norm(x, m.detach(), v.detach().exp(), w, b, False),
     (randn(4, 3, 2), randn(3), randn(3), randn(3), randn(3))),
    ("batch_norm_eval_noweight", lambda F, x, m, v: F.batch_norm(x, m.detach(), v.detach().exp()),
     (randn(4, 3), randn(3), randn(3))),
    ("group_norm_noweight", lambda F, x: F.group_norm(x, 2), (randn(3, 4, 2),)),
    ("group_norm_weight", lambda F, x, w, b: F.group_norm(x, 2, w, b), (randn(3, 4, 2), randn(4), randn(4))),
    ("max_pool2d", lambda F, x: F.max_pool2d(x, 2), (randn(2, 2, 4, 4),)),
    ("max_pool2d_pad", lambda F, x: F.max_pool2d(x, 3, 2, 1), (randn(1, 2, 5, 5),)),
    ("max_pool2d_indices", lambda F, x: F.max_pool2d(x, 2, return_indices=True)[0], (randn(1, 2, 4, 4),)),
    ("max_pool1d", lambda F, x: F.max_pool1d(x, 2), (randn(2, 3, 6),)),
    ("avg_pool2d", lambda F, x: F.avg_pool2d(x, 2), (randn(2, 2, 4, 4),)),
    ("adaptive_avg_pool2d", lambda F, x: F.adaptive_avg_pool2d(x, (2, 3)), (randn(2, 2, 5, 4),)),
    ("conv2d", lambda F, x, w, b: F.conv2d(x, w, b), (randn(2, 3, 5, 5), randn(4, 3, 3, 3), randn(4))),
    ("conv2d_1x1", lambda F, x, w: F.conv2d(x, w), (randn(2, 3, 4, 4), randn(2, 3, 1, 1))),
    ("conv2d_stride", lambda F, x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
     (randn(1, 2, 5, 5), randn(3, 2, 3, 3), randn(3))),
    ("conv1d", lambda F, x, w, b: F.conv1d(x, w, b, padding=1), (randn(2, 3, 6), randn(4, 3, 3), randn(4))),
    ("linear", lambda F, x, w, b: F.linear(x, w, b), (randn(3, 4), randn(2, 4), randn(2))),
    ("linear_nobias", lambda F, x, w: F.linear(x, w), (randn(3, 4), randn(2, 4))),
    ("bilinear", lambda F, a, b, w, c: F.bilinear(a, b, w, c), (randn(3, 2), randn(3, 4), randn(5, 2, 4), randn(5))),
    ("embedding", lambda F, i, w: F.embedding(i, w), (np.array([[0, 2], [1, 2]]), randn(3, 4))),
    ("pad", lambda F, x: F.pad(x, (1, 2)), (randn(2, 3),)),
    ("pad_reflect", lambda F, x: F.pad(x, (1, 1), mode="reflect"), (randn(1, 2, 4),)),
    ("relu", lambda F, x: F.relu(x), (randn(3, 4),)),
    ("leaky_relu", lambda F, x: F.leaky_relu(x, 0.1), (randn(3, 4),)),
    ("elu", lambda F, x: F.elu(x), (randn(3, 4),)),
    ("gelu", lambda F, x: F.gelu(x), (randn(3, 4),)),
    ("gelu_tanh", lambda F, x: F.gelu(x, approximate="tanh"), (randn(3, 4),)),
    ("silu", lambda F, x: F.silu(x), (randn(3, 4),)),
    ("softplus", lambda F, x: F.softplus(x, beta=2), (randn(3, 4),)),
    ("sigmoid", lambda F, x: F.sigmoid(x), (randn(3, 4),)),
    ("tanh", lambda F, x: F.tanh(x), (randn(3, 4),)),
    ("softmax", lambda F, x: F.softmax(x, 1), (randn(3, 4),)),
    ("log_softmax", lambda F, x: F.log_softmax(x, 1), (randn(3, 4),)),
    ("mse_loss", lambda F, x, t: F.mse_loss(x, t), (randn(3, 4), randn(3, 4))),
    ("l1_loss", lambda F, x, t: F.l1_loss(x, t, reduction="sum"), (randn(3, 4), randn(3, 4))),
    ("smooth_l1_loss", lambda F, x, t: F.smooth_l1_loss(x, t, beta=0.5), (randn(3, 4), randn(3, 4))),
    ("huber_loss", lambda F, x, t: F.huber_loss(x, t, reduction="none"), (randn(3, 4), randn(3, 4))),
    ("cross_entropy", lambda F, x, t: F.cross_entropy(x, t), (randn(3, 4), np.array([0, 3, 1]))),
    ("cross_entropy_weight", lambda F, x, t, w: F.cross_entropy(x, t, w.detach().exp()),
     (randn(3, 4), np.array([0, 3, 1]), randn(4))),
    ("cross_entropy_probs", lambda F, x, p: F.cross_entropy(x, p.softmax(1)), (randn(3, 4), randn(3, 4))),
    ("cross_entropy_smoothing", lambda F, x, t: F.cross_entropy(x, t, label_smoothing=0.1),
     (randn(3, 4), np.array([0, 3, 1]))),
    ("nll_loss", lambda F, x, t: F.nll_loss(x, t), (randn(3, 4), np.array([0, 3, 1]))),
    ("binary_cross_entropy", lambda F, x, t: F.binary_cross_entropy(x.sigmoid(), t.sigmoid()),
     (randn(3, 4), randn(3, 4))),
    ("bce_with_logits", lambda F, x, t, w, p: F.binary_cross_entropy_with_logits(x, t.sigmoid(), w, pos_weight=p),
     (randn(3, 4), randn(3, 4), randn(4), randn(4))),
    ("kl_div", lambda F, x, t: F.kl_div(x.log_softmax(1), t.softmax(1), reduction="batchmean"),
     (randn(3, 4), randn(3, 4))),
]


def _inputs(lib, arrays):
    """Leaves (float, requiring grad), and the tensors passed to the layer: float ones are
    non-leaf (``x * 1``) so that they can be modified in place; integer ones as they are."""
    leaves, xs = [], []
    for a in arrays:
        if a.dtype.kind == "f":
            leaf = lib.tensor(a, requires_grad=True)
            leaves.append(leaf)
            xs.append(leaf * 1)
        else:
            xs.append(lib.tensor(a))
    return leaves, xs


def run_modified(lib, forward, arrays, target, module=None):
    """Forward, modify ``target`` in place, backward; the gradients, or the exception.

    The loss is ``Σ out·w`` over the float outputs, with seeded random ``w``.
    """
    leaves, xs = _inputs(lib, arrays)
    try:
        outs = [o for o in _flat(forward(*xs)) if o.dtype.is_floating_point]
        rng = np.random.default_rng(1)
        weights = [rng.standard_normal(tuple(o.shape)) for o in outs]
        if target == "output":
            for o in outs:
                modify(o)
        elif isinstance(target, int):
            modify(xs[target])
        else:  # a parameter or buffer of the module
            with lib.no_grad():
                modify(module.get_parameter(target) if target in dict(module.named_parameters())
                       else module.get_buffer(target))
        loss = sum((o * lib.tensor(w)).sum() for o, w in zip(outs, weights) if o.requires_grad)
        loss.backward()
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return e
    params = [] if module is None else [p.grad for _, p in module.named_parameters()]
    return [None if g is None else g.numpy().copy() for g in [x.grad for x in leaves] + params]


VERSION_ERROR = re.compile(r"\[\S+ \[[^\]]*\]\](, which is output \d+ of \w+,)? is at version \d+; "
                           r"expected version \d+")


def _without_tensor_part(message):
    return VERSION_ERROR.sub("[...]", message)


def assert_same_outcome(ours, theirs, exact=True):
    """The same error (type and message), or the same gradients.

    ``exact=False`` (a parameter or buffer was modified): the version error may
    name the tensor differently.  Versions then differ (PyTorch's initialisation
    bumps a parameter's version more often) and PyTorch names the view it saved
    (``weight.t()`` for ``linear``, as "output 0 of AsStrided"); so does a view
    regenerated after its base changed.  The rest of the message must match.
    """
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"torch raises {theirs!r}; edutorch gives gradients"
        assert type(ours) is type(theirs)
        expected, got = str(theirs), str(ours)
        if not exact or "of AsStrided," in expected:
            expected, got = _without_tensor_part(expected), _without_tensor_part(got)
        assert got == expected
        return
    if isinstance(ours, Exception):
        raise AssertionError(f"edutorch raises {ours!r}; torch gives gradients") from ours
    assert len(ours) == len(theirs)
    for g_e, g_t in zip(ours, theirs):
        assert (g_e is None) == (g_t is None)
        if g_t is not None:
            np.testing.assert_allclose(g_e, g_t, rtol=1e-9, atol=1e-11)


def _layer_targets(make, arrays):
    module = make(et.nn)
    names = [n for n, _ in module.named_parameters()] + [n for n, b in module.named_buffers()
                                                           if b.dtype.is_floating_point]
    return ["output", *range(len(arrays)), *names]


LAYER_CASES = [(name, make, arrays, target, train)
               for name, make, arrays in LAYERS if name != "Identity"
               for target in _layer_targets(make, arrays)
               for train in ((False,) if name == "Dropout_eval" else (True, False))]


@pytest.mark.parametrize("name,make,arrays,target,train", LAYER_CASES,
                         ids=[f"{c[0]}-{c[3]}-{'train' if c[4] else 'eval'}" for c in LAYER_CASES])
def test_layer_inplace_change_before_backward_matches_torch(name, make, arrays, target, train):
    et.manual_seed(0)
    ours_module = make(et.nn).double().train(train)
    theirs_module = make(torch.nn).double().train(train)
    theirs_module.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                                   for k, v in ours_module.state_dict().items()})
    theirs = run_modified(torch, theirs_module, arrays, target, theirs_module)
    ours = run_modified(et, ours_module, arrays, target, ours_module)
    assert_same_outcome(ours, theirs, exact=not isinstance(target, str) or target == "output")


FUNCTIONAL_CASES = [(name, fn, arrays, target) for name, fn, arrays in FUNCTIONAL
                    for target in ("output", *range(len(arrays)))]


@pytest.mark.parametrize("name,fn,arrays,target", FUNCTIONAL_CASES,
                         ids=[f"{c[0]}-{c[3]}" for c in FUNCTIONAL_CASES])
def test_functional_inplace_change_before_backward_matches_torch(name, fn, arrays, target):
    theirs = run_modified(torch, lambda *xs: fn(torch.nn.functional, *xs), arrays, target)
    ours = run_modified(et, lambda *xs: fn(et.nn.functional, *xs), arrays, target)
    assert_same_outcome(ours, theirs)


# -- activations with inplace=True train as in PyTorch -------------------------------------
INPLACE_ACTIVATIONS = [
    ("ReLU", lambda nn: nn.ReLU(inplace=True)),
    ("LeakyReLU", lambda nn: nn.LeakyReLU(0.1, inplace=True)),
    ("ELU", lambda nn: nn.ELU(inplace=True)),
    ("ELU_alpha", lambda nn: nn.ELU(0.5, inplace=True)),
    ("SiLU", lambda nn: nn.SiLU(inplace=True)),
    ("Dropout_p0", lambda nn: nn.Dropout(0.0, inplace=True)),
    ("LeakyReLU_negative_slope", lambda nn: nn.LeakyReLU(-0.1, inplace=True)),  # PyTorch's error
]


def _train_step(lib, make):
    """``Sequential(Linear(4, 3), act)(x)``, weighted sum, backward: what PyTorch reports."""
    et.manual_seed(0)
    linear = et.nn.Linear(4, 3).double()
    model = lib.nn.Sequential(lib.nn.Linear(4, 3).double(), make(lib.nn))
    model[0].load_state_dict({k: lib.tensor(v.numpy()) for k, v in linear.state_dict().items()})
    x = lib.tensor(np.linspace(-1, 1, 8).reshape(2, 4), requires_grad=True)
    try:
        y = model(x)
        (y * lib.tensor([[1.0, 2, 3], [4, 5, 6]], dtype=lib.float64)).sum().backward()
    except RuntimeError as e:
        return str(e)
    return y.grad_fn.name(), y._version, x.grad.numpy().copy(), model[0].weight.grad.numpy().copy()


@pytest.mark.parametrize("make", [m for _, m in INPLACE_ACTIVATIONS], ids=[n for n, _ in INPLACE_ACTIVATIONS])
def test_inplace_activation_after_linear_trains_like_torch(make):
    ours, theirs = _train_step(et, make), _train_step(torch, make)
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert ours[:2] == theirs[:2]  # the node (LeakyReluBackward1 reads the result) and the version
    for a, b in zip(ours[2:], theirs[2:]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
