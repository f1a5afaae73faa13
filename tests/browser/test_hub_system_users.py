"""A class hub with an operating-system user per account (``./dev hub --system-users``):
what a student's own code can reach, and nbgrader's cycle between real users.

Needs root, as the option does: it creates the users ``PREFIXinstructor``,
``PREFIXstudent01`` and ``PREFIXstudent02`` (a random prefix no existing user has) and
removes them, with their homes, at the end (``userdel -r``); no other user is touched.
The class is prepared as ``./dev hub --system-users --dry-run`` prepares it, then the hub
is started on free ports (no browser: tests/browser/test_hub.py drives one).

* each server runs as its own user, in its private home (mode 700);
* code run in a student's kernel (what a student who wants to cheat runs) gets
  ``PermissionError`` on another student's notebook and home, the instructor's sources
  and gradebook, the exchange's list of submissions and another student's submitted
  notebook, and reaches its own files;
* the cycle: the instructor releases, one student submits every exercise answered,
  the other a blank notebook, and again, later, in the first one's name; the instructor
  collects (a submission counts as its owner's: teaching/hub/owned_collect.py),
  autogrades and returns feedback: 5/5, the feedback in the student's own home;
* preparing the class again (a restart) changes nothing of a student's work.

Where this environment's Python is closed to other users (this project's machines keep
the venv's interpreter under /root, mode 700), ``./dev hub --system-users`` runs the class
on its read-only copy in ``CLASS/python`` (``classhub.make_class_python``): the test checks
it said so and runs the hub on it.
"""
from __future__ import annotations

import ast
import json
import os
import pathlib
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest

if os.geteuid() != 0:
    pytest.skip("not root: ./dev hub --system-users creates operating-system users and starts each server "
                "as its user, which only root may do (class hub with system users skipped)", allow_module_level=True)

import test_hub  # noqa: E402  (tests/browser/test_hub.py: the Hub helper, kernels, answers; its skips)
from test_hub import NAME, Hub, answered, classhub, course, execute, gradebook_scores, hubapi, start_kernel  # noqa: E402

pytestmark = test_hub.pytestmark
STUDENTS = 2


def unused_prefix():
    """``et1a2b3c-``: a prefix no user of this machine has, so the test's users are its own."""
    while True:
        prefix = f"et{secrets.token_hex(3)}-"
        if not any(entry.pw_name.startswith(prefix) for entry in pwd.getpwall()):
            return prefix


PREFIX = unused_prefix()
INSTRUCTOR = classhub.instructor_name(PREFIX)
RIGHT, BLANK = classhub.student_names(STUDENTS, PREFIX)
USERS = [INSTRUCTOR, RIGHT, BLANK]


def remove_users(users):
    """Stop what the test's users still run (by process id), then ``userdel -r`` them (home included)."""
    uids = set()
    for user in users:
        try:
            uids.add(pwd.getpwnam(user).pw_uid)
        except KeyError:
            pass
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid in uids:
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass
    for user in users:
        subprocess.run(["userdel", "-r", user], capture_output=True)
    left = [user for user in users if user in {entry.pw_name for entry in pwd.getpwall()}]
    assert not left, f"users not removed: {left}"


