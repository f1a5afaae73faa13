"""nn scenarios (issue 3): a small CNN training step, MLP inference, the cost of calling a module.

* CNN step: Conv2d 1->8 3x3 pad 1, ReLU, MaxPool 2, Conv2d 8->16 3x3 pad 1,
  ReLU, MaxPool 2, Flatten, Linear 784->10, CrossEntropy, SGD step; batch 64
  of 28x28.  Limit: 1.3x PyTorch CPU.
* MLP 784-256-128-10 inference at batch 1024 under ``no_grad``: 1.1x PyTorch,
  with a hand-written NumPy floor.
* Calling ``nn.Identity()`` / a tiny ``nn.Linear`` with no hooks: the module
  ``__call__`` overhead, 1.0x PyTorch.

Both libraries get the same weights (copied from the edutorch model) and data.
"""
import numpy as np

import edutorch as et
import edutorch.nn as enn

try:
    import torch
except ImportError:
    torch = None


def _copy_weights(et_model, torch_model):
    """Give the torch model exactly the edutorch model's parameters."""
    with torch.no_grad():
        for (_, p_et), (_, p_t) in zip(et_model.named_parameters(), torch_model.named_parameters()):
            p_t.copy_(torch.from_numpy(p_et.detach().numpy().copy()))


def _cnn(nn):
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(784, 10),
    )


def _train_step(lib, model, opt, x, y):
    def step():
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return step


def _cnn_step():
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    y_np = rng.integers(0, 10, 64)
    et.manual_seed(0)
    model = _cnn(enn)
    import edutorch.optim as eoptim

    contenders = {
        "edutorch": _train_step(et, model, eoptim.SGD(model.parameters(), lr=0.01), et.tensor(x_np), et.tensor(y_np)),
        "numpy": None,
        "torch": None,
    }
    if torch is not None:
        tmodel = _cnn(torch.nn)
        _copy_weights(model, tmodel)
        contenders["torch"] = _train_step(torch, tmodel, torch.optim.SGD(tmodel.parameters(), lr=0.01),
                                          torch.tensor(x_np), torch.tensor(y_np))
    return {
        "name": "small CNN train step b64 28x28 (conv-relu-pool x2, linear, CE, SGD)",
        "contenders": contenders,
        "limits": {"torch": 1.3, "numpy": None, "ms": None},
        "setup_note": "im2col conv + one matmul, reshape max-pool, fused addmm and log_softmax+nll",
    }


def _mlp(nn):
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))


def _mlp_inference():
    x_np = np.random.default_rng(1).standard_normal((1024, 784)).astype(np.float32)
    et.manual_seed(0)
    model = _mlp(enn)
    x = et.tensor(x_np)
    ws = [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy()) for m in model if isinstance(m, enn.Linear)]

    def edu():
        with et.no_grad():
            return model(x)

    def numpy_mlp():
        h = x_np
        for i, (w, b) in enumerate(ws):
            h = h @ w + b
            if i < len(ws) - 1:
                h = np.maximum(h, 0)
        return h

    contenders = {"edutorch": edu, "numpy": numpy_mlp, "torch": None}
    if torch is not None:
        tmodel = _mlp(torch.nn)
        _copy_weights(model, tmodel)
        xt = torch.tensor(x_np)

        def torch_mlp():
            with torch.no_grad():
                return tmodel(xt)

        contenders["torch"] = torch_mlp
    return {
        "name": "MLP 784-256-128-10 inference b1024 no_grad",
        "contenders": contenders,
        "limits": {"torch": 1.1, "numpy": None, "ms": None},
        "setup_note": "three fused addmm + relu under no_grad",
    }


def _module_call(kind):
    et.manual_seed(0)
    if kind == "Identity":
        m, x = enn.Identity(), et.randn(2, 4)
    else:
        m, x = enn.Linear(4, 4), et.randn(2, 4)
    contenders = {"edutorch": lambda: m(x), "numpy": None, "torch": None}
    if torch is not None:
        tm = torch.nn.Identity() if kind == "Identity" else torch.nn.Linear(4, 4)
        xt = torch.randn(2, 4)
        contenders["torch"] = lambda: tm(xt)
    return {
        "name": f"module call nn.{kind} (no hooks), input 2x4",
        "contenders": contenders,
        "limits": {"torch": 1.0 if kind == "Identity" else None, "numpy": None, "ms": None},
        "setup_note": "Module.__call__ fast path when no hook is registered",
    }


def scenarios():
    return [_cnn_step(), _mlp_inference(), _module_call("Identity"), _module_call("Linear")]
