"""PyTorch's torch.func tutorials (tests/func/tutorials.py) under edutorch, and against PyTorch.

Without torch the tutorials' own asserts run (vmap/grad results against hand
loops); with torch every printed or asserted tensor is compared.  The
per-sample-gradient tutorial runs 8 of its 64 samples (64 take half a minute
on one core, per sample in both libraries' loops).
"""
import numpy as np
import pytest

import edutorch
import tutorials

RNG = np.random.default_rng(0)
F32 = np.float32


def _normal(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(F32)


CNN_SHAPES = {"conv1.weight": (32, 1, 3, 3), "conv1.bias": (32,), "conv2.weight": (64, 32, 3, 3),
              "conv2.bias": (64,), "fc1.weight": (128, 9216), "fc1.bias": (128,), "fc2.weight": (10, 128),
              "fc2.bias": (10,)}
MLP_SHAPES = {"fc1.weight": (128, 784), "fc1.bias": (128,), "fc2.weight": (128, 128), "fc2.bias": (128,),
              "fc3.weight": (10, 128), "fc3.bias": (10,)}
PER_SAMPLE = {"data": _normal(8, 1, 28, 28), "targets": RNG.integers(0, 10, 8),
              "state": {k: _normal(*s, scale=0.05) for k, s in CNN_SHAPES.items()}}
ENSEMBLE = {"data": _normal(10, 64, 1, 28, 28),
            "states": [{k: _normal(*s, scale=0.05) for k, s in MLP_SHAPES.items()} for _ in range(10)]}
JACOBIANS = {"weight": _normal(16, 16), "bias": _normal(16), "x": _normal(16),
             "weight_h": _normal(32, 512), "bias_h": _normal(32), "x_h": _normal(512),
             "weight_b": _normal(33, 31), "bias_b": _normal(33), "x_b": _normal(64, 31)}
# Hessians by reverse over reverse cost a backward per entry: the tutorial's 32 x 512 x 512
# would take minutes here, so the Hessian part runs on 8 outputs of 12 inputs (and 8 samples).
SMALL = {"hessian_sizes": (12, 8), "batch_size": 8}


def run(module, tutorial, inputs, **kwargs):
    with tutorials.imported_as_torch(module):
        return tutorial(module, inputs, **kwargs)


def as_numpy(tree):
    if isinstance(tree, (tuple, list)):
        return [as_numpy(t) for t in tree]
    if isinstance(tree, dict):
        return [as_numpy(t) for t in tree.values()]
    return tree.detach().numpy() if hasattr(tree, "detach") else tree


def assert_close_trees(mine, theirs, rtol, atol):
    if isinstance(theirs, list):
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            assert_close_trees(a, b, rtol, atol)
    elif isinstance(theirs, np.ndarray):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=atol)
    else:
        assert mine == theirs


CASES = {
    "per_sample_grads": (tutorials.per_sample_grads, PER_SAMPLE, {"batch_size": 8}),
    "ensembling": (tutorials.ensembling, ENSEMBLE, {}),
    "jacobians_hessians": (tutorials.jacobians_hessians, JACOBIANS, SMALL),
}


@pytest.mark.parametrize("name", CASES)
def test_tutorial_runs_with_its_own_asserts(name):
    tutorial, inputs, kwargs = CASES[name]
    run(edutorch, tutorial, inputs, **kwargs)


@pytest.mark.parametrize("name", CASES)
def test_tutorial_numbers_equal_pytorch(real_torch, name):
    tutorial, inputs, kwargs = CASES[name]
    mine = as_numpy(run(edutorch, tutorial, inputs, **kwargs))
    theirs = as_numpy(run(real_torch, tutorial, inputs, **kwargs))
    assert_close_trees(mine, theirs, rtol=1e-4, atol=1e-5)  # float32, other summation orders
