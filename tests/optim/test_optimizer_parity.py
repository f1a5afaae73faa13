"""Every optimizer configuration takes the same steps as PyTorch's (foreach=False)."""
import numpy as np
import pytest

import edutorch as et
from edutorch import optim as et_optim


@pytest.fixture
def torch():
    """Real PyTorch, the oracle; tests that use it skip when it is not installed."""
    return pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.5, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01, maximize=True)),
    ("SGD", dict(lr=0.05, weight_decay=0.2, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.05, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, maximize=True, weight_decay=0.01)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True)),
]
STEPS = 8


def _start(dtype):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3)).astype(dtype)
    b = rng.standard_normal(4).astype(dtype)
    x = rng.standard_normal((5, 3)).astype(dtype)
    return w, b, x


def _run(lib, optim_mod, name, kwargs, dtype, steps=STEPS):
    """Train a tiny tanh layer with ``lib`` (torch or edutorch); the weights after each step."""
    w0, b0, x0 = _start(dtype)
    w = lib.tensor(w0, requires_grad=True)
    b = lib.tensor(b0, requires_grad=True)
    x = lib.tensor(x0)
    opt = getattr(optim_mod, name)([w, b], **kwargs)
    history = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((x.mm(w.t()) + b).tanh() ** 2).mean() + (w * w).sum() * 0.01
        loss.backward()
        opt.step()
        history.append((w.detach().numpy().copy(), b.detach().numpy().copy()))
    return history, opt


def _kwargs_for(lib_is_torch, kwargs):
    kwargs = dict(kwargs)
    if lib_is_torch:
        kwargs["foreach"] = False
    return kwargs


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[f"{n}-{k}" for n, k in CONFIGS])
@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_same_parameters_each_step(name, kwargs, dtype, rtol, torch):
    ours, _ = _run(et, et_optim, name, kwargs, dtype)
    theirs, _ = _run(torch, torch.optim, name, _kwargs_for(True, kwargs), dtype)
    for step, ((w, b), (tw, tb)) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(w, tw, rtol=rtol, atol=rtol, err_msg=f"step {step}")
        np.testing.assert_allclose(b, tb, rtol=rtol, atol=rtol, err_msg=f"step {step}")


@pytest.mark.parametrize("name,kwargs", CONFIGS[1::2], ids=[f"{n}-{k}" for n, k in CONFIGS[1::2]])
def test_state_dict_matches_torch(name, kwargs, torch):
    _, ours = _run(et, et_optim, name, kwargs, np.float64, steps=3)
    _, theirs = _run(torch, torch.optim, name, _kwargs_for(True, kwargs), np.float64, steps=3)
    sd, tsd = ours.state_dict(), theirs.state_dict()
    tgroups = [dict(g, foreach=None) for g in tsd["param_groups"]]
    assert sd["param_groups"] == tgroups
    assert list(sd["state"]) == list(tsd["state"])
    for index, tstate in tsd["state"].items():
        assert list(sd["state"][index]) == list(tstate)
        for key, tvalue in tstate.items():
            value = sd["state"][index][key]
            assert value.dtype.__repr__() == repr(tvalue.dtype), key
            np.testing.assert_allclose(value.numpy(), tvalue.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_repr_matches_torch(name, torch):
    w = et.zeros(2, requires_grad=True)
    tw = torch.zeros(2, requires_grad=True)
    assert repr(getattr(et_optim, name)([w])) == repr(getattr(torch.optim, name)([tw]))
