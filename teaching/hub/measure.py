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

``--hub`` measures instead the two limits of a class hub (docs/teaching.md, "The limits,
as measured"), ``--times`` times over, each on a new class of ``--students`` accounts:

* hub up: ``./dev hub``'s preparation of the class folder (its ``--dry-run``), then from
  starting JupyterHub (as ``./dev hub`` does) to its API answering;
* a student's first lesson open: from asking for their server (the hub's spawn) to the
  server answering, then to a new kernel answering its ``kernel_info_request`` (what
  JupyterLab waits for before it shows the kernel "Idle"); the browser's own drawing of
  JupyterLab is not in it (tests/browser/test_hub.py times that too, with Chromium).

Each with its wall seconds, the CPU seconds of the processes concerned (the hub and its
proxy; the student's server and kernel), which other jobs on the machine do not change,
and the load average (1 minute) when it was taken: the wall time of a loaded machine
says more about the other jobs than about the hub.

    python teaching/hub/measure.py [NN ...]                   # default: every lesson
    python teaching/hub/measure.py --hub [--times 3] [--students 30]
"""
from __future__ import annotations

import argparse
import os
import resource
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


def measure_hub(students):
    """``{prepare, prepare_cpu, hub, hub_cpu, server, kernel, student_cpu, load}`` of a new class (seconds)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import classhub
    import hubapi

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder) / "class"
        # what ./dev hub does before JupyterHub starts (accounts, homes, the course): its --dry-run
        started, children = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, str(Path(classhub.__file__)), "--students", str(students),
                        "--folder", str(folder), "--dry-run"], check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = {"prepare": time.monotonic() - started,
                  "prepare_cpu": after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime}
        hub = hubapi.RunningHub(folder, classhub.free_port(), students)
        try:
            result.update(hub=hub.start(), hub_cpu=hubapi.cpu_seconds(hub.hub_processes()))
            result["load"] = os.getloadavg()[0]
            student = classhub.student_names(1)[0]
            started = time.monotonic()
            hub.ensure_server(student)
            result["server"] = time.monotonic() - started
            hubapi.wait_for_idle_kernel(hub, student, hubapi.start_kernel(hub, student))
            result["kernel"] = time.monotonic() - started - result["server"]
            result["student_cpu"] = hubapi.cpu_seconds(hub.user_processes(student))
            result["load"] = max(result["load"], os.getloadavg()[0])
        finally:
            if hub.process is not None:
                hub.stop()
    return result


def main_hub(times, students):
    print(f"| class of {students} prepared (s) | CPU (s) | hub up (s) | CPU (s) | a student's server up (s) "
          "| then its kernel idle (s) | spawn to kernel idle (s) | CPU (s) | load (1 min) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for _ in range(times):
        r = measure_hub(students)
        print(f"| {r['prepare']:.1f} | {r['prepare_cpu']:.1f} | {r['hub']:.1f} | {r['hub_cpu']:.1f} "
              f"| {r['server']:.1f} | {r['kernel']:.1f} | {r['server'] + r['kernel']:.1f} | {r['student_cpu']:.1f} "
              f"| {r['load']:.1f} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", help="lesson numbers (default: every lesson)")
    parser.add_argument("--hub", action="store_true", help="the hub's limits instead: hub up, first lesson open")
    parser.add_argument("--times", type=int, default=3, help="--hub: how many classes to measure (default 3)")
    parser.add_argument("--students", type=int, default=30, help="--hub: accounts per class (default 30)")
    args = parser.parse_args(argv)
    if args.hub:
        return main_hub(args.times, args.students)
    wanted = set(args.lessons)
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
