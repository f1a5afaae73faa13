"""Per-sample gradients: ``vmap(grad(loss), in_dims=(None, 0, 0))`` over a batch, with
``functional_call`` giving the model its parameters as a dict (the torch.func tutorial's recipe).

One gradient of every parameter for each of the 64 samples of a batch, for a
64-32-10 MLP and cross-entropy.  edutorch's ``vmap`` runs the function once per
sample (docs/vmap.md), so its time is ~64 single-sample backward passes;
``torch.func.vmap`` batches them into one.  The NumPy contender writes the
per-sample gradients by hand: one batched forward, then ``einsum`` outer
products per sample (what the batching rules amount to here).
"""
import numpy as np

import edutorch as et

try:
    import torch
    import torch.func as torch_func
except ImportError:  # the torch contender is simply left out
    torch = None

BATCH, SIZES = 64, (64, 32, 10)


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], BATCH)
    return x, y


def _transform(lib, func, weights=None):
    """The recipe, the same code for edutorch and PyTorch (``weights``: the parameters to use)."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(SIZES[0], SIZES[1]), lib.nn.ReLU(), lib.nn.Linear(SIZES[1], SIZES[2]))
    if weights is not None:
        model.load_state_dict({name: lib.tensor(value) for name, value in weights.items()})
    params = {name: p.detach() for name, p in model.named_parameters()}
    x_np, y_np = _data()
    x, y = lib.tensor(x_np), lib.tensor(y_np)

    def loss(params, sample, target):
        logits = func.functional_call(model, params, (sample.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(logits, target.unsqueeze(0))

    per_sample = func.vmap(func.grad(loss), in_dims=(None, 0, 0))
    return lambda: per_sample(params, x, y), model


def _by_hand(model):
    """The same gradients in NumPy: a batched forward, then outer products per sample."""
    w1, b1, w2, b2 = (p.detach().numpy().astype(np.float32) for p in model.parameters())
    x, y = _data()
    onehot = np.eye(SIZES[-1], dtype=np.float32)[y]

    def run():
        a = x @ w1.T + b1
        h = np.maximum(a, 0)
        logits = h @ w2.T + b2
        e = np.exp(logits - logits.max(1, keepdims=True))
        d_logits = e / e.sum(1, keepdims=True) - onehot  # each sample's own loss: no 1/N
        d_h = (d_logits @ w2) * (a > 0)
        return {"0.weight": np.einsum("bi,bj->bij", d_h, x), "0.bias": d_h,
                "2.weight": np.einsum("bi,bj->bij", d_logits, h), "2.bias": d_logits}

    return run


def scenarios():
    edutorch_run, model = _transform(et, et.func)
    weights = {name: p.detach().numpy() for name, p in model.named_parameters()}
    torch_run = _transform(torch, torch_func, weights)[0] if torch is not None else None
    return [{
        "name": f"per-sample grads vmap(grad) MLP {SIZES[0]}-{SIZES[1]}-{SIZES[2]} batch {BATCH}, float32",
        "contenders": {"edutorch": edutorch_run, "numpy": _by_hand(model), "torch": torch_run},
        "limits": {"torch": None, "numpy": None, "ms": None},
        "setup_note": f"{BATCH} gradients of each parameter (edutorch: one pass per sample)",
    }]
