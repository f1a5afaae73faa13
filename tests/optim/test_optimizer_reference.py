"""Optimizers against the algorithms as printed in PyTorch's docs (no torch needed).

Each reference below is the pseudo-code of the algorithm box in PyTorch's
documentation, written once more in plain float64 NumPy. The loss is
``0.5 * ||p - target||^2 + sum(p^3) / 30`` (its gradient is computed by
edutorch's autograd), so the gradient changes from step to step.
"""
import numpy as np
import pytest

import edutorch as et
from edutorch import optim

TARGET = np.array([1.0, -2.0, 0.5, 3.0])
START = np.array([0.3, 0.1, -0.7, 2.0])
STEPS = 6


def _grad(p):
    return (p - TARGET) + p**2 / 10


def _sgd(lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
    p, b = START.copy(), None
    for _ in range(STEPS):
        g = _grad(p)
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum:
            b = g.copy() if b is None else momentum * b + (1 - dampening) * g
            g = g + momentum * b if nesterov else b
        p = p - lr * g
        yield p


def _adam(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, maximize=False, decoupled=False):
    p, m, v, vmax = START.copy(), 0 * START, 0 * START, 0 * START
    b1, b2 = betas
    for t in range(1, STEPS + 1):
        g = _grad(p)
        g = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        v_hat = (vmax if amsgrad else v) / (1 - b2**t)
        p = p - lr * (m / (1 - b1**t)) / (np.sqrt(v_hat) + eps)
        yield p


def _rmsprop(lr, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
    p, v, gavg, b = START.copy(), 0 * START, 0 * START, 0 * START
    for _ in range(STEPS):
        g = _grad(p) + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        v_tilde = v
        if centered:
            gavg = alpha * gavg + (1 - alpha) * g
            v_tilde = v - gavg**2
        if momentum:
            b = momentum * b + g / (np.sqrt(v_tilde) + eps)
            p = p - lr * b
        else:
            p = p - lr * g / (np.sqrt(v_tilde) + eps)
        yield p


def _adagrad(lr, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10):
    p, s = START.copy(), initial_accumulator_value + 0 * START
    for t in range(1, STEPS + 1):
        g = _grad(p) + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (np.sqrt(s) + eps)
        yield p


CASES = [
    ("SGD", _sgd, dict(lr=0.1)),
    ("SGD", _sgd, dict(lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.1)),
    ("SGD", _sgd, dict(lr=0.1, momentum=0.8, nesterov=True)),
    ("SGD", _sgd, dict(lr=0.1, maximize=True)),
    ("Adam", _adam, dict(lr=0.05)),
    ("Adam", _adam, dict(lr=0.05, weight_decay=0.1, amsgrad=True)),
    ("Adam", _adam, dict(lr=0.05, maximize=True, betas=(0.5, 0.9))),
    ("RMSprop", _rmsprop, dict(lr=0.01)),
    ("RMSprop", _rmsprop, dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    ("Adagrad", _adagrad, dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.2, weight_decay=0.05)),
]


@pytest.mark.parametrize("name,reference,kwargs", CASES, ids=[f"{n}-{k}" for n, _, k in CASES])
def test_matches_the_documented_algorithm(name, reference, kwargs):
    p = et.tensor(START.copy(), requires_grad=True)
    opt = getattr(optim, name)([p], **kwargs)
    target = et.tensor(TARGET)
    for expected in reference(**kwargs):
        opt.zero_grad()
        (0.5 * ((p - target) ** 2).sum() + (p**3).sum() / 30).backward()
        opt.step()
        np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-12, atol=1e-14)


def test_adamw_is_adam_with_decoupled_decay():
    p = et.tensor(START.copy(), requires_grad=True)
    opt = optim.AdamW([p], lr=0.05, weight_decay=0.3)
    target = et.tensor(TARGET)
    for expected in _adam(0.05, weight_decay=0.3, decoupled=True):
        opt.zero_grad()
        (0.5 * ((p - target) ** 2).sum() + (p**3).sum() / 30).backward()
        opt.step()
        np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-12, atol=1e-14)


def test_float32_parameters_stay_float32():
    for name, kwargs in [("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.1)), ("Adam", {}), ("RMSprop", dict(centered=True)),
                         ("Adagrad", {}), ("AdamW", dict(amsgrad=True))]:
        p = et.tensor([1.0, 2.0], requires_grad=True)
        opt = getattr(optim, name)([p], **kwargs)
        (p * p).sum().backward()
        opt.step()
        assert p.dtype == et.float32
        assert all(v.dtype == et.float32 for v in opt.state[p].values())
