"""A JupyterLab server on a free localhost port and a headless Chromium, for the browser test.

The server runs in a temporary copy of ``lessons/``, with the example notebooks
of ``examples/`` next to the lessons (so autosave never touches the committed
notebooks) with every Jupyter directory, and JupyterLab's user
settings, in a temporary folder. The server reads the learner's configuration of
``./dev lab`` (``teaching/jupyter/learner/``: no nbgrader interface, widget state
saved in the notebook), so the test sees what a learner sees. Both fixtures skip with a reason when
Chromium, playwright or JupyterLab is missing (README, "Running the tests").
"""
from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LESSONS = ROOT / "lessons"
EXAMPLES = ROOT / "examples"  # the widgets' example notebooks, served as examples/NAME
LEARNER_CONFIG = ROOT / "teaching" / "jupyter" / "learner"  # what `./dev lab` adds to the config path
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
# JupyterLab user settings: keep every cell in the DOM (no virtual scrolling), no news toasts
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False,
    },
}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_up(url, process, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url + "api/status", timeout=2) as response:
                if response.status == 200:
                    return True
        except OSError:
            time.sleep(0.25)
    return False


def _lab_environment(tmp):
    env = dict(os.environ)
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR",
                 "MPLCONFIGDIR", "JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR"):
        env[name] = str(tmp / name.lower())
        os.makedirs(env[name], exist_ok=True)
    for filename, settings in LAB_SETTINGS.items():
        path = pathlib.Path(env["JUPYTERLAB_SETTINGS_DIR"]) / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings))
    # the kernel shows figures inline, as in `./dev test`; one BLAS thread, as `dev` sets
    profile = pathlib.Path(env["IPYTHONDIR"]) / "profile_default"
    profile.mkdir(parents=True, exist_ok=True)
    (profile / "ipython_kernel_config.py").write_text('c.IPKernelApp.matplotlib = "inline"\n')
    env.pop("MPLBACKEND", None)
    env["JUPYTER_CONFIG_PATH"] = str(LEARNER_CONFIG)
    env.update(JUPYTER_PLATFORM_DIRS="1", PYTHONHASHSEED="0", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", PYDEVD_DISABLE_FILE_VALIDATION="1")
    return env


@contextlib.contextmanager
def serve_jupyterlab(root, tmp):
    """A JupyterLab server on ``root`` (its settings and logs in ``tmp``), as a learner's
    ``./dev lab`` configures it; yields its base URL and stops it on exit."""
    port = _free_port()
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
        "--IdentityProvider.token=", "--ServerApp.password=", "--ip", "127.0.0.1",
        "--port", str(port), "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}",
    ]
    log_path = pathlib.Path(tmp) / "jupyterlab.log"
    log = open(log_path, "w")
    process = subprocess.Popen(command, env=_lab_environment(pathlib.Path(tmp)), stdout=log,
                               stderr=subprocess.STDOUT, cwd=root)
    url = f"http://127.0.0.1:{port}/"
    try:
        if not _wait_until_up(url, process):
            raise RuntimeError("JupyterLab did not start:\n" + log_path.read_text()[-3000:])
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    """``(base_url, root)``: a running JupyterLab serving a copy of lessons/ (and of
    examples/ as its subfolder ``examples``)."""
    pytest.importorskip("jupyterlab", reason="JupyterLab not installed: browser test skipped")
    tmp = tmp_path_factory.mktemp("jupyterlab")
    root = tmp / "lessons"
    ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    shutil.copytree(LESSONS, root, ignore=ignore)
    shutil.copytree(EXAMPLES, root / "examples", ignore=ignore)
    with serve_jupyterlab(root, tmp) as url:
        yield url, root


@pytest.fixture(scope="module")
def browser(chromium_path):
    """A headless Chromium driven by playwright: Debian's, or playwright's download (see
    ``find_chromium`` in tests/conftest.py)."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright not installed: browser test skipped")
    executable = chromium_path
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()
