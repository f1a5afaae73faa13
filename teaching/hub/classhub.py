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
        python/                        --system-users, when this environment's Python is closed to
                                       other users: the same Python, hard links, read-only to them

The hub (``teaching/hub/jupyterhub_config.py``) gives each account its own
JupyterLab, started as a local process in that account's home: the
instructor's with nbgrader's formgrader, the students' with only nbgrader's
assignment list (fetch, submit, fetch feedback). Accounts log in with their own
password from ``accounts.csv`` (``ClassPasswordAuthenticator``). Two ways to run
the servers (docs/teaching.md says what each protects):

* by default every server runs as the one operating-system user that started
  the hub (``ClassSpawner``): for a trial;
* with ``--system-users`` (the hub run as root) every account is an
  operating-system user of its own, with a private home (mode 700), and its
  server runs as that user (``SystemUserSpawner``, JupyterHub's
  ``LocalProcessSpawner``); nbgrader's exchange has nbgrader's permissions. Where this
  environment's Python is in a folder other users cannot enter (a venv of a Python
  under /root), the class runs on ``CLASS/python`` (``make_class_python``).
  ``--user-prefix P`` names the accounts (and users) ``Pinstructor``, ``Pstudent01``, ...

Command line (what ``./dev hub`` calls)::

    python teaching/hub/classhub.py [--students N] [--port P] [--ip IP] [--folder CLASS]
                                    [--release NN,NN | all] [--mem-limit 2G] [--idle-timeout S]
                                    [--system-users] [--user-prefix P] [--dry-run]
"""
from __future__ import annotations

import argparse
import csv
import hmac
import os
import pwd
import resource
import secrets
import shutil
import socket
import subprocess
import sys
import sysconfig
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


def student_names(count, prefix=""):
    """``student01``, ``student02``, ...: the accounts of a class of ``count`` students."""
    return [f"{prefix}student{i:02d}" for i in range(1, count + 1)]


def instructor_name(prefix=""):
    """``instructor`` (``--user-prefix P``: ``Pinstructor``): the instructor's account, a JupyterHub admin."""
    return prefix + INSTRUCTOR


# --- the class folder ---------------------------------------------------------------

def read_accounts(folder):
    """``{user: password}`` from ``folder/accounts.csv`` (empty when there is none)."""
    path = Path(folder) / "accounts.csv"
    if not path.exists():
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        return {row["user"]: row["password"] for row in csv.DictReader(f)}


def write_accounts(folder, users):
    """Give every account a password (kept when it has one); return them all."""
    accounts = read_accounts(folder)
    for user in users:
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


def course_module():
    sys.path.insert(0, str(TEACHING))
    import course

    return course


def course_folder(folder, instructor=INSTRUCTOR):
    return Path(folder) / "home" / instructor / "course"


def prepare_course(folder, instructor=INSTRUCTOR):
    """The instructor's nbgrader course: every lesson and its checks in ``source/`` (a lesson
    already there is left as it is: the instructor may have edited it)."""
    course = course_module()
    root = course_folder(folder, instructor)
    for notebook in course.lesson_notebooks():
        source = root / "source" / notebook.stem
        if not (source / notebook.name).exists():
            source.mkdir(parents=True, exist_ok=True)
            shutil.copy(notebook, source / notebook.name)
            course.copy_checks(notebook, source / "checks")
    if not (root / "nbgrader_config.py").exists():
        (root / "nbgrader_config.py").write_text(course.CONFIG_FILE)
    return root


def instructor_api(folder, instructor=INSTRUCTOR):
    """nbgrader's API as the instructor: the course's settings and the class's exchange."""
    course = course_module()
    course._nbgrader()
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    cfg = course.config(course_folder(folder, instructor))
    cfg.Exchange.root = str(Path(folder) / "exchange")
    return NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)


