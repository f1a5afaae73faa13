"""Fixtures for the widget tests: small edutorch models and a matching real-torch twin.

pytest puts ``tests/`` on ``sys.path`` (rootdir conftest), where this folder,
``tests/widgets``, looks like a namespace package called ``widgets`` that would
shadow the real ``widgets`` package (the editable install's finder runs after
the path finder). Putting the repository root first makes ``import widgets``
find the real package, whatever the order of collection.
"""
import sys
from pathlib import Path

REPO_ROOT = str(Path(__file__).resolve().parents[2])
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)
if getattr(sys.modules.get("widgets"), "__file__", "") is None:  # a namespace imported earlier
    del sys.modules["widgets"]

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import edutorch as et  # noqa: E402
import edutorch.nn as nn  # noqa: E402

from widget_helpers import mlp  # noqa: E402


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
