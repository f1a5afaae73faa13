"""Sizing a class: memory and CPU of a student's kernel running each lesson.

Runs each lesson (the complete version, every exercise answered: the most a
student's kernel does) top to bottom in a fresh kernel of this environment, as a
student's Run All does, sampling the kernel's resident memory every 50 ms:

* idle: the kernel's memory after start, before any cell (a lesson opened, nothing run);
* after: the memory once the lesson ran (what a student keeps while reading on);
* peak: the highest sample while it ran;
* CPU: the kernel's CPU seconds (user + system) for the whole lesson.

A student's JupyterLab server adds its own memory (printed from one started here).
docs/teaching.md (Sizing) holds the numbers and what they mean for a class.

    python teaching/hub/measure.py [NN ...]      # default: every lesson
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import psutil
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ROOT / "lessons"
MB = 2**20


def kernel_tree(pid):
    """The kernel process and its children (a lesson may start worker processes)."""
    process = psutil.Process(pid)
    return [process, *process.children(recursive=True)]


def resident(pid):
    total = 0
    for process in kernel_tree(pid):
        try:
            total += process.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def cpu(pid):
    process = psutil.Process(pid)
    times = process.cpu_times()
    return times.user + times.system + times.children_user + times.children_system


def measure_lesson(path):
    """``{idle, after, peak, cpu}`` of a kernel running the lesson at ``path`` (bytes, seconds)."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(LESSONS)}})
    result, done = {}, threading.Event()
    with client.setup_kernel():
        pid = client.km.provisioner.process.pid
        time.sleep(1.0)  # the kernel finished starting
        result["idle"], start_cpu = resident(pid), cpu(pid)
        peak = [result["idle"]]

        def sample():
            while not done.is_set():
                peak[0] = max(peak[0], resident(pid))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.monotonic()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        result["wall"] = time.monotonic() - started
        done.set()
        sampler.join()
        result["after"], result["cpu"] = resident(pid), cpu(pid) - start_cpu
        result["peak"] = max(peak[0], result["after"])
    return result


def measure_server():
    """Resident memory of an idle JupyterLab server with this environment's extensions."""
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, JUPYTER_RUNTIME_DIR=folder)
        server = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", "--port=0",
                                   "--ServerApp.port_retries=50", f"--ServerApp.root_dir={folder}",
                                   "--allow-root", "--IdentityProvider.token=x"],
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            while not list(Path(folder).glob("jpserver-*.json")) and time.monotonic() < deadline:
                time.sleep(0.5)
            time.sleep(2)
            return resident(server.pid), cpu(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=30)


def main(argv=None):
    wanted = set(argv if argv is not None else sys.argv[1:])
    lessons = [p for p in sorted(LESSONS.glob("[0-9][0-9]-*.ipynb")) if not wanted or p.name[:2] in wanted]
    memory, start = measure_server()
    print(f"JupyterLab server, idle: {memory / MB:.0f} MB resident, {start:.1f} CPU s to start")
    print("| lesson | kernel idle (MB) | after the lesson (MB) | peak (MB) | CPU (s) | wall (s) |")
    print("|---|---|---|---|---|---|")
    for path in lessons:
        r = measure_lesson(path)
        print(f"| {path.stem} | {r['idle'] / MB:.0f} | {r['after'] / MB:.0f} | {r['peak'] / MB:.0f} "
              f"| {r['cpu']:.1f} | {r['wall']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