def release_to_exchange(folder, names, instructor=INSTRUCTOR):
    """The student versions of the lessons ``names`` (``./dev release``'s), then ``nbgrader
    release_assignment`` for each: students can fetch them."""
    api, succeed = instructor_api(folder, instructor), course_module()._succeed
    for name in names:
        if not (course_folder(folder, instructor) / "release" / name / f"{name}.ipynb").exists():
            succeed(api.generate_assignment(name, force=True, create=True), f"generate_assignment {name}")
        succeed(api.release_assignment(name), f"release_assignment {name}")


def lessons_named(spec):
    """The lessons ``spec`` names: ``all``, or lesson numbers ``01,03``."""
    lessons = course_module().lesson_notebooks()
    if spec == "all":
        return lessons
    wanted = {n.zfill(2) for n in spec.split(",") if n}
    chosen = [nb for nb in lessons if nb.name[:2] in wanted]
    if len(chosen) != len(wanted):
        raise SystemExit(f"--release {spec}: no lesson numbered {sorted(wanted - {nb.name[:2] for nb in chosen})}")
    return chosen


# --- an operating-system user per account (--system-users) -------------------------------

# nbgrader's exchange between real users, as nbgrader's own release sets it up: the course's
# folders are the instructor's; outbound/ readable by all, inbound/ writable but not
# listable (set-group-id: a submission gets the instructor's group), feedback/ reachable
# only by a file name one knows (nbgrader names each page by a hash of the submission)
EXCHANGE_MODES = {"": 0o755, "outbound": 0o755, "inbound": 0o2733, "feedback": 0o711}


def prepare_system_users(folder, users, release=(), prefix=""):
    """``--system-users``: an OS user per account (``users[0]``: the instructor) with a
    private home, nbgrader's exchange with nbgrader's permissions, and the course prepared
    (and ``release`` released) by the instructor's own user. A home that exists is left
    as it is (a restart keeps every file); only a new, empty one gets the class settings."""
    (folder / "home").mkdir(exist_ok=True)
    for path, mode in ((folder, 0o711), (folder / "home", 0o711), (folder / "hub", 0o700)):
        os.chmod(path, mode)  # every user passes through to their home; only root lists them
    entries = {}
    for user in users:
        home = folder / "home" / user
        entries[user], new = system_user(user, home)
        if new:
            prepare_homes(folder, [user])
            give(home, entries[user])
    prepare_exchange(folder, entries[users[0]])
    numbers = ",".join(nb.name[:2] for nb in release)
    run_as(entries[users[0]], [sys.executable, str(Path(__file__).resolve()), "--instructor-part",
                               "--folder", str(folder), "--user-prefix", prefix, "--release", numbers])


def closed_to_others(path):
    """The first folder on the way to ``path`` (links followed) that other users may not
    pass (no ``o+x``), or None: their servers need this Python and teaching/hub/."""
    real = Path(os.path.realpath(path))
    return next((folder for folder in reversed(real.parents) if not folder.stat().st_mode & 0o001), None)


def class_python(folder):
    """``(python, environment)``: the interpreter every server of a ``--system-users`` class
    runs on. This one where every user may run it; else (a venv made from a Python under
    ``/root``, mode 700, as on this project's machines) the copy ``make_class_python``
    puts in ``CLASS/python``, and the ``LD_LIBRARY_PATH`` that finds its libpython."""
    if closed_to_others(sys.executable) is None:
        return sys.executable, {}
    copy = Path(folder) / "python"
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return str(copy / "bin" / version), {"LD_LIBRARY_PATH": str(copy / "lib")}


