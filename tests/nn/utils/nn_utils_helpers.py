"""Helpers for the torch.nn.utils tests (pruning, weight/spectral norm, parametrize).

``pair`` builds the same layer in edutorch and in real PyTorch with identical
parameters, so masks, values and gradients can be compared exactly.
"""
import numpy as np
import pytest

import edutorch as et

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def require_torch():
    return pytest.importorskip("torch", reason=TORCH_REASON)


def copy_params(src_torch, dst_et):
    """Copy every parameter and buffer of a torch module into the edutorch one (by name)."""
    state = {k: v.detach().numpy().copy() for k, v in src_torch.state_dict().items()}
    for name, t in list(dst_et.named_parameters()) + list(dst_et.named_buffers()):
        t.data = et.from_numpy(state[name]).to(t.dtype)


def pair(kind, *args, **kwargs):
    """``(edutorch_module, torch_module)`` of ``nn.<kind>(*args)`` with equal parameters."""
    torch = require_torch()
    t_mod = getattr(torch.nn, kind)(*args, **kwargs)
    e_mod = getattr(et.nn, kind)(*args, **kwargs)
    copy_params(t_mod, e_mod)
    return e_mod, t_mod


def to_np(t):
    return t.detach().numpy()


def numerical_grad(f, x, eps=1e-6):
    """Central differences of the scalar ``f()`` w.r.t. the float64 array ``x`` (changed in place)."""
    grad = np.zeros_like(x)
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = f()
        flat[i] = old - eps
        down = f()
        flat[i] = old
        gflat[i] = (up - down) / (2 * eps)
    return grad


def check_grad(fn, *arrays, seed=0, atol=1e-6, rtol=1e-4):
    """float64 gradcheck: autograd of ``sum(fn(*tensors) * r)`` against central differences."""
    rng = np.random.default_rng(seed)
    tensors = [et.tensor(a, dtype=et.float64, requires_grad=True) for a in arrays]
    out = fn(*tensors)
    weights = et.tensor(rng.standard_normal(tuple(out.shape)), dtype=et.float64)
    (out * weights).sum().backward()
    for t in tensors:
        def f():
            with et.no_grad():
                return float((fn(*tensors) * weights).sum().item())
        expected = numerical_grad(f, t.detach().numpy())
        np.testing.assert_allclose(t.grad.numpy(), expected, atol=atol, rtol=rtol)
