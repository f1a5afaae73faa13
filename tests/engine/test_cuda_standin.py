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
