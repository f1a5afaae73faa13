"""Shared pytest configuration for edutorch's tests.

Kept small on purpose; subdirectories (tests/nn/, tests/widgets/, ...) add their
own conftest.py. Where a test goes: tests/README.md. Nothing here imports edutorch at import time, so collection
still works (and reports a clear error per test) while the engine is incomplete.

Fixtures
--------
real_torch   the real PyTorch module, or the test is skipped with a reason
fake_cuda    device="cuda" backed by tests/fake_cupy.py (fails where real CuPy would)
rng          a fresh, seeded ``np.random.Generator`` per test
(autouse)    every test starts with the global NumPy / ``random`` RNGs seeded
op_case      (parametrized) each entry of OP_CASES in tests/op_cases.py
compare_case (parametrized) each entry of COMPARE_CASES in tests/op_cases.py

Markers (declared in pyproject.toml)
------------------------------------
parity       skipped automatically when PyTorch is not installed
browser      skipped automatically when /usr/bin/chromium or playwright is absent
gpu          skipped automatically when CuPy or a CUDA device is absent
"""

from __future__ import annotations

import glob
import importlib.util
import os
import random
import shutil
import sys

import numpy as np
import pytest

TORCH_VERSION = "2.13.0"
TORCH_SKIP_REASON = (
    "real PyTorch not installed: parity test skipped (its CPU build: pip install "
    f"--index-url https://download.pytorch.org/whl/cpu torch=={TORCH_VERSION})"
)
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_SKIP_REASON = (
    "Chromium not found (/usr/bin/chromium, chromium on PATH, $EDUTORCH_CHROMIUM or "
    "playwright's download): browser test skipped (Debian: apt-get install -y chromium; "
    "elsewhere: python -m playwright install --with-deps chromium)"
)
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


def find_chromium():
    """A real Chromium to drive with playwright, or None.

    In order: ``$EDUTORCH_CHROMIUM``; Debian's ``/usr/bin/chromium``; ``chromium``
    on the PATH; the Chromium that ``python -m playwright install chromium``
    downloads (``~/.cache/ms-playwright``, or ``$PLAYWRIGHT_BROWSERS_PATH``: how
    the GitHub Actions workflow gets one, since Ubuntu's apt ``chromium`` is only
    a stub that installs a snap). Snap wrappers are skipped: they do not start
    in a headless CI container.
    """
    candidates = [os.environ.get("EDUTORCH_CHROMIUM"), CHROMIUM, shutil.which("chromium")]
    base = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or os.path.expanduser("~/.cache/ms-playwright")
    candidates += sorted(glob.glob(os.path.join(base, "chromium-*", "chrome-linux*", "chrome")),
                         reverse=True)
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK) \
                and "/snap/" not in os.path.realpath(path):
            return path
    return None


@pytest.fixture(scope="session")
def chromium_path():
    """The Chromium executable for the browser test (skips with a reason when there is none)."""
    path = find_chromium()
    if path is None:
        pytest.skip(CHROMIUM_SKIP_REASON)
    return path


def pytest_runtest_setup(item):
    if item.get_closest_marker("parity") and not _has_module("torch"):
        pytest.skip(TORCH_SKIP_REASON)
    if item.get_closest_marker("browser"):
        if find_chromium() is None:
            pytest.skip(CHROMIUM_SKIP_REASON)
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


# --- skips: one line per reason ---------------------------------------------------------
def skip_summary(reports):
    """``[(count, reason)]`` for skipped test reports, most frequent reason first."""
    counts = {}
    for report in reports:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        counts[reason] = counts.get(reason, 0) + 1
    return sorted(((n, reason) for reason, n in counts.items()), key=lambda item: (-item[0], item[1]))


def pytest_terminal_summary(terminalreporter):
    """Summarise skipped tests as one line per reason (with how to enable them).

    ``-ra`` would print one SKIPPED line per test: ~110 lines when PyTorch is
    absent. pyproject's addopts use ``-rfEX`` instead (failures, errors, xpasses),
    and this prints the skips grouped; ``-rs`` still lists them one by one.
    """
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if r.when in ("setup", "call")]
    if not skipped or "s" in (terminalreporter.config.option.reportchars or "").replace("a", "s"):
        return
    terminalreporter.section("skipped tests, by reason", sep="-")
    for count, reason in skip_summary(skipped):
        terminalreporter.line(f"{count:4d} skipped: {reason}")


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

    chromium = find_chromium() or "no (browser test skips)"
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


def pytest_generate_tests(metafunc):
    """Fan a test that asks for ``op_case`` or ``compare_case`` out over the op table (tests/op_cases.py)."""
    if not {"op_case", "compare_case"} & set(metafunc.fixturenames):
        return
    from op_cases import COMPARE_CASES, OP_CASES  # tests/ is on sys.path (this file's folder)

    if "op_case" in metafunc.fixturenames:
        metafunc.parametrize("op_case", OP_CASES, ids=[c.id for c in OP_CASES])
    if "compare_case" in metafunc.fixturenames:
        metafunc.parametrize("compare_case", COMPARE_CASES, ids=[c.id for c in COMPARE_CASES])


# The files that take minutes each (a class graded by nbgrader, a real JupyterHub or JupyterLab
# driven by Chromium, Run All of every released lesson), slowest first.  A full `./dev test`
# hands whole files to the pytest-xdist workers in collection order (`--dist loadfile
# --no-loadscope-reorder`), so these start at once, one per worker, and the many quick files
# fill the gaps; xdist's default order (most tests first) started them last, on one worker.
SLOW_FILES_FIRST = (
    "tests/lessons/test_nbgrader.py",
    "tests/browser/test_hub.py",
    "tests/browser/test_hub_system_users.py",
    "tests/lessons/test_run_all.py",
    "tests/browser/test_jupyterlab.py",
    "tests/browser/test_released_lesson.py",
    "tests/test_docs.py",
    "tests/teaching/test_learner_lab.py",
)


def pytest_collection_modifyitems(config, items):
    rank = {path: i for i, path in enumerate(SLOW_FILES_FIRST)}
    root = str(config.rootpath) + os.sep
    items.sort(key=lambda item: rank.get(str(item.path).removeprefix(root), len(rank)))  # a stable sort
