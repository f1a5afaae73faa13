"""Tensor-op scenarios: the ops issue 2 added beyond arithmetic, forward + backward.

Each builds the same computation three ways: edutorch, PyTorch CPU (when
installed) and hand-written NumPy with its gradient by hand (the floor).
Shapes are the ones a lesson meets: a batch of 64 logits over 10 classes,
a 128x256 activation, a handful of tensors to concatenate.
"""
import numpy as np

import edutorch as et

try:
    import torch
except ImportError:
    torch = None

RNG = np.random.default_rng(0)


def _pair(x_np, fn_et, fn_torch):
    """edutorch and torch contenders running ``fn(x).backward()`` on the same data."""
    x = et.tensor(x_np, requires_grad=True)

    def edu():
        x.grad = None
        fn_et(x).backward()

    contenders = {"edutorch": edu, "torch": None}
    if torch is not None:
        xt = torch.tensor(x_np, requires_grad=True)

        def tor():
            xt.grad = None
            fn_torch(xt).backward()

        contenders["torch"] = tor
    return contenders


def _log_softmax_nll():
    """Cross-entropy by hand: log_softmax, pick the target column, mean."""
    logits = RNG.standard_normal((64, 10)).astype(np.float32)
    target = RNG.integers(0, 10, 64)
    rows = np.arange(64)

    def loss(lib, x):
        idx = lib.tensor(target).unsqueeze(1)
        return -x.log_softmax(1).gather(1, idx).mean()

    def numpy_by_hand():
        z = logits - logits.max(1, keepdims=True)
        e = np.exp(z)
        s = e.sum(1, keepdims=True)
        lsm = z - np.log(s)
        -lsm[rows, target].mean()
        g = e / s
        g[rows, target] -= 1
        return g / 64

    contenders = _pair(logits, lambda x: loss(et, x), lambda x: loss(torch, x))
    contenders["numpy"] = numpy_by_hand
    return {
        "name": "log_softmax+gather+mean 64x10 fwd+bwd",
        "contenders": contenders,
        "limits": {"torch": None, "numpy": None, "ms": 1.0},
        "setup_note": "the cross-entropy path of a classifier, written with tensor ops",
    }


def _var_norm():
    x_np = RNG.standard_normal((128, 256)).astype(np.float32)

    def numpy_by_hand():
        m = x_np.mean(1, keepdims=True)
        c = x_np - m
        v = (c * c).sum(1, keepdims=True) / 255
        n = np.sqrt((x_np * x_np).sum())
        v.sum() + n
        return c * (2 / 255) + x_np / n

    contenders = _pair(x_np, lambda x: x.var(1).sum() + x.norm(), lambda x: x.var(1).sum() + x.norm())
    contenders["numpy"] = numpy_by_hand
    return {
        "name": "var(dim=1).sum() + norm() 128x256 fwd+bwd",
        "contenders": contenders,
        "limits": {"torch": None, "numpy": None, "ms": 5.0},
        "setup_note": "normalisation statistics (what BatchNorm/LayerNorm lessons compute)",
    }


def _cat_index_max():
    x_np = RNG.standard_normal((32, 64)).astype(np.float32)
    idx = np.array([0, 3, 3, 7, 15])

    def build(lib, x):
        parts = lib.cat([x[:16], x[16:] * 2], dim=1)
        return parts[lib.tensor(idx)].amax(1).sum() + parts.max(0).values.sum()

    def numpy_by_hand():
        parts = np.concatenate([x_np[:16], x_np[16:] * 2], axis=1)
        picked = parts[idx]
        a = picked.argmax(1)
        b = parts.argmax(0)
        picked.max(1).sum() + parts.max(0).sum()
        g = np.zeros_like(parts)
        np.add.at(g, (idx, a), 1.0)
        g[b, np.arange(parts.shape[1])] += 1.0
        gx = np.zeros_like(x_np)
        gx[:16] = g[:, :64]
        gx[16:] = g[:, 64:] * 2
        return gx

    contenders = _pair(x_np, lambda x: build(et, x), lambda x: build(torch, x))
    contenders["numpy"] = numpy_by_hand
    return {
        "name": "slice+cat+index+amax+max(dim) 32x64 fwd+bwd",
        "contenders": contenders,
        "limits": {"torch": None, "numpy": None, "ms": 2.0},
        "setup_note": "shape and selection ops whose gradients scatter back",
    }


def scenarios():
    return [_log_softmax_nll(), _var_norm(), _cat_index_max()]
