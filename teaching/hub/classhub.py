"""A class on one server: JupyterHub with nbgrader's exchange (``./dev hub``).

One folder holds the whole class (default ``class/``, git-ignored)::

    CLASS/
        accounts.csv                   user,password for every account (mode 600): hand them out
        exchange/edutorch/             nbgrader's exchange: outbound/ (released lessons),
                                       inbound/ (submissions), feedback/
        home/instructor/course/        the nbgrader course folder (source/, release/, gradebook.db,
                                       submitted/, autograded/, feedback/, grades.csv)
        home/student01/ ...            each student's home: fetched lessons, their work
        hub/                           JupyterHub's database and cookie secret (the log: on screen)

The hub (``teaching/hub/jupyterhub_config.py``) gives each account its own
JupyterLab, started as a local process in that account's home
(``ClassSpawner``): the instructor's with nbgrader's formgrader, the students'
with only nbgrader's assignment list (fetch, submit, fetch feedback). Accounts
log in with their own password from ``accounts.csv`` (``ClassPasswordAuthenticator``),
a setup for a trial: every server runs as the one operating-system user that
started the hub (docs/teaching.md says what that does not protect).

Command line (what ``./dev hub`` calls)::

    python teaching/hub/classhub.py [--students N] [--port P] [--ip IP] [--folder CLASS]
                                    [--release NN,NN | all] [--mem-limit 2G] [--idle-timeout S] [--dry-run]
"""
from __future__ import annotations

import argparse
import csv
import hmac
import os
import resource
import secrets
import shutil
import socket
import sys
from pathlib import Path

HUB = Path(__file__).resolve().parent
TEACHING = HUB.parent
ROOT = TEACHING.parent
INSTRUCTOR = "instructor"
COURSE_ID = "edutorch"
# JupyterLab settings every account starts with: no news or update toasts in class
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        '{"fetchNews": "false", "checkForUpdates": false}',
}


def student_names(count):
    """``student01``, ``student02``, ...: the accounts of a class of ``count`` students."""
    return [f"student{i:02d}" for i in range(1, count + 1)]


# --- the class folder ---------------------------------------------------------------

def read_accounts(folder):
    """``{user: password}`` from ``folder/accounts.csv`` (empty when there is none)."""
    path = Path(folder) / "accounts.csv"
    if not path.exists():
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        return {row["user"]: row["password"] for row in csv.DictReader(f)}


def write_accounts(folder, students):
    """Give the instructor and every student a password (kept when they have one); return them all."""
    accounts = read_accounts(folder)
    for user in [INSTRUCTOR, *students]:
        accounts.setdefault(user, secrets.token_urlsafe(9))
    path = Path(folder) / "accounts.csv"
    path.touch(mode=0o600, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["user", "password"])
        writer.writerows(sorted(accounts.items()))
    return accounts


def prepare_homes(folder, users):
    """A home per account, with JupyterLab's class settings (no news toasts)."""
    for user in users:
        settings = Path(folder) / "home" / user / ".jupyter" / "lab" / "user-settings"
        for name, text in LAB_SETTINGS.items():
            path = settings / name
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)


def _course_module():
    sys.path.insert(0, str(TEACHING))
    import course

    return course


def course_folder(folder):
    return Path(folder) / "home" / INSTRUCTOR / "course"


def prepare_course(folder):
    """The instructor's nbgrader course: every lesson and its checks in ``source/`` (a lesson
    already there is left as it is: the instructor may have edited it)."""
    course = _course_module()
    root = course_folder(folder)
    for notebook in course.lesson_notebooks():
        source = root / "source" / notebook.stem
        if not (source / notebook.name).exists():
            source.mkdir(parents=True, exist_ok=True)
            shutil.copy(notebook, source / notebook.name)
            course.copy_checks(notebook, source / "checks")
    if not (root / "nbgrader_config.py").exists():
        (root / "nbgrader_config.py").write_text(course.CONFIG_FILE)
    return root


def instructor_api(folder):
    """nbgrader's API as the instructor: the course's settings and the class's exchange."""
    course = _course_module()
    course._nbgrader()
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    cfg = course.config(course_folder(folder))
    cfg.Exchange.root = str(Path(folder) / "exchange")
    return NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)


def release_to_exchange(folder, names):
    """The student versions of the lessons ``names`` (``./dev release``'s), then ``nbgrader
    release_assignment`` for each: students can fetch them."""
    api, succeed = instructor_api(folder), _course_module()._succeed
    for name in names:
        if not (course_folder(folder) / "release" / name / f"{name}.ipynb").exists():
            succeed(api.generate_assignment(name, force=True, create=True), f"generate_assignment {name}")
        succeed(api.release_assignment(name), f"release_assignment {name}")


def lessons_named(spec):
    """The lessons ``spec`` names: ``all``, or lesson numbers ``01,03``."""
    lessons = _course_module().lesson_notebooks()
    if spec == "all":
        return lessons
    wanted = {n.zfill(2) for n in spec.split(",") if n}
    chosen = [nb for nb in lessons if nb.name[:2] in wanted]
    if len(chosen) != len(wanted):
        raise SystemExit(f"--release {spec}: no lesson numbered {sorted(wanted - {nb.name[:2] for nb in chosen})}")
    return chosen


# --- JupyterHub's classes (used by jupyterhub_config.py) ------------------------------

def _authenticator_base():
    from jupyterhub.auth import Authenticator

    return Authenticator