def make_class_python(folder):
    """``CLASS/python``: this environment's Python where every user may run it, read-only.

    The base interpreter and its standard library, hard links to the very files (nothing
    duplicated; copies where the class is on another file system), without the base's own
    site-packages: in its place a ``.pth`` line adds this environment's site-packages (so
    every package installed here, edutorch included, is there); this environment's Jupyter
    folders (kernels, extensions) and its ``alembic`` (nbgrader runs it). Owned by root, like
    the originals: a student may run and read it, not change it. Made again when the base
    interpreter changed (a running class keeps the one it has)."""
    base, copy = Path(sys.base_prefix), Path(folder) / "python"
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    python, pth = copy / "bin" / version, f"import site; site.addsitedir({sysconfig.get_path('purelib')!r})\n"
    if python.exists() and same_file(python, base / "bin" / version) and \
            (copy / "lib" / version / "site-packages" / "edutorch-class.pth").read_text() == pth:
        return class_python(folder)
    shutil.rmtree(copy, ignore_errors=True)
    (copy / "bin").mkdir(parents=True)
    copy.chmod(0o755)

    def link(source, target):
        try:
            os.link(source, target)
        except OSError:  # another file system
            shutil.copy2(source, target)

    link(base / "bin" / version, copy / "bin" / version)
    shutil.copytree(base / "lib", copy / "lib", copy_function=link,
                    ignore=lambda path, names: ["site-packages"] if path == str(base / "lib" / version) else [])
    site = copy / "lib" / version / "site-packages"
    site.mkdir()
    (site / "edutorch-class.pth").write_text(pth)
    for shared in ("etc/jupyter", "share/jupyter"):
        (copy / shared).parent.mkdir(parents=True, exist_ok=True)
        (copy / shared).symlink_to(Path(sys.prefix) / shared)
    script = (Path(sys.prefix) / "bin" / "alembic").read_text().split("\n", 1)[1]
    (copy / "bin" / "alembic").write_text(f"#!{copy / 'bin' / version}\n{script}")
    (copy / "bin" / "alembic").chmod(0o755)
    return class_python(folder)


def same_file(a, b):
    """``a`` is ``b`` (a hard link) or a copy of it (``shutil.copy2`` keeps the time)."""
    a, b = a.stat(), b.stat()
    return (a.st_size, a.st_mtime) == (b.st_size, b.st_mtime)


def open_to_everyone(folder):
    """What a ``--system-users`` class needs every user to reach, or SystemExit saying what is closed:
    the class folder (their homes), teaching/hub/, this environment's packages."""
    for needed, what in ((Path(folder), "the class folder"), (HUB, "the repository"),
                         (Path(sysconfig.get_path("purelib")), "the environment's packages")):
        closed = closed_to_others(needed)
        if closed is not None:
            sys.exit(f"--system-users: other users cannot pass {closed} to reach {needed} ({what}), which their "
                     f"servers need: give it o+x (chmod o+x {closed}), or keep {what} elsewhere")


def system_user(name, home):
    """The OS user ``name`` (its ``pwd`` entry), made with ``useradd`` when missing, and
    whether its home ``home`` (mode 700) is new. An existing user must have that home, and
    an existing home must be the user's: the class never takes over an account that lives
    elsewhere, nor hands over files it did not make."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        entry = None
    if entry is not None and Path(entry.pw_dir) != home:
        raise SystemExit(f"the user {name} exists with the home {entry.pw_dir}, not {home}: "
                         "choose another --user-prefix")
    new = not home.exists()
    if not new and (entry is None or home.lstat().st_uid != entry.pw_uid):
        raise SystemExit(f"{home} is not {name}'s (a class prepared without --system-users?): "
                         "choose another --folder, or give every home to its user (chown -R)")
    if entry is None:
        subprocess.run(["useradd", "--home-dir", str(home), "--no-create-home", "--shell", "/bin/bash",
                        "--user-group", name], check=True)
        entry = pwd.getpwnam(name)
    if new:
        home.mkdir()
        os.chown(home, entry.pw_uid, entry.pw_gid)
    os.chmod(home, 0o700)
    return entry, new


def give(path, entry):
    """``path`` and what is under it to the user ``entry`` (a link itself, never its target)."""
    for folder, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            os.chown(os.path.join(folder, name), entry.pw_uid, entry.pw_gid, follow_symlinks=False)
    os.chown(path, entry.pw_uid, entry.pw_gid, follow_symlinks=False)


def prepare_exchange(folder, instructor):
    """The exchange's root open to every user, as nbgrader asks (mode 777, plus the sticky
    bit of /tmp: no one renames or removes another's folder), the course's folders made
    the instructor's (``EXCHANGE_MODES``) before any student could take their names."""
    root = folder / "exchange"
    os.chmod(root, 0o1777)
    for name, mode in EXCHANGE_MODES.items():
        path = root / COURSE_ID / name
        if not path.exists():
            path.mkdir()
            os.chown(path, instructor.pw_uid, instructor.pw_gid)
            os.chmod(path, mode)
        elif path.lstat().st_uid != instructor.pw_uid:
            raise SystemExit(f"{path} is not {instructor.pw_name}'s: nbgrader's exchange must be the instructor's")


