"""The ``"cuda"`` path, run without a GPU on the CuPy stand-in (``tests/fake_cupy.py``).

Every op of the op table runs on ``device="cuda"`` and must give the CPU's values
and gradients, on the device.  The stand-in raises where real CuPy raises
(implicit conversion to NumPy, NumPy arrays mixed into device computations), so
a NumPy-only call hidden in an op's forward or backward fails here.
"""
import numpy as np
import pytest

import edutorch as et
from op_cases import sample, total

_CREATORS = {"tensor", "ones", "zeros", "full", "empty", "randn", "rand", "arange", "eye", "linspace",
             "randint", "as_tensor"}


class OnCuda:
    """``edutorch`` with ``device="cuda"`` as the default of the creation functions."""

    def __getattr__(self, name):
        attr = getattr(et, name)
        if name in _CREATORS:
            def create(*args, **kwargs):
                kwargs.setdefault("device", "cuda")
                return attr(*args, **kwargs)
            return create
        return attr


def _run(lib, case, arrays):
    xs = [lib.tensor(a, requires_grad=case.grad) for a in arrays]
    out = case.fn(lib, *xs)
    outs = out if isinstance(out, tuple) else (out,)
    grads = None
    if case.grad:
        loss = total(outs, [None if o is None else lib.ones_like(o) for o in outs])
        if loss is not None and loss.requires_grad:
            grads = lib.autograd.grad(loss, xs, allow_unused=True)
    return outs, grads


def _host(t):
    return None if t is None else t.cpu().detach().numpy()


def test_every_op_runs_on_the_device(op_case, fake_cuda):
    rng = np.random.default_rng(5)
    arrays = [sample(s, op_case.domain, rng) for s in op_case.shapes]
    with np.errstate(all="ignore"):
        cpu_outs, cpu_grads = _run(et, op_case, [a.copy() for a in arrays])
        gpu_outs, gpu_grads = _run(OnCuda(), op_case, [a.copy() for a in arrays])
    for c, g in zip(cpu_outs, gpu_outs):
        if c is None:
            assert g is None
            continue
        assert g.device.type == "cuda", op_case.id
        np.testing.assert_allclose(_host(g), _host(c), rtol=1e-12, atol=1e-12, err_msg=op_case.id)
    assert (cpu_grads is None) == (gpu_grads is None)
    for c, g in zip(cpu_grads or (), gpu_grads or ()):
        if c is None:
            assert g is None
            continue
        assert g.device.type == "cuda", op_case.id
        np.testing.assert_allclose(_host(g), _host(c), rtol=1e-12, atol=1e-12, err_msg=op_case.id)


def test_the_standin_fails_where_cupy_fails(fake_cuda):
    x = et.ones(3, device="cuda")
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(x._data)
    with pytest.raises(TypeError, match="Unsupported type"):
        fake_cuda.add(x._data, np.ones(3))
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        x.numpy()
    assert x.cpu().numpy().tolist() == [1.0, 1.0, 1.0]


# -- layers, losses, optimizers and nn.utils on the device ------------------------------
def _layers(nn):
    return {
        "Linear": (nn.Linear(4, 3), (2, 4)),
        "Conv1d": (nn.Conv1d(2, 3, 3, padding=1), (2, 2, 6)),
        "Conv2d": (nn.Conv2d(2, 3, 3, stride=2, padding=1), (2, 2, 5, 5)),
        "MaxPool2d": (nn.MaxPool2d(2), (1, 2, 4, 4)),
        "AvgPool2d": (nn.AvgPool2d(2), (1, 2, 4, 4)),
        "AdaptiveAvgPool2d": (nn.AdaptiveAvgPool2d(1), (1, 2, 4, 4)),
        "BatchNorm1d": (nn.BatchNorm1d(3), (4, 3)),
        "BatchNorm2d": (nn.BatchNorm2d(2), (3, 2, 2, 2)),
        "LayerNorm": (nn.LayerNorm(4), (2, 4)),
        "GroupNorm": (nn.GroupNorm(2, 4), (2, 4, 3)),
        "ReLU": (nn.ReLU(), (2, 4)),
        "GELU": (nn.GELU(), (2, 4)),
        "Softmax": (nn.Softmax(dim=1), (2, 4)),
        "LogSoftmax": (nn.LogSoftmax(dim=1), (2, 4)),
        "Flatten": (nn.Flatten(), (2, 2, 2)),
        "Dropout_eval": (nn.Dropout(0.5).eval(), (2, 4)),
        "LSTM": (nn.LSTM(4, 3, batch_first=True), (2, 3, 4)),
        "GRU": (nn.GRU(4, 3), (3, 2, 4)),
    }


