"""A running class hub, driven as a script drives one: JupyterHub's REST API with an
admin token, each server's REST API with its user's token, and kernels through their
websocket, as JupyterLab talks to them.

``teaching/hub/measure.py --hub`` times a class with it, and the hub tests
(tests/browser/test_hub*.py) drive theirs with it. Needs ``requests`` (JupyterHub's)
and ``websocket-client`` (Jupyter Server's), both there wherever the ``hub`` extra is.
"""
from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import requests
import websocket

import classhub  # teaching/hub/classhub.py (this folder is on sys.path: the caller put it there)

POLL = 0.2  # seconds between two looks at something that is not there yet


def wait_until(condition, timeout, failure):
    """Ask ``condition()`` every ``POLL`` seconds until it is true (return its value);
    after ``timeout`` seconds fail with ``AssertionError(failure())``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(failure())
        time.sleep(POLL)


def cpu_seconds(processes):
    """CPU time (user + system) the ``processes`` (psutil's) spent so far, with their children
    that ended (a live child counts when it is in ``processes``); gone ones count 0."""
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


class RunningHub:
    """A class hub started as ``./dev hub`` starts it: its URL, the class folder, the
    accounts, an admin API token.

    ``options`` go to ``classhub.hub_environment`` (``prefix``, ``system_users``,
    ``mem_limit``); the hub runs on the interpreter ``python`` (default: this one) with
    ``environment`` added to its own (``LD_LIBRARY_PATH``, which JupyterHub passes on to
    the servers). Its log, with its servers' and their kernels', is ``CLASS/hub/hub.log``."""

    def __init__(self, folder, port, students, python=sys.executable, environment=None, **options):
        self.folder, self.port, self.students, self.python, self.options = Path(folder), port, students, python, options
        self.environment = environment or {}
        self.instructor = classhub.instructor_name(options.get("prefix", ""))
        self.url = f"http://127.0.0.1:{port}/"
        self.token = secrets.token_hex(16)
        self.accounts = classhub.read_accounts(folder)
        self.process = None
        self._tokens = {}

    def start(self, timeout=180):
        """Start the hub; return the seconds until its API answered."""
        env = classhub.hub_environment(self.folder, self.students, self.port, api_token=self.token, **self.options)
        env["PATH"] = os.pathsep.join([str(Path(self.python).parent), env["PATH"]])
        env.update(self.environment)
        self.log = open(self.folder / "hub" / "hub.log", "a")
        started = time.monotonic()
        self.process = subprocess.Popen([self.python, *classhub.hub_command()[1:]], env=env, cwd=self.folder / "hub",
                                        stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(self._answers, timeout, lambda: "the hub did not answer:\n" + self.log_tail())
        return time.monotonic() - started

    def _answers(self):
        assert self.process.poll() is None, "the hub exited:\n" + self.log_tail()
        try:
            return requests.get(self.url + "hub/api/", timeout=2).ok
        except requests.ConnectionError:
            return False

    def stop(self):
        """Ctrl-C: the hub stops every server and its proxy."""
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()

    def log_tail(self):
        return (self.folder / "hub" / "hub.log").read_text()[-4000:]

    def hub_processes(self):
        """The hub and what it started itself (the proxy, the idle culler), not the servers."""
        hub = psutil.Process(self.process.pid)
        return [hub, *(p for p in hub.children() if not self._is_server(p))]

    @staticmethod
    def _is_server(process):
        try:
            return classhub.server_command()[1] in process.cmdline()
        except psutil.NoSuchProcess:
            return True  # gone: counts for nothing either way

    def user_processes(self, user):
        """``user``'s server and its kernels: the processes working in ``user``'s home."""
        home = str(self.home(user))
        found = []
        for process in psutil.Process(self.process.pid).children(recursive=True):
            try:
                if process.cwd() == home:
                    found.append(process)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        return found

    def home(self, user):
        return self.folder / "home" / user

    def api(self, method, path, **kwargs):
        response = requests.request(method, self.url + "hub/api/" + path, timeout=30,
                                    headers={"Authorization": f"token {self.token}"}, **kwargs)
        response.raise_for_status()
        return response.json() if response.content else None

    def ready(self, user):
        return self.api("GET", f"users/{user}")["servers"].get("", {}).get("ready")

    def ensure_server(self, user, timeout=120):
        """Start ``user``'s server when it is not running; wait until it answers."""
        if not self.ready(user):
            requests.post(self.url + f"hub/api/users/{user}/server", timeout=60,
                          headers={"Authorization": f"token {self.token}"})
        wait_until(lambda: self.ready(user), timeout, lambda: f"{user}'s server did not start:\n" + self.log_tail())

    def user_token(self, user):
        if user not in self._tokens:
            self._tokens[user] = self.api("POST", f"users/{user}/tokens", json={"expires_in": 3600})["token"]
        return self._tokens[user]

    def server(self, user, method, path, as_user=None, **kwargs):
        """A request to ``user``'s server, with ``as_user``'s token (default: the user's own)."""
        token = self.user_token(as_user or user)
        return requests.request(method, self.url + f"user/{user}/{path}", timeout=120, allow_redirects=False,
                                headers={"Authorization": f"token {token}"}, **kwargs)


# --- kernels, as JupyterLab talks to them ----------------------------------------------------

def start_kernel(hub, user):
    """A new kernel in ``user``'s server (what opening a notebook starts); its id."""
    response = hub.server(user, "POST", "api/kernels", json={"name": "python3"})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def ask(hub, user, kernel, msg_type, content, timeout=60):
    """Send a request (``execute_request``, ``kernel_info_request``) to a kernel through the
    hub (the kernel's websocket) and wait for its reply and the idle status that follows
    the request (they come on two channels, in either order). Returns ``(status, text)``:
    the reply's status and what the request printed; or ``"restarting"``/``"dead"`` (the
    server says the kernel died), ``"closed"``, ``"timeout"``."""
    url = hub.url.replace("http", "ws") + f"user/{user}/api/kernels/{kernel}/channels"
    ws = websocket.create_connection(url, header=[f"Authorization: token {hub.user_token(user)}"], timeout=timeout)
    msg_id = uuid.uuid4().hex
    ws.send(json.dumps({
        "header": {"msg_id": msg_id, "username": user, "session": uuid.uuid4().hex, "msg_type": msg_type,
                   "version": "5.3"},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [], "content": content,
    }))
    text, status, idle = [], None, False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            # short reads: the server's websocket pings (every 30 s) would keep one long read alive forever
            ws.settimeout(min(5.0, max(0.1, deadline - time.monotonic())))
            try:
                msg = json.loads(ws.recv())
            except websocket.WebSocketTimeoutException:
                continue  # nothing for a few seconds: look at the deadline again
            except websocket.WebSocketConnectionClosedException:
                return "closed", "".join(text)
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content["execution_state"] in ("restarting", "dead"):
                return content["execution_state"], "".join(text)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if kind == "stream":
                text.append(content["text"])
            elif kind in ("execute_result", "display_data"):
                text.append(content["data"].get("text/plain", ""))
            elif kind == "error":
                text.append(f"{content['ename']}: {content['evalue']}")
            elif kind == msg_type.replace("_request", "_reply"):
                status = content["status"]
            elif kind == "status" and content["execution_state"] == "idle":
                idle = True
            if status and idle:
                return status, "".join(text)
    except websocket.WebSocketTimeoutException:
        return "timeout", "".join(text)
    finally:
        ws.close()
    return "timeout", "".join(text)


def execute(hub, user, kernel, code, timeout=60):
    """Run ``code`` in a kernel, as a cell: ``(status, what it printed)``."""
    return ask(hub, user, kernel, "execute_request", {
        "code": code, "silent": False, "store_history": False, "user_expressions": {},
        "allow_stdin": False, "stop_on_error": True}, timeout)


def wait_for_idle_kernel(hub, user, kernel, timeout=60):
    """What JupyterLab does with a new kernel before it shows "Idle": ask for its info until
    it answers (a request that comes before the kernel listens may be lost: ask again)."""
    wait_until(lambda: ask(hub, user, kernel, "kernel_info_request", {}, timeout=5)[0] == "ok", timeout,
               lambda: f"{user}'s kernel {kernel} never answered:\n" + hub.log_tail())