def prepare(hub):
    """``./dev hub --system-users --dry-run`` for this class: users, homes, exchange, course."""
    result = subprocess.run([sys.executable, str(classhub.HUB / "classhub.py"), "--system-users", "--user-prefix",
                             PREFIX, "--students", str(STUDENTS), "--folder", str(hub.folder), "--dry-run"],
                            capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def hub():
    root = pathlib.Path(tempfile.mkdtemp(prefix="edutorch-hub-"))  # pytest's own is closed to other users
    root.chmod(0o755)
    hub = None
    try:
        hub = Hub(root / "class", classhub.free_port(), STUDENTS, mem_limit=test_hub.MEM_LIMIT, prefix=PREFIX,
                  system_users=True)
        printed = prepare(hub)
        # the Python the class runs on: this one, or (closed to other users) CLASS/python, which ./dev hub made
        hub.python, hub.environment = classhub.class_python(hub.folder)
        assert (hub.python != sys.executable) == (f"the class runs on {hub.python}" in printed), printed
        hub.accounts = classhub.read_accounts(hub.folder)
        hub.start()
        yield hub
    finally:
        if hub is not None and hub.process is not None and hub.process.poll() is None:
            hub.stop()
        remove_users(USERS)
        shutil.rmtree(root, ignore_errors=True)


def server_owners(hub):
    """``{user whose home the server runs in: the user the process runs as}``."""
    owners = {}
    for pid in test_hub.list_class_servers(hub):
        home = pathlib.Path(os.readlink(f"/proc/{pid}/cwd"))
        owners[home.name] = pwd.getpwuid(os.stat(f"/proc/{pid}").st_uid).pw_name
    return owners


def run_in_kernel(hub, user, code):
    """Run ``code`` in a new kernel of ``user``'s server (as a cell of theirs); what it prints."""
    kernel = start_kernel(hub, user)
    hubapi.wait_for_idle_kernel(hub, user, kernel)
    status, text = execute(hub, user, kernel, code)
    assert status == "ok", text
    hub.server(user, "DELETE", f"api/kernels/{kernel}")
    return text


def attempts(hub, user, paths):
    """Run, in a kernel of ``user``'s server, an attempt on each of ``paths`` (``{what: (how, path)}``,
    how: read, list or append); ``{what: "allowed" | the error's name}``."""
    code = f"""
import os
def attempt(how, path):
    try:
        if how == "read":
            open(path).read()
        elif how == "list":
            os.listdir(path)
        else:
            open(path, "a").close()
    except OSError as error:
        return type(error).__name__
    return "allowed"
print({{what: attempt(how, path) for what, (how, path) in {json.dumps({k: (h, str(p)) for k, (h, p) in paths.items()})}.items()}})
"""
    return ast.literal_eval(run_in_kernel(hub, user, code).strip())


def test_the_cycle_between_real_users_and_what_a_students_code_cannot_reach(hub):
    for user in USERS:
        hub.ensure_server(user)
    assert server_owners(hub) == {user: user for user in USERS}, "each server runs as its own user"
    for user in USERS:
        home = hub.home(user).stat()
        assert (pwd.getpwuid(home.st_uid).pw_name, home.st_mode & 0o777) == (user, 0o700)

    # release; one student submits every exercise answered, the other a blank notebook
    hub.formgrader(f"assignment/{NAME}/assign")
    hub.formgrader(f"assignment/{NAME}/release")
    exchange = hub.folder / "exchange" / course.COURSE_ID
    modes = {name: (pwd.getpwuid((exchange / name).stat().st_uid).pw_name, (exchange / name).stat().st_mode & 0o777)
             for name in ("outbound", "inbound", "feedback")}
    assert modes == {"outbound": (INSTRUCTOR, 0o755), "inbound": (INSTRUCTOR, 0o733), "feedback": (INSTRUCTOR, 0o711)}
    notebook = f"{NAME}/{NAME}.ipynb"
    for user in (RIGHT, BLANK):
        hub.nbgrader_student(user, "fetch")
    response = hub.server(RIGHT, "PUT", f"api/contents/{notebook}",
                          json={"type": "notebook", "content": answered(hub.home(RIGHT) / notebook)})
    assert response.ok, response.text[:1000]
    assert pwd.getpwuid((hub.home(RIGHT) / notebook).stat().st_uid).pw_name == RIGHT
    for user in (RIGHT, BLANK):
        hub.nbgrader_student(user, "submit")
    submitted = {path.name.split("+")[0]: path for path in (exchange / "inbound").iterdir()}

    # the blank student's code tries the others' files
    source = classhub.course_folder(hub.folder, INSTRUCTOR) / "source" / NAME
    tried = attempts(hub, BLANK, {
        "own notebook": ("read", hub.home(BLANK) / notebook),
        "another's notebook": ("read", hub.home(RIGHT) / notebook),
        "another's home": ("list", hub.home(RIGHT)),
        "the instructor's sources": ("list", source),
        "a worked answer": ("read", source / f"{NAME}.ipynb"),
        "the gradebook": ("read", classhub.course_folder(hub.folder, INSTRUCTOR) / "gradebook.db"),
        "the submissions": ("list", exchange / "inbound"),
        "another's submission": ("append", submitted[RIGHT] / f"{NAME}.ipynb"),
        "the class's passwords": ("read", hub.folder / "accounts.csv"),
    })
    assert tried == {what: "allowed" if what == "own notebook" else "PermissionError" for what in tried}, tried
    # ... and hands in their blank notebook in the other's name, later than the other's: the
    # inbound folder lets anyone write (it must), but the submission counts as its owner's
    forged = exchange / "inbound" / f"{RIGHT}+{NAME}+2099-01-01 00:00:00.000000 UTC+forged"
    run_in_kernel(hub, BLANK, f"import shutil; shutil.copytree({str(submitted[BLANK])!r}, {str(forged)!r}); "
                              f"open({str(forged / 'timestamp.txt')!r}, 'w').write({forged.name.split('+')[2]!r})")

    # preparing the class again (what a restart of ./dev hub does) leaves the students' work as it is
    before = {user: (hub.home(user) / notebook).read_bytes() for user in (RIGHT, BLANK)}
    prepare(hub)
    assert {user: (hub.home(user) / notebook).read_bytes() for user in (RIGHT, BLANK)} == before
    assert server_owners(hub) == {user: user for user in USERS}

    # collect (the forged folder counts as its owner's), autograde, feedback: full marks, so
    # the notebook graded is the one the student handed in, not the blank one in their name
    hub.formgrader(f"assignment/{NAME}/collect")
    assert f"named after {RIGHT} but owned by {BLANK}" in (hub.folder / "hub" / "hub.log").read_text()
    collected = classhub.course_folder(hub.folder, INSTRUCTOR) / "submitted"
    assert (collected / BLANK / NAME / "timestamp.txt").read_text() == forged.name.split("+")[2]
    hub.formgrader(f"submission/{NAME}/{RIGHT}/autograde")
    hub.formgrader(f"assignment/{NAME}/generate_feedback")
    hub.formgrader(f"assignment/{NAME}/release_feedback")
    scores, _ = gradebook_scores(classhub.course_folder(hub.folder, INSTRUCTOR))
    assert sum(v for (s, _), v in scores.items() if s == RIGHT) == 5
    hub.nbgrader_student(RIGHT, "fetch_feedback")
    pages = list((hub.home(RIGHT) / NAME / "feedback").glob(f"*/{NAME}.html"))
    assert len(pages) == 1 and "Score: 5.0 / 5.0" in pages[0].read_text(encoding="utf-8")
    assert pwd.getpwuid(pages[0].stat().st_uid).pw_name == RIGHT
