"""Shared pytest configuration for edutorch's tests.

Kept small on purpose; subdirectories (tests/engine/, tests/nn/, ...) add their
own conftest.py. Nothing here imports edutorch at import time, so collection
still works (and reports a clear error per test) while the engine is incomplete.

Fixtures
--------
real_torch   the real PyTorch module, or the test is skipped with a reason
fake_cuda    device="cuda" backed by tests/fake_cupy.py (fails where real CuPy would)
rng          a fresh, seeded ``np.random.Generator`` per test
(autouse)    every test starts with the global NumPy / ``random`` RNGs seeded

Markers (declared in pyproject.toml)
------------------------------------
parity       skipped automatically when PyTorch is not installed
browser      skipped automatically when /usr/bin/chromium or playwright is absent
gpu          skipped automatically when CuPy or a CUDA device is absent
"""

from __future__ import annotations

import importlib.util
import os
import random
import shutil
import sys

import numpy as np
import pytest

TORCH_VERSION = "2.13.0"
TORCH_SKIP_REASON = (
    f"real PyTorch not installed: parity test skipped (pip install torch=={TORCH_VERSION})"
)
CHROMIUM = "/usr/bin/chromium"
SEED = 0

# --- Hypothesis: no wall-clock deadlines on slow/shared 2-core machines ----------
try:
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "dev", deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    # CI: same examples every run, so a red build is reproducible.
    settings.register_profile(
        "ci",
        deadline=None,
        derandomize=True,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.load_profile("ci" if os.environ.get("CI") else "dev")
except ImportError:  # hypothesis is in the [test] extra
    pass


# --- real PyTorch -------------------------------------------------------------------
def require_torch():
    """Return the real ``torch`` module, or skip the calling test with a reason."""
    return pytest.importorskip("torch", reason=TORCH_SKIP_REASON)


@pytest.fixture(scope="session")
def real_torch():
    """The real PyTorch module (for parity tests); skips when it is not installed."""
    torch = require_torch()
    torch.manual_seed(SEED)
    return torch


def _has_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _cuda_available() -> bool:
    if not _has_module("cupy"):
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def pytest_runtest_setup(item):
    if item.get_closest_marker("parity") and not _has_module("torch"):
        pytest.skip(TORCH_SKIP_REASON)
    if item.get_closest_marker("browser"):
        if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
            pytest.skip(
                "Chromium not found at /usr/bin/chromium: browser test skipped "
                "(apt-get install -y chromium)"
            )
        if not _has_module("playwright"):
            pytest.skip("playwright not installed: browser test skipped (pip install -e .[test])")
    if item.get_closest_marker("gpu") and not _cuda_available():
        pytest.skip("CuPy or a CUDA device not available: GPU test skipped (pip install -e .[gpu])")


# --- determinism ----------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _seed_global_rngs():
    """Seed Python's and NumPy's global RNGs (and edutorch's, when loaded) per test."""
    random.seed(SEED)
    np.random.seed(SEED)
    edutorch = sys.modules.get("edutorch")
    manual_seed = getattr(edutorch, "manual_seed", None)
    if callable(manual_seed):
        manual_seed(SEED)
    yield


@pytest.fixture
def rng():
    """A fresh NumPy Generator with a fixed seed."""
    return np.random.default_rng(SEED)


# --- header -----------------------------------------------------------------------------
def pytest_report_header(config):
    def version(name):
        if not _has_module(name):
            return "not installed"
        try:
            from importlib.metadata import version as v

            return v(name)
        except Exception:
            return "installed"

    chromium = "yes" if os.path.exists(CHROMIUM) else "no (browser test skips)"
    return [
        f"edutorch: numpy {np.__version__}, torch {version('torch')}, "
        f"cupy {version('cupy')}, chromium {chromium}",
    ]


@pytest.fixture
def fake_cuda(monkeypatch):
    """Run ``device="cuda"`` on the CuPy stand-in of ``tests/fake_cupy.py``: no GPU needed.

    The stand-in refuses implicit conversion to NumPy and NumPy arrays mixed into
    device computations, as real CuPy does, so a CPU-only call in a CUDA path fails.
    """
    import fake_cupy
    from edutorch import backend

    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    monkeypatch.setattr(backend, "_cupy", fake_cupy)
    return fake_cupy
