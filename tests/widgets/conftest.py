"""Fixtures for the widget tests: small edutorch models and a matching real-torch twin.

(``import widgets`` finds the real package, not this folder: pyproject.toml
puts the repository root on ``sys.path`` for pytest.)
"""
import numpy as np
import pytest

import edutorch as et
import edutorch.nn as nn

from widget_helpers import mlp


@pytest.fixture
def small_mlp():
    et.manual_seed(0)
    return mlp(nn)


@pytest.fixture
def eval_batch():
    """``(x, y)`` for the small MLP: 32 samples, 4 classes."""
    rng = np.random.default_rng(1)
    x = et.tensor(rng.standard_normal((32, 20)).astype(np.float32))
    y = et.tensor(rng.integers(0, 4, size=32))
    return x, y
