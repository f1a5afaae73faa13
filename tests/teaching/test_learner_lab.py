"""`./dev lab` opens the learner's own copy of the lessons (teaching/learner.py).

Blank exercises (nbgrader's student versions) in a folder made on first run and
never overwritten; `./dev reset-lesson NN` keeps a backup; `./dev lab --solutions`
shows the sources read-only; no nbgrader menus or panels in a learner's lab.
"""
import asyncio
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "teaching"))
import learner  # noqa: E402  (teaching/learner.py)

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
LEARNER_CONFIG = ROOT / "teaching" / "jupyter" / "learner"
NBGRADER_REASON = "nbgrader not installed: the learner's blank copies are not tested (pip install -e \".[class]\")"


def cells(path):
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))["cells"]


def answer_cells(path):
    """``{grade_id: source}`` of the answer cells (nbgrader "solution" cells) of a notebook."""
    return {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in cells(path)
            if c.get("metadata", {}).get("nbgrader", {}).get("solution")}


def solution_lines(text):
    """The worked-answer lines of an answer cell (between nbgrader's solution markers)."""
    lines, inside = [], False
    for line in text.splitlines():
        if BEGIN in line or END in line:
            inside = BEGIN in line
        elif inside and line.strip():
            lines.append(line.strip())
    return lines


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """A small course (lessons 01 and 03 and the checks they import) and its learner's copy, made once."""
    pytest.importorskip("nbgrader", reason=NBGRADER_REASON)
    root = tmp_path_factory.mktemp("course")
    folder = root / "lessons"
    folder.mkdir()
    for name in ("01-tensors-and-autograd.ipynb", "03-hooks.ipynb"):
        shutil.copy(ROOT / "lessons" / name, folder / name)
    for checks in (ROOT / "lessons").glob("checks*"):
        if checks.is_dir():
            shutil.copytree(checks, folder / checks.name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(checks, folder / checks.name)
    added = learner.sync(root / "my-lessons", folder)
    return root, added


@pytest.fixture
def made(released, tmp_path):
    """A fresh copy of the small course and of the learner's folder: (lessons, my-lessons, added)."""
    root, added = released
    shutil.copytree(root, tmp_path, dirs_exist_ok=True)
    return tmp_path / "lessons", tmp_path / "my-lessons", added


@pytest.mark.slow
def test_first_run_makes_blank_copies_with_the_checks(made):
    lessons, target, added = made
    assert sorted(p.name for p in added) == ["01-tensors-and-autograd.ipynb", "03-hooks.ipynb"]
    assert sorted(p.name for p in target.glob("*.ipynb")) == [p.name for p in learner.lesson_sources(lessons)]
    for source in learner.lesson_sources(lessons):
        blank, worked = answer_cells(target / source.name), answer_cells(source)
        assert worked and blank.keys() == worked.keys(), source.name
        for grade_id, answer in worked.items():
            given = answer.split(BEGIN)[0]  # code before the markers stays for the learner
            leaked = [line for line in solution_lines(answer) if line in blank[grade_id] and line not in given]
            assert not leaked, f"{source.name} {grade_id}: the worked answer is in the learner's copy: {leaked}"
            assert "# YOUR CODE HERE" in blank[grade_id]
        assert BEGIN not in (target / source.name).read_text(encoding="utf-8")
        outputs = json.dumps([c.get("outputs", []) for c in cells(target / source.name)], ensure_ascii=False)
        assert "✓ correct" not in outputs, "the worked answers' results are cleared"
    for checks in lessons.glob("checks*"):
        assert (target / checks.name).exists(), "the lessons import `checks`: it must be next to them"


@pytest.mark.slow
def test_later_runs_keep_the_learners_work_and_reset_keeps_a_backup(made):
    """A second sync changes nothing; `reset 03` backs up the learner's 03 and makes a blank
    one (the same path as a lesson added to the course later); the edited 01 is left alone."""
    lessons, target, _ = made
    mine = target / "01-tensors-and-autograd.ipynb"
    nb = json.loads(mine.read_text(encoding="utf-8"))
    nb["cells"][0]["source"] = ["my own notes"]
    mine.write_text(json.dumps(nb), encoding="utf-8")
    edited = mine.read_text(encoding="utf-8")
    assert learner.sync(target, lessons) == []
    hooks = target / "03-hooks.ipynb"
    hooks.write_text('{"my": "work"}', encoding="utf-8")
    backup = learner.reset("03", target, lessons, now=0)
    assert backup.parent == target / ".backup"
    assert backup.name == f"03-hooks-{time.strftime('%Y%m%d-%H%M%S', time.localtime(0))}.ipynb"
    assert backup.read_text(encoding="utf-8") == '{"my": "work"}'
    assert "# YOUR CODE HERE" in hooks.read_text(encoding="utf-8")
    assert mine.read_text(encoding="utf-8") == edited
    assert learner.find_lesson("3", target) == hooks
    with pytest.raises(SystemExit, match="no lesson 07"):
        learner.reset("07", target, lessons)


@pytest.mark.slow
def test_checks_follow_the_lessons_a_module_or_a_package(made):
    lessons, target, _ = made
    for old in lessons.glob("checks*"):
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    (lessons / "checks").mkdir()
    (lessons / "checks" / "__init__.py").write_text("VERSION = 2\n")
    learner.sync(target, lessons)
    assert (target / "checks" / "__init__.py").read_text() == "VERSION = 2\n"
    assert not (target / "checks.py").exists(), "a stale checks.py would shadow nothing but confuse"


def test_solutions_are_read_only_even_for_root(tmp_path):
    pytest.importorskip("jupyter_server", reason="JupyterLab not installed (pip install -e .[lab])")
    from tornado.web import HTTPError

    import read_only_contents

    shutil.copy(ROOT / "lessons" / "03-hooks.ipynb", tmp_path)
    before = (tmp_path / "03-hooks.ipynb").read_bytes()
    manager = read_only_contents.ReadOnlyContentsManager(root_dir=str(tmp_path))

    async def attempt():
        model = await manager.get("03-hooks.ipynb")
        assert model["writable"] is False
        for change in (manager.save(model, "03-hooks.ipynb"), manager.rename("03-hooks.ipynb", "x.ipynb"),
                       manager.delete("03-hooks.ipynb"), manager.create_checkpoint("03-hooks.ipynb"),
                       manager.new(path="")):
            with pytest.raises(HTTPError) as refused:
                await change
            assert refused.value.status_code == 403

    asyncio.run(attempt())
    assert (tmp_path / "03-hooks.ipynb").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["03-hooks.ipynb"]


def test_learner_config_disables_every_nbgrader_extension():
    """Every nbgrader server extension the environment enables is switched off, and its lab extension."""
    pytest.importorskip("jupyter_server", reason="JupyterLab not installed (pip install -e .[lab])")
    from jupyter_core.paths import jupyter_config_path
    from jupyter_server.extension.config import ExtensionConfigManager

    enabled = ExtensionConfigManager(read_config_path=jupyter_config_path()).get_jpserver_extensions()
    off = json.loads((LEARNER_CONFIG / "jupyter_server_config.json").read_text())["ServerApp"]["jpserver_extensions"]
    assert off and not any(off.values())
    assert {name for name in enabled if name.startswith("nbgrader")} <= set(off)
    page = json.loads((LEARNER_CONFIG / "labconfig" / "page_config.json").read_text())
    assert page["disabledExtensions"] == {"@jupyter/nbgrader": True}


def dev_env():
    """`./dev` run with this interpreter's environment, when it is one `./dev` installed (never pip here)."""
    venv = pathlib.Path(sys.prefix)
    if not list(venv.glob(".edutorch-installed-*")):
        pytest.skip("not running in a virtual environment made by ./dev (VENV): ./dev lab not started")
    return dict(os.environ, VENV=str(venv))


def test_dev_lab_dry_run_prints_each_mode(tmp_path):
    env = dev_env()
    out = {}
    for mode in ("--solutions", "--author"):
        run = subprocess.run([str(ROOT / "dev"), "lab", mode, "--dry-run", "--port=1"], env=env,
                             capture_output=True, text=True, timeout=60, check=True)
        out[mode] = run.stdout
    assert f"--ServerApp.root_dir={ROOT / 'lessons'}" in out["--author"] and "JUPYTER_CONFIG_PATH" not in out["--author"]
    assert "--port=1" in out["--author"]
    assert f"--ServerApp.root_dir={ROOT / 'lessons'}" in out["--solutions"]
    assert f"JUPYTER_CONFIG_PATH={ROOT}/teaching/jupyter/solutions:{LEARNER_CONFIG}" in out["--solutions"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_headless_solutions_lab_has_no_nbgrader_and_refuses_saving():
    """JupyterLab as `./dev lab --solutions` starts it: nbgrader's lab extension disabled, its
    server extensions not loaded, the sources shown read-only and a save refused."""
    env = dev_env()
    port = free_port()
    args = ["--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1", "--ServerApp.token=",
            "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True"]
    server = subprocess.Popen([str(ROOT / "dev"), "lab", "--solutions", *args], env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"

    def request(path, method="GET", body=None):
        req = urllib.request.Request(base + path, method=method, data=body,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if request("/api/status")[0] == 200:
                    break
            except OSError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "JupyterLab did not start"
            time.sleep(0.2)
        page = request("/lab")[1]
        config = json.loads(page.split('id="jupyter-config-data" type="application/json">')[1].split("</script>")[0])
        assert "@jupyter/nbgrader" in config["disabledExtensions"]
        assert request("/formgrader")[0] == 404
        status, model = request("/api/contents/03-hooks.ipynb?content=0")
        assert status == 200 and json.loads(model)["writable"] is False
        status, message = request("/api/contents/03-hooks.ipynb", "PUT",
                                  json.dumps({"type": "file", "format": "text", "content": "x"}).encode())
        assert status == 403 and "read-only" in message
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)
