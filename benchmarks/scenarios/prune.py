"""Pruning scenario: what the prune widget does each time its slider moves.

One repetition: restore the unpruned weights, ``l1_unstructured(amount=0.5)``
on the three weight matrices of a 784-256-128-10 MLP, one forward pass at
batch 256 (the pre-hooks recompute ``weight = mask * weight_orig``), then
``prune.remove`` on each layer.  Restoring the weights first (a copy, done
by every contender) makes each repetition prune the same values.
"""
import numpy as np

import edutorch as et
from edutorch.nn.utils import prune

try:
    import torch
    from torch.nn.utils import prune as torch_prune
except ImportError:  # the torch contender is simply left out
    torch = None

SIZES = (784, 256, 128, 10)
BATCH = 256
AMOUNT = 0.5


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Linear(SIZES[0], SIZES[1]), nn.ReLU(),
        nn.Linear(SIZES[1], SIZES[2]), nn.ReLU(),
        nn.Linear(SIZES[2], SIZES[3]),
    )


def _weights(rng):
    return [
        (rng.standard_normal((o, i)).astype(np.float32) / np.sqrt(i),
         rng.standard_normal(o).astype(np.float32) * 0.01)
        for i, o in zip(SIZES[:-1], SIZES[1:])
    ]


def _prune_cycle(lib, pruner, model, linears, saved, x):
    """Restore weights, prune each weight by L1, forward once, make the pruning permanent."""
    with lib.no_grad():
        for layer, w in zip(linears, saved):
            layer.weight.copy_(w)
    for layer in linears:
        pruner.l1_unstructured(layer, "weight", amount=AMOUNT)
    out = model(x)
    for layer in linears:
        pruner.remove(layer, "weight")
    return out


def _numpy_cycle(params, x):
    """The same arithmetic by hand: |w| threshold by partition, mask, masked forward."""
    masked = []
    for w, b in params:
        k = round(AMOUNT * w.size)
        scores = np.abs(w).reshape(-1)
        threshold = np.partition(scores, k - 1)[k - 1]
        mask = (scores > threshold).astype(w.dtype).reshape(w.shape)
        masked.append((w * mask, b))
    h = x
    for i, (w, b) in enumerate(masked):
        h = h @ w.T + b
        if i < len(masked) - 1:
            h = np.maximum(h, 0)
    return h


def scenarios():
    rng = np.random.default_rng(0)
    params = _weights(rng)
    x_np = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)

    model = _mlp(et)
    linears = [m for m in model if isinstance(m, et.nn.Linear)]
    for layer, (_, b) in zip(linears, params):
        layer.bias.data = et.tensor(b)
    saved = [et.tensor(w) for w, _ in params]
    x = et.tensor(x_np)
    contenders = {
        "edutorch": lambda: _prune_cycle(et, prune, model, linears, saved, x),
        "numpy": lambda: _numpy_cycle(params, x_np),
        "torch": None,
    }
    if torch is not None:
        t_model = _mlp(torch)
        t_linears = [m for m in t_model if isinstance(m, torch.nn.Linear)]
        with torch.no_grad():
            for layer, (_, b) in zip(t_linears, params):
                layer.bias.copy_(torch.from_numpy(b))
        t_saved = [torch.from_numpy(w.copy()) for w, _ in params]
        t_x = torch.from_numpy(x_np)
        contenders["torch"] = lambda: _prune_cycle(
            torch, torch_prune, t_model, t_linears, t_saved, t_x)
    return [{
        "name": "prune l1_unstructured 0.5 on MLP 784-256-128-10 + forward b256 + remove",
        "contenders": contenders,
        "limits": {"torch": 1.0, "numpy": None, "ms": 20},
        "setup_note": "prune widget slider step: restore weights, prune 3 layers, forward, prune.remove",
    }]