def _spawner_base():
    from jupyterhub.spawner import SimpleLocalProcessSpawner

    return SimpleLocalProcessSpawner


class ClassPasswordAuthenticator(_authenticator_base()):
    """Each account logs in with its own password from ``CLASS/accounts.csv``.

    For a trial: passwords are stored in plain text. A class uses a real
    authenticator (GitHub, an LMS through LTI, JupyterHub's NativeAuthenticator:
    docs/teaching.md).
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.class_folder = os.environ["EDUTORCH_CLASS"]

    async def authenticate(self, handler, data):
        user, password = data.get("username", ""), data.get("password", "")
        known = read_accounts(self.class_folder).get(user)
        if known is not None and hmac.compare_digest(known.encode(), password.encode()):
            return user
        return None


class ClassSpawner(_spawner_base()):
    """A local JupyterLab per account, in ``CLASS/home/NAME``, as the hub's own OS user.

    * the instructor's server loads ``teaching/hub/instructor/`` (formgrader, the
      course's nbgrader settings), a student's ``teaching/hub/student/`` (only the
      assignment list; nbgrader knows the student by the hub's user name);
    * ``mem_limit`` caps the memory every process of the server (the server and
      each kernel) may allocate (``RLIMIT_DATA``): a kernel that fills memory gets
      ``MemoryError``, the other servers and the hub go on.
    """

    def make_preexec_fn(self, name):
        go_home = super().make_preexec_fn(name)
        limit = self.mem_limit

        def preexec():
            go_home()
            if limit:
                resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))

        return preexec

    def get_env(self):
        env = super().get_env()
        role = "instructor" if self.user.admin else "student"
        env["JUPYTER_CONFIG_PATH"] = str(HUB / role)
        return env


# --- starting the hub -------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proxy_command():
    """configurable-http-proxy: the project's copy (``./dev hub`` installs it), else the PATH's."""
    local = ROOT / ".hub" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
    if local.exists():
        return str(local)
    return shutil.which("configurable-http-proxy")


def hub_environment(folder, students, port, ip="127.0.0.1", mem_limit="2G", idle_timeout=3600, api_token=None):
    """The environment ``jupyterhub -f teaching/hub/jupyterhub_config.py`` reads its class from."""
    env = dict(os.environ)
    env.update(EDUTORCH_CLASS=str(Path(folder).resolve()), EDUTORCH_STUDENTS=str(students),
               EDUTORCH_HUB_IP=ip, EDUTORCH_HUB_PORT=str(port),
               EDUTORCH_HUB_INTERNAL_PORT=str(free_port()), EDUTORCH_PROXY_API_PORT=str(free_port()),
               EDUTORCH_MEM_LIMIT=str(mem_limit), EDUTORCH_IDLE_TIMEOUT=str(idle_timeout),
               EDUTORCH_PROXY=proxy_command() or "configurable-http-proxy")
    if api_token:
        env["EDUTORCH_HUB_API_TOKEN"] = api_token
    # the venv's scripts (jupyterhub-singleuser, nbgrader's alembic) come first
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def hub_command():
    return [sys.executable, "-m", "jupyterhub", "-f", str(HUB / "jupyterhub_config.py")]


def prepare(folder, students, release=()):
    """Everything on disk a class needs: accounts, homes, the course, released lessons."""
    folder = Path(folder).resolve()
    (folder / "hub").mkdir(parents=True, exist_ok=True)
    (folder / "exchange").mkdir(exist_ok=True)
    names = student_names(students)
    accounts = write_accounts(folder, names)
    prepare_homes(folder, [INSTRUCTOR, *names])
    prepare_course(folder)
    if release:
        release_to_exchange(folder, [nb.stem for nb in release])
    return accounts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=30, help="number of student accounts (default 30)")
    parser.add_argument("--port", type=int, default=8000, help="the hub's port (default 8000)")
    parser.add_argument("--ip", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)")
    parser.add_argument("--folder", default=str(ROOT / "class"), help="the class folder (default: class/)")
    parser.add_argument("--release", default="", help="lessons to release now: all, or numbers like 01,02")
    parser.add_argument("--mem-limit", default="2G", help="memory per server process (default 2G)")
    parser.add_argument("--idle-timeout", type=int, default=3600,
                        help="stop servers idle this many seconds (default 3600)")
    parser.add_argument("--dry-run", action="store_true", help="prepare the class folder, print the command")
    args = parser.parse_args(argv)
    if proxy_command() is None and not args.dry_run:
        sys.exit("configurable-http-proxy not found: npm install --prefix .hub/node configurable-http-proxy")
    release = lessons_named(args.release) if args.release else []
    accounts = prepare(args.folder, args.students, release)
    folder = Path(args.folder).resolve()
    print(f"class folder: {folder}")
    print(f"accounts and passwords: {folder / 'accounts.csv'} (instructor: {accounts[INSTRUCTOR]})")
    print(f"hub: http://{args.ip}:{args.port}/  (Ctrl-C stops it and every server)")
    env = hub_environment(folder, args.students, args.port, args.ip, args.mem_limit, args.idle_timeout)
    command = hub_command()
    if args.dry_run:
        print(f"(cd {folder / 'hub'} && {' '.join(command)})")
        return 0
    # this process becomes the hub: Ctrl-C reaches JupyterHub, which stops every server and the proxy
    os.chdir(folder / "hub")
    sys.stdout.flush()
    os.execve(command[0], command, env)


if __name__ == "__main__":
    sys.exit(main())