def run_as(entry, command):
    """Run ``command`` as the OS user ``entry``, in its home (JupyterHub's own way of
    becoming a user: ``set_user_setuid``); fail when it fails."""
    from jupyterhub.spawner import set_user_setuid

    env = dict(os.environ, HOME=entry.pw_dir, USER=entry.pw_name, LOGNAME=entry.pw_name)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    subprocess.run(command, env=env, preexec_fn=set_user_setuid(entry.pw_name), check=True)


# --- JupyterHub's classes (used by jupyterhub_config.py) ------------------------------

def _authenticator_base():
    from jupyterhub.auth import Authenticator

    return Authenticator


def _spawner_bases():
    from jupyterhub.spawner import LocalProcessSpawner, SimpleLocalProcessSpawner

    return LocalProcessSpawner, SimpleLocalProcessSpawner


LocalProcessSpawner, SimpleLocalProcessSpawner = _spawner_bases()


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


class ClassServer:
    """What every server of the class gets, whichever spawner starts it.

    * the instructor's server loads ``teaching/hub/instructor/`` (formgrader, the
      course's nbgrader settings), a student's ``teaching/hub/student/`` (only the
      assignment list; nbgrader knows the student by the hub's user name);
    * ``mem_limit`` caps the memory every process of the server (the server and
      each kernel) may allocate (``RLIMIT_DATA``): a kernel that fills memory gets
      ``MemoryError``, the other servers and the hub go on.
    """

    def make_preexec_fn(self, name):
        become_user = super().make_preexec_fn(name)  # the spawner's own: its user, its home
        limit = self.mem_limit

        def preexec():
            become_user()
            if limit:
                resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))

        return preexec

    def get_env(self):
        env = super().get_env()
        role = "instructor" if self.user.admin else "student"
        env["JUPYTER_CONFIG_PATH"] = str(HUB / role)
        return env


class ClassSpawner(ClassServer, SimpleLocalProcessSpawner):
    """A local JupyterLab per account, in ``CLASS/home/NAME``, as the hub's own OS user
    (a trial: code a student runs can read whatever that user can)."""


class SystemUserSpawner(ClassServer, LocalProcessSpawner):
    """A local JupyterLab per account, run as the account's own OS user in its private
    home (JupyterHub's ``LocalProcessSpawner``: the server process takes the user's
    uid, gid and groups before it starts; ``--system-users`` made the users)."""


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


