"""Training scenarios: whole training steps with nn modules, and the digits example end to end.

* MLP 784-256-128-10 (ReLU, CrossEntropyLoss, SGD momentum 0.9) at batch 128:
  big enough that matmuls dominate; edutorch should match PyTorch and stay
  near the hand-written NumPy floor.
* tiny MLP 64-64-64-10 at batch 8: per-op bookkeeping dominates; a lean
  engine should beat PyTorch's dispatcher.
* the digits example (``examples/train_mlp.py``): wall time until the test
  accuracy first reaches 95 %.

The NumPy floor is the same forward, backward and SGD-with-momentum update
written by hand (PyTorch's weight layout ``x @ W.T + b``).
"""
import contextlib
import os
import sys

import numpy as np

import edutorch as et

try:
    import torch
except ImportError:  # the torch contenders are simply left out
    torch = None

LR, MOMENTUM = 0.01, 0.9


def _init(sizes, seed=0):
    """Shared starting weights (PyTorch layout: W is (out, in))."""
    rng = np.random.default_rng(seed)
    ws = [(rng.uniform(-1, 1, (o, i)) / np.sqrt(i)).astype(np.float32) for i, o in zip(sizes, sizes[1:])]
    bs = [(rng.uniform(-1, 1, o) / np.sqrt(i)).astype(np.float32) for i, o in zip(sizes, sizes[1:])]
    return ws, bs


def _data(sizes, batch, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], batch)
    return x, y


def _mlp(lib, sizes, ws, bs):
    """``Sequential(Linear, ReLU, ..., Linear)`` with the given weights."""
    layers = []
    for i, (w, b) in enumerate(zip(ws, bs)):
        linear = lib.nn.Linear(w.shape[1], w.shape[0])
        with lib.no_grad():
            linear.weight.copy_(lib.tensor(w))
            linear.bias.copy_(lib.tensor(b))
        layers.append(linear)
        if i < len(ws) - 1:
            layers.append(lib.nn.ReLU())
    return lib.nn.Sequential(*layers)


def _framework_step(lib, sizes, batch, forward_context=contextlib.nullcontext):
    """One training step of ``lib``'s MLP; the forward and the loss run inside ``forward_context()``."""
    ws, bs = _init(sizes)
    x_np, y_np = _data(sizes, batch)
    model = _mlp(lib, sizes, ws, bs)
    loss_fn = lib.nn.CrossEntropyLoss()
    optimizer = lib.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    x, y = lib.tensor(x_np), lib.tensor(y_np)

    def step():
        optimizer.zero_grad()
        with forward_context():
            loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()

    return step


def _numpy_step(sizes, batch):
    """The floor: forward, backward and SGD-momentum by hand, no graph."""
    ws, bs = _init(sizes)
    x, y = _data(sizes, batch)
    params = ws + bs
    bufs = [None] * len(params)
    rows = np.arange(batch)

    def step():
        # forward, keeping each layer's input and pre-activation
        acts, pre = [x], []
        h = x
        for i, (w, b) in enumerate(zip(ws, bs)):
            z = h @ w.T + b
            pre.append(z)
            h = np.maximum(z, 0) if i < len(ws) - 1 else z
            acts.append(h)
        # cross-entropy on the logits: softmax - one_hot, averaged over the batch
        shifted = h - h.max(1, keepdims=True)
        e = np.exp(shifted)
        s = e.sum(1, keepdims=True)
        loss = (np.log(s[:, 0]) - shifted[rows, y]).mean()
        g = e / s
        g[rows, y] -= 1
        g /= batch
        # backward
        grads_w, grads_b = [None] * len(ws), [None] * len(ws)
        for i in reversed(range(len(ws))):
            grads_w[i] = g.T @ acts[i]
            grads_b[i] = g.sum(0)
            if i > 0:
                g = (g @ ws[i]) * (pre[i - 1] > 0)
        # SGD with momentum, in place
        for k, (p, grad) in enumerate(zip(params, grads_w + grads_b)):
            if bufs[k] is None:
                bufs[k] = grad.copy()
            else:
                bufs[k] *= MOMENTUM
                bufs[k] += grad
            p -= LR * bufs[k]
        return loss

    return step


def _train_step(sizes, batch, torch_limit, numpy_limit):
    return {
        "name": f"mlp {'-'.join(map(str, sizes))} train step b{batch} (nn.Linear, ReLU, CE, SGD m0.9)",
        "contenders": {
            "edutorch": _framework_step(et, sizes, batch),
            "numpy": _numpy_step(sizes, batch),
            "torch": _framework_step(torch, sizes, batch) if torch is not None else None,
        },
        "limits": {"torch": torch_limit, "numpy": numpy_limit, "ms": None},
        "setup_note": "zero_grad, forward, CrossEntropyLoss, backward, SGD(lr=0.01, momentum=0.9).step()",
    }


def _digits_example():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "examples"))
    import train_mlp

    def run(lib):
        def once():
            history = train_mlp.main(lib, target_accuracy=0.95, log=None)
            if history[-1]["test_accuracy"] < 0.95:
                raise RuntimeError(f"{lib.__name__} did not reach 95 % test accuracy: {history[-1]}")
        return once

    return {
        "name": "digits MLP example (examples/train_mlp.py): time to 95% test accuracy",
        "contenders": {"edutorch": run(et), "numpy": None, "torch": run(torch) if torch is not None else None},
        "limits": {"torch": None, "numpy": None, "ms": 10000},
        "setup_note": "64-128-10 MLP, SGD m0.9 + cosine schedule + clipping, batch 32, stops at the first "
                      "epoch with >= 95 % test accuracy",
    }


def scenarios():
    return [
        _train_step((784, 256, 128, 10), 128, torch_limit=1.0, numpy_limit=1.2),
        _train_step((64, 64, 64, 10), 8, torch_limit=0.6, numpy_limit=None),
        _digits_example(),
    ]
