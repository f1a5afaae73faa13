"""Helpers for the nn.Module tests.

Test files import nothing from here (pytest provides the fixtures).
Many tests here are *parity* scenarios: a function ``scenario(lib)`` that
builds modules with ``lib`` (edutorch or real torch, used exactly the same way)
and returns what it observed (names, reprs, error messages...).  ``parity``
runs it under both libraries and asserts the observations are equal.
"""
import numpy as np
import pytest

import edutorch as et

TORCH_REASON = "real PyTorch not installed: parity test skipped"


@pytest.fixture
def parity():
    """``parity(scenario)``: run ``scenario(lib)`` with edutorch and torch; they must agree."""
    torch = pytest.importorskip("torch", reason=TORCH_REASON)

    def check(scenario):
        ours, theirs = scenario(et), scenario(torch)
        assert ours == theirs
        return ours

    return check


@pytest.fixture
def numerical_grad():
    """``numerical_grad(f, x)``: central-difference gradient of scalar ``f`` at float64 array ``x``."""
    return _numerical_grad


def _numerical_grad(f, x, eps=1e-6):
    """Central-difference gradient of the scalar ``f(x)`` w.r.t. the float64 array ``x``."""
    grad = np.zeros_like(x)
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        hi = f(x)
        flat[i] = old - eps
        lo = f(x)
        flat[i] = old
        gflat[i] = (hi - lo) / (2 * eps)
    return grad