def hub_environment(folder, students, port, ip="127.0.0.1", mem_limit="2G", idle_timeout=3600, api_token=None,
                    prefix="", system_users=False):
    """The environment ``jupyterhub -f teaching/hub/jupyterhub_config.py`` reads its class from."""
    env = dict(os.environ)
    env.update(EDUTORCH_CLASS=str(Path(folder).resolve()), EDUTORCH_STUDENTS=str(students),
               EDUTORCH_USER_PREFIX=prefix, EDUTORCH_SYSTEM_USERS="1" if system_users else "",
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
    """JupyterHub with the class's configuration (``launch.py``: a faster start)."""
    return [sys.executable, str(HUB / "launch.py"), "hub", "-f", str(HUB / "jupyterhub_config.py")]


def server_command():
    """An account's server, ``jupyterhub-singleuser`` (``launch.py``: a faster start)."""
    return [sys.executable, str(HUB / "launch.py"), "server"]


def prepare(folder, students, release=(), prefix="", system_users=False):
    """Everything on disk a class needs: accounts, homes, the course, released lessons
    (with ``system_users``: an operating-system user per account, ``prepare_system_users``)."""
    folder = Path(folder).resolve()
    (folder / "hub").mkdir(parents=True, exist_ok=True)
    (folder / "exchange").mkdir(exist_ok=True)
    instructor = instructor_name(prefix)
    users = [instructor, *student_names(students, prefix)]
    accounts = write_accounts(folder, users)
    if system_users:
        prepare_system_users(folder, users, release, prefix)
    else:
        prepare_homes(folder, users)
        prepare_instructor(folder, instructor, release)
    return accounts


def prepare_instructor(folder, instructor, release=()):
    """The course in the instructor's home, and the lessons ``release`` released."""
    prepare_course(folder, instructor)
    if release:
        release_to_exchange(folder, [nb.stem for nb in release], instructor)


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
    parser.add_argument("--system-users", action="store_true",
                        help="an operating-system user per account, each server run as its user (needs root)")
    parser.add_argument("--user-prefix", default="", help="account (and user) names start with this (default: none)")
    parser.add_argument("--dry-run", action="store_true", help="prepare the class folder, print the command")
    # what --system-users runs as the instructor's user: the course and the released lessons
    parser.add_argument("--instructor-part", action="store_true", help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    release = lessons_named(args.release) if args.release else []
    folder = Path(args.folder).resolve()
    if args.instructor_part:
        prepare_instructor(folder, instructor_name(args.user_prefix), release)
        return 0
    if proxy_command() is None and not args.dry_run:
        sys.exit("configurable-http-proxy not found: npm install --prefix .hub/node configurable-http-proxy")
    if args.system_users and os.geteuid() != 0:
        sys.exit("--system-users needs root: it creates the users and starts each server as its user")
    if args.system_users:
        folder.mkdir(parents=True, exist_ok=True)
        open_to_everyone(folder)
        if closed_to_others(sys.executable) is not None:  # a Python no student may run: run on CLASS/python
            python, environment = make_class_python(folder)
            print(f"{sys.executable} is closed to other users: the class runs on {python} "
                  f"(the same Python and packages, where every user may run it)")
            sys.stdout.flush()
            os.execve(python, [python, __file__, *argv], {**os.environ, **environment})
    accounts = prepare(folder, args.students, release, args.user_prefix, args.system_users)
    instructor = instructor_name(args.user_prefix)
    print(f"class folder: {folder}")
    print(f"accounts and passwords: {folder / 'accounts.csv'} ({instructor}: {accounts[instructor]})")
    print(f"hub: http://{args.ip}:{args.port}/  (Ctrl-C stops it and every server)")
    env = hub_environment(folder, args.students, args.port, args.ip, args.mem_limit, args.idle_timeout,
                          prefix=args.user_prefix, system_users=args.system_users)
    command = hub_command()
    if args.dry_run:
        libraries = f"LD_LIBRARY_PATH={env['LD_LIBRARY_PATH']} " if env.get("LD_LIBRARY_PATH") else ""
        print(f"(cd {folder / 'hub'} && {libraries}{' '.join(command)})")
        return 0
    # this process becomes the hub: Ctrl-C reaches JupyterHub, which stops every server and the proxy
    os.chdir(folder / "hub")
    sys.stdout.flush()
    os.execve(command[0], command, env)


if __name__ == "__main__":
    sys.exit(main())
