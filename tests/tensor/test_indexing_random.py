"""Random index expressions against torch: values, gradients and ``x[idx] = v``.

Integers, slices with steps, negative positions, index tensors, ``None``,
``...`` and boolean masks, mixed at random over 1-D to 3-D tensors.  The
expressions where PyTorch and NumPy disagree are the mixed ones: PyTorch
applies integers before index tensors (``x[0, :, [1, 2]]`` has shape (1, 3)
in PyTorch, (3, 1) in NumPy); edutorch must follow PyTorch everywhere.
"""
import random

import numpy as np
import pytest

import edutorch as et


def _random_index(shape, lib, r):
    if r.random() < 0.1:
        return lib.tensor(np.random.default_rng(r.randint(0, 99)).random(shape) > 0.5)
    parts = []
    for d in range(r.randint(1, len(shape))):
        n, c = shape[d], r.random()
        if c < 0.25:
            parts.append(r.randint(-n, n - 1))
        elif c < 0.5:
            parts.append(slice(r.randint(-n, n), r.randint(-n, n), r.choice([1, 1, 2, 3])))
        elif c < 0.65:
            parts.append(slice(None))
        elif c < 0.8:
            parts.append(lib.tensor([r.randint(-n, n - 1) for _ in range(r.randint(1, 3))]))
        elif c < 0.9:
            parts.append(None)
        else:
            parts.append(Ellipsis if Ellipsis not in parts else slice(None))
    return tuple(parts)


def _run(lib, shape, x0, seed):
    r = random.Random(seed)
    try:
        x = lib.tensor(x0, requires_grad=True)
        idx = _random_index(shape, lib, r)
        y = (x * 1)[idx]
        (y * lib.tensor(np.arange(1.0, y.numel() + 1).reshape(tuple(y.shape)))).sum().backward()
        a = lib.tensor(x0.copy())
        a[idx] = 0.5
        return tuple(y.shape), y.detach().numpy(), x.grad.numpy(), a.numpy()
    except (IndexError, RuntimeError, ValueError) as err:
        return type(err).__name__


@pytest.mark.parametrize("block", range(4))
def test_random_index_expressions_match_torch(block):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    rng = random.Random(block)
    for _ in range(150):
        shape = rng.choice([(4,), (3, 4), (2, 3, 4), (5, 2)])
        x0 = np.random.default_rng(rng.randint(0, 10**6)).standard_normal(shape)
        seed = rng.randint(0, 10**6)
        theirs, mine = _run(torch, shape, x0, seed), _run(et, shape, x0, seed)
        assert type(mine) is type(theirs), (shape, seed, mine if isinstance(mine, str) else theirs)
        if isinstance(mine, str):
            assert mine == theirs, (shape, seed)
            continue
        assert mine[0] == theirs[0], (shape, seed)
        for a, b in zip(mine[1:], theirs[1:]):
            np.testing.assert_allclose(a, b, err_msg=str((shape, seed)))


def test_integer_then_index_tensor_follows_pytorch_order():
    x = et.arange(24.0).reshape(2, 3, 4)
    assert x[1, 0:2, [0]].shape == (2, 1)          # NumPy would give (1, 2)
    assert x[-2, :, [-4, 1]].tolist() == [[0.0, 1.0], [4.0, 5.0], [8.0, 9.0]]
    x[0, :, [1]] = -1.0
    assert x[0, :, 1].tolist() == [-1.0, -1.0, -1.0]
