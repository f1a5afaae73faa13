"""The docs stay true: README.md's and docs/*.md's tables render whole, and every `./dev`
command they show runs, in a fresh clone of the repository."""
import html
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


# --- tables -------------------------------------------------------------------------
def table_lines(text):
    """The lines outside code blocks that are meant as table rows (not the `|---|` rules)."""
    text = FENCE.sub(lambda m: "\n" * m[0].count("\n"), text)
    return [line for line in text.splitlines()
            if line.startswith("|") and not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+\s*", line)]


def rendered_tables(text):
    """Each table as Markdown renders it (mistune, what nbconvert uses): a list of rows of cell texts."""
    mistune = pytest.importorskip("mistune", reason="mistune (a Jupyter dependency) not installed")
    page = mistune.create_markdown(plugins=["table"])(text)
    tables = []
    for table in re.findall(r"<table>(.*?)</table>", page, re.S):
        rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
        tables.append([[html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
                        for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)] for row in rows])
    return tables


def table_problems(text):
    """What is wrong with a document's tables: rows that do not render as rows, repeated rows."""
    problems = []
    tables = rendered_tables(text)
    rendered = sum(len(t) for t in tables)
    lines = table_lines(text)
    if rendered != len(lines):
        shown = {row[0] for t in tables for row in t}
        lost = [line[:60] for line in lines if line.split("|")[1].strip().strip("`") not in
                {html.unescape(s).strip("`") for s in shown}]
        problems.append(f"{len(lines)} table lines but {rendered} rendered rows "
                        f"(a blank line or a missing |---| breaks a table): {lost[:3]}")
    for table in tables:
        firsts = [row[0] for row in table[1:]]
        problems += [f"row {first!r} appears {firsts.count(first)} times"
                     for first in sorted(set(firsts)) if firsts.count(first) > 1]
        problems += [f"row {row[0]!r} has {len(row)} cells, the header {len(table[0])}"
                     for row in table[1:] if len(row) != len(table[0])]
    return problems


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_tables_render_whole(doc):
    assert table_problems(doc.read_text(encoding="utf-8")) == []


def test_table_check_finds_a_broken_table_and_a_repeated_row():
    good = "| widget | what |\n|---|---|\n| `A` | a |\n| `B` | b |\n"
    assert table_problems(good) == []
    broken = table_problems(good.replace("| `B`", "\n| `B`"))
    assert len(broken) == 1 and "3 table lines but 2 rendered rows" in broken[0] and "`B`" in broken[0]
    assert table_problems(good + "| `A` | again |\n") == ["row 'A' appears 2 times"]


# --- the ./dev commands the docs show ------------------------------------------------------
def dev_commands(docs=DOCS):
    """Every `./dev ...` line of the docs' shell code blocks, comments and `[OPTIONAL]` args removed."""
    commands = []
    for doc in docs:
        for lang, body in FENCE.findall(doc.read_text(encoding="utf-8")):
            if lang not in ("bash", "sh", "console", ""):
                continue
            for line in body.splitlines():
                line = re.sub(r"\[[A-Z]+\]", "", line.split("#")[0]).strip()
                line = " ".join(PLACEHOLDERS.get(word, word) for word in line.split())
                if line.startswith("./dev") and line not in commands:
                    commands.append(line)
    return commands


# How each command runs in the test: a JupyterLab is prepared but not started, and the
# whole test suite is replaced by one small test file.
PLACEHOLDERS = {"SUBMISSIONS": "submissions/"}
KEPT_LESSONS = ("03-hooks",)


def as_run(command):
    words = command.split()
    if words[1] in ("lab", "hub"):  # prepared, not started
        words.append("--dry-run")
    if words[1] == "fuzz":
        words = words[:2] + ["--examples", "20"]
    if words[1] == "test":
        selection = [w for w in words[2:] if w.endswith(".ipynb")]
        words = words[:2] + ["tests/test_packaging.py::test_dev_help_runs", "-p", "no:cacheprovider", *selection]
    return words


def test_every_documented_dev_command_is_run_by_the_clone_test():
    commands = dev_commands()
    assert "./dev lab" in commands and "./dev test" in commands and "./dev release" in commands
    known = {"lab", "test", "release", "grade", "new-lesson", "execute", "reset-lesson", "help", "bench", "fuzz",
             "hub"}
    assert {c.split()[1] for c in commands} <= known, "a new ./dev command in the docs: teach as_run() about it"


def installed_edutorch(cwd):
    """Where this venv's ``import edutorch`` goes, PYTHONPATH aside (its editable install)."""
    return subprocess.run([sys.executable, "-c", "import edutorch; print(edutorch.__file__)"], cwd=cwd,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.slow
def test_documented_dev_commands_run_in_a_fresh_clone(tmp_path):
    """A clone of this repository (with two lessons, for time) runs every `./dev` command the docs
    show, in the order shown; a command that fails is a false sentence in the docs."""
    venv = pathlib.Path(sys.prefix)
    if not list(venv.glob(".edutorch-installed-*")):
        pytest.skip("not running in a virtual environment made by ./dev: documented commands not run")
    # The clone shares this venv. An extra it found stale would be reinstalled from the clone,
    # pointing the venv's editable install at a folder pytest deletes later (every kernel of
    # the other tests then fails `import edutorch`): bring the extras up to date from here first.
    env = dict(os.environ, VENV=str(venv), CI="true")
    subprocess.run([str(ROOT / "dev"), "install", "lab", "class", "hub", "test"], cwd=ROOT, env=env,
                   check=True, stdin=subprocess.DEVNULL, timeout=600)
    before = installed_edutorch(tmp_path)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    for tracked in ("README.md", "docs", "dev", "teaching", "lessons", "tests/test_packaging.py"):
        source = ROOT / tracked  # the working tree, uncommitted changes included
        if source.is_dir():
            shutil.copytree(source, clone / tracked, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "checkpoints"))
        else:
            shutil.copy2(source, clone / tracked)
    for lesson in (clone / "lessons").glob("[0-9][0-9]-*.ipynb"):
        if lesson.stem not in KEPT_LESSONS:
            lesson.unlink()
    env = dict(os.environ, VENV=str(venv), PYTHONPATH=str(clone), CI="true")
    student = clone / "submissions" / "alice"
    student.mkdir(parents=True)
    shutil.copy(clone / "lessons" / "03-hooks.ipynb", student)
    log = []
    for command in dev_commands():
        args = as_run(command)
        start = time.monotonic()
        done = subprocess.run(args, cwd=clone, env=env, capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
        log.append(f"$ {' '.join(args)}  -> {done.returncode} ({time.monotonic() - start:.0f} s)")
        assert done.returncode == 0, "\n".join(log) + "\n" + done.stdout[-2000:] + done.stderr[-3000:]
    print("\n".join(log))
    assert installed_edutorch(tmp_path) == before, "the clone re-pointed the venv's editable install"
    assert (clone / "my-lessons" / "03-hooks.ipynb").exists()
    assert (clone / "course" / "grades.csv").read_text().count("alice") >= 4


def test_new_lesson_hint_suggests_a_free_number():
    out = subprocess.run([str(ROOT / "dev"), "new-lesson"], capture_output=True, text=True, timeout=30)
    assert out.returncode != 0
    number = re.search(r"\./dev new-lesson (\d\d)-my-topic", out.stderr)[1]
    taken = sorted(p.name[:2] for p in (ROOT / "lessons").glob("[0-9][0-9]-*.ipynb"))
    assert number not in taken and int(number) == int(max(taken, default="00")) + 1
