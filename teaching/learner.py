"""The learner's copy of the lessons: what ``./dev lab`` opens.

``lessons/`` holds the nbgrader *source* notebooks, with every worked answer.
A learner works in ``my-lessons/`` instead (git-ignored), on the student
versions: the same notebooks ``./dev release`` hands out (built here by
``course.release``), with empty answer cells.

* ``sync``: a lesson missing from ``my-lessons/`` is released and copied in;
  a lesson already there is NEVER touched, so a learner's work is never lost.
  The checks (``checks.py`` or the ``checks/`` package, whatever sits next to
  the lessons) are copied every time: they are the course's, not the learner's.
* ``reset NN``: the learner's copy of lesson NN moves to
  ``my-lessons/.backup/NN-topic-YYYYmmdd-HHMMSS.ipynb`` and a blank one
  replaces it.

``./dev lab --solutions`` opens ``lessons/`` itself, read-only
(``teaching/read_only_contents.py``).

Command line (what ``./dev lab`` and ``./dev reset-lesson`` call)::

    python teaching/learner.py sync [--target DIR]
    python teaching/learner.py reset NN [--target DIR]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
LEARNER = ROOT / "my-lessons"
BACKUP = ".backup"


def lesson_sources(lessons=LESSONS):
    """The lessons, ``NN-topic.ipynb``, in course order (the template is not one)."""
    return sorted(Path(lessons).glob("[0-9][0-9]-*.ipynb"))


def _copy_checks(lessons, target):
    """Copy ``checks.py`` / ``checks/`` (whatever the lessons import) into ``target``; drop stale ones."""
    lessons, target = Path(lessons), Path(target)
    wanted = {p.name for p in lessons.glob("checks*") if p.name != "__pycache__"}
    for old in target.glob("checks*"):
        if old.name not in wanted:
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    for name in sorted(wanted):
        source, copy = lessons / name, target / name
        if source.is_dir():
            shutil.rmtree(copy, ignore_errors=True)
            # not the catalogue of typical answers (checks/catalogue): it holds right answers
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", "catalogue"))
        else:
            shutil.copy2(source, copy)


def _student_versions(notebooks):
    """``{name: student version path}`` built by ``course.release`` in a temporary course folder."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import course

    folder = Path(tempfile.mkdtemp(prefix="edutorch-learner-"))
    return folder, {path.name: path for path in course.release(folder / "course", notebooks)}


def sync(target=LEARNER, lessons=LESSONS):
    """Give ``target`` a blank copy of every lesson it lacks; return the notebooks added."""
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    missing = [nb for nb in lesson_sources(lessons) if not (target / nb.name).exists()]
    added = []
    if missing:
        folder, released = _student_versions(missing)
        try:
            for nb in missing:
                shutil.copy2(released[nb.name], target / nb.name)
                added.append(target / nb.name)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    _copy_checks(lessons, target)
    return added


def find_lesson(number, folder):
    """``"05"``, ``"5"`` or ``"05-training-loop-and-optimizers"`` -> the lesson's file in ``folder``."""
    digits = str(number).split("-")[0].removesuffix(".ipynb")
    if not digits.isdigit():
        raise SystemExit(f"lesson {number!r}: give its number, e.g. 05")
    matches = sorted(Path(folder).glob(f"{int(digits):02d}-*.ipynb"))
    if not matches:
        raise SystemExit(f"there is no lesson {int(digits):02d} in {folder}")
    return matches[0]


def reset(number, target=LEARNER, lessons=LESSONS, now=None):
    """Move the learner's copy of a lesson to ``.backup/`` and make a fresh blank one; return the backup."""
    target = Path(target)
    source = find_lesson(number, lessons)
    copy = target / source.name
    backup = None
    if copy.exists():
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
        backup = target / BACKUP / f"{source.stem}-{stamp}.ipynb"
        backup.parent.mkdir(parents=True, exist_ok=True)
        copy.rename(backup)
    sync(target, lessons)
    return backup


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sy = commands.add_parser("sync", help="copy the blank lessons the learner's folder lacks")
    sy.add_argument("--target", default=str(LEARNER))
    re_ = commands.add_parser("reset", help="back up the learner's copy of one lesson, make a blank one")
    re_.add_argument("lesson", help="its number, e.g. 05")
    re_.add_argument("--target", default=str(LEARNER))
    args = parser.parse_args(argv)
    if args.command == "sync":
        added = sync(args.target)
        for path in added:
            print(f"new blank lesson: {path}")
    else:
        backup = reset(args.lesson, args.target)
        if backup:
            print(f"your previous copy: {backup}")
        print(f"a blank copy: {find_lesson(args.lesson, args.target)}")


if __name__ == "__main__":
    main()
