"""Graphs are freed after backward: no reference cycles, flat memory over a training loop."""
import gc
import tracemalloc
import weakref

import numpy as np

import edutorch as et


def test_graph_is_freed_by_reference_counting_alone():
    """Saved outputs are stored without their grad_fn, so node and tensor form no cycle."""
    gc.disable()
    try:
        x = et.tensor([0.5, -0.5], requires_grad=True)
        y = x.tanh().exp().sigmoid()  # each of these saves its output
        node = weakref.ref(y.grad_fn)
        first = weakref.ref(y.grad_fn.next_functions[0][0])
        loss = y.sum()
        loss.backward()
        del y, loss
        assert node() is None and first() is None
    finally:
        gc.enable()


def test_retained_graph_is_freed_when_dropped():
    gc.disable()
    try:
        x = et.tensor([1.0, 2.0], requires_grad=True)
        loss = (x.exp() * x).sum()
        loss.backward(retain_graph=True)
        node = weakref.ref(loss.grad_fn)
        del loss
        assert node() is None
    finally:
        gc.enable()


def test_leaf_accumulate_node_does_not_keep_leaf_alive():
    x = et.tensor([1.0], requires_grad=True)
    (x * 2).sum().backward()
    ref = weakref.ref(x)
    del x
    gc.collect()
    assert ref() is None


def _train_step(params, x, y, lr=0.05):
    w1, b1, w2, b2 = params
    h = (x @ w1 + b1).tanh()
    out = h @ w2 + b2
    loss = ((out - y) ** 2).mean()
    loss.backward()
    with et.no_grad():
        for p in params:
            p.sub_(p.grad * lr)
            p.grad = None
    return loss


def test_memory_flat_over_a_training_loop():
    rng = np.random.default_rng(0)
    params = [
        et.tensor(rng.standard_normal((4, 16)) * 0.5, dtype=et.float32, requires_grad=True),
        et.zeros(16, requires_grad=True),
        et.tensor(rng.standard_normal((16, 1)) * 0.5, dtype=et.float32, requires_grad=True),
        et.zeros(1, requires_grad=True),
    ]
    x = et.tensor(rng.standard_normal((32, 4)), dtype=et.float32)
    y = (x.sum(1, keepdim=True) > 0).float()
    losses = []
    tracemalloc.start()
    try:
        for i in range(1000):
            losses.append(_train_step(params, x, y).item())
            if i == 99:
                gc.collect()
                at_100 = tracemalloc.get_traced_memory()[0]
        gc.collect()
        at_1000 = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert losses[-1] < losses[0]  # it really trained
    # ``losses`` grows by 900 floats (~30 kB with list slack); a leaked graph per step
    # would add far more (each step's graph holds several 32x16 arrays, ~2 kB each)
    assert at_1000 - at_100 < 64_000, (at_100, at_1000)