@pytest.mark.parametrize("name", sorted(_layers(et.nn)))
def test_every_layer_runs_on_the_device(name, fake_cuda):
    layer, shape = _layers(et.nn)[name]
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    results = []
    for device in ("cpu", "cuda"):
        layer.to(device)
        xt = et.tensor(x, device=device, requires_grad=True)
        out = layer(xt)
        out = out[0] if isinstance(out, tuple) else out  # RNNs return (output, state)
        (out * et.arange(out.numel(), device=device).reshape(out.shape)).sum().backward()
        assert out.device.type == device and xt.grad.device.type == device
        grads = [p.grad.cpu().numpy().copy() for p in layer.parameters()]
        layer.zero_grad()
        results.append((out.detach().cpu().numpy(), xt.grad.cpu().numpy(), grads))
    (o1, g1, p1), (o2, g2, p2) = results
    np.testing.assert_allclose(o2, o1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g2, g1, rtol=1e-5, atol=1e-6)
    for a, b in zip(p2, p1):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


LOSSES = {
    "cross_entropy": lambda F, x, y: F.cross_entropy(x, y),
    "cross_entropy_smooth": lambda F, x, y: F.cross_entropy(x, y, label_smoothing=0.1),
    "nll_loss": lambda F, x, y: F.nll_loss(F.log_softmax(x, 1), y),
    "mse_loss": lambda F, x, y: F.mse_loss(x, x.detach() * 0.5),
    "l1_loss": lambda F, x, y: F.l1_loss(x, x.detach() * 0.5),
    "bce_with_logits": lambda F, x, y: F.binary_cross_entropy_with_logits(x, (x.detach() > 0).float()),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_every_loss_runs_on_the_device(name, fake_cuda):
    x = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    y = np.array([0, 2, 1, 2])
    values = []
    for device in ("cpu", "cuda"):
        xt = et.tensor(x, device=device, requires_grad=True)
        loss = LOSSES[name](et.nn.functional, xt, et.tensor(y, device=device))
        loss.backward()
        values.append((loss.item(), xt.grad.cpu().numpy()))
    assert values[1][0] == pytest.approx(values[0][0], rel=1e-6)
    np.testing.assert_allclose(values[1][1], values[0][1], rtol=1e-5, atol=1e-7)


OPTIMIZERS = {
    "SGD": lambda o, p: o.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True),
    "Adam": lambda o, p: o.Adam(p, lr=0.01, amsgrad=True),
    "AdamW": lambda o, p: o.AdamW(p, lr=0.01),
    "RMSprop": lambda o, p: o.RMSprop(p, lr=0.01, momentum=0.5, centered=True),
    "Adagrad": lambda o, p: o.Adagrad(p, lr=0.1),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_training_step_runs_on_the_device(name, fake_cuda):
    """Three steps of a small MLP with gradient clipping: the same parameters on both devices."""
    x = np.random.default_rng(3).standard_normal((8, 4)).astype(np.float32)
    y = np.arange(8) % 3
    finals = []
    for device in ("cpu", "cuda"):
        et.manual_seed(0)
        model = et.nn.Sequential(et.nn.Linear(4, 5), et.nn.ReLU(), et.nn.Linear(5, 3)).to(device)
        opt = OPTIMIZERS[name](et.optim, model.parameters())
        xt, yt = et.tensor(x, device=device), et.tensor(y, device=device)
        for _ in range(3):
            opt.zero_grad()
            et.nn.functional.cross_entropy(model(xt), yt).backward()
            et.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
        assert all(p.device.type == device for p in model.parameters())
        finals.append([p.detach().cpu().numpy() for p in model.parameters()])
    for a, b in zip(*finals):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_pruning_runs_on_the_device(fake_cuda):
    from edutorch.nn.utils import prune

    layer = et.nn.Linear(6, 4).to("cuda")
    prune.l1_unstructured(layer, "weight", amount=0.5)
    prune.ln_structured(layer, "weight", amount=1, n=2, dim=0)
    assert layer.weight_mask.device.type == "cuda"
    assert int((layer.weight == 0).sum().item()) >= 12
    prune.remove(layer, "weight")
    assert layer.weight.device.type == "cuda"


def test_embedding_and_dropout_run_on_the_device(fake_cuda):
    emb = et.nn.Embedding(5, 3).to("cuda")
    out = emb(et.tensor([[0, 4, 4]], device="cuda"))
    out.sum().backward()
    assert out.device.type == "cuda" and emb.weight.grad.device.type == "cuda"
    assert emb.weight.grad.cpu().numpy()[4].tolist() == [2.0, 2.0, 2.0]
    x = et.ones(1000, device="cuda", requires_grad=True)
    y = et.nn.functional.dropout(x, 0.5)
    y.sum().backward()
    kept = y.detach().cpu().numpy() != 0
    assert y.device.type == "cuda" and 350 < kept.sum() < 650
    assert set(y.detach().cpu().numpy()[kept].tolist()) == {2.0}
    np.testing.assert_array_equal(x.grad.cpu().numpy(), np.where(kept, 2.0, 0.0))
