"""Student versions of the lessons and autograding, through nbgrader.

The lessons in ``lessons/`` are nbgrader *source* notebooks: each exercise has
an answer cell (nbgrader "solution" cell, the worked answer between
``### BEGIN SOLUTION`` and ``### END SOLUTION``) and a check cell (nbgrader
"grade" cell with points) that calls a function of the ``lessons/checks``
package. A check that fails prints its hint; under nbgrader's autograding it
also raises, so nbgrader scores the cell 0 (in a student's own kernel it does
not, so Run All goes on to the end).

This module drives nbgrader's own converters on an nbgrader *course
directory* (one assignment per lesson, named like the notebook)::

    COURSE/
        nbgrader_config.py            the settings below, for nbgrader's own CLI
        gradebook.db                  nbgrader's gradebook
        source/NN-topic/              the lesson + its checks/ (copied from lessons/)
        release/NN-topic/             the student version + checks/    (release)
        submitted/STUDENT/NN-topic/   what students handed in          (grade)
        autograded/STUDENT/NN-topic/  the executed, scored notebooks   (grade)
        feedback/STUDENT/NN-topic/    nbgrader's feedback HTML         (grade)
        grades.csv                    one row per student and exercise (grade)

Command line (what ``./dev release`` and ``./dev grade`` call)::

    python teaching/course.py release [COURSE]
    python teaching/course.py grade SUBMISSIONS [COURSE]

``SUBMISSIONS`` holds one folder per student, with either the notebooks
themselves (``alice/01-tensors-and-autograd.ipynb``) or nbgrader's layout
(``alice/01-tensors-and-autograd/01-tensors-and-autograd.ipynb``).
"""
from __future__ import annotations

import argparse
import csv
import logging
import os
import re
import shutil
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
COURSE_ID = "edutorch"
# What a student sees in place of a worked answer. `pass` keeps the cell valid
# Python at top level and inside a function body, so a blank notebook runs top
# to bottom and only the check cells fail (nbgrader's default stub raises
# NotImplementedError in every answer cell instead).
CODE_STUB = "# YOUR CODE HERE\npass"
CELL_TIMEOUT = 300  # seconds per cell when nbgrader executes a submission

CONFIG_FILE = f'''\
# nbgrader settings of the edutorch course (written by teaching/course.py).
# With them nbgrader's own commands work in this folder too, e.g.
#   nbgrader generate_assignment 01-tensors-and-autograd --force
#   nbgrader autograde 01-tensors-and-autograd --force
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {COURSE_ID!r}
c.ClearSolutions.code_stub = {{"python": {CODE_STUB!r}}}
c.Execute.timeout = {CELL_TIMEOUT}
# Keep the outputs of explanation cells (plots, printed tensors, the widget's
# stored picture); clear only the exercise cells' (ClearExerciseOutputs).
c.ClearOutput.enabled = False
# Kernels talk over encrypted sockets (CurveZMQ) where jupyter_client can: ipykernel
# warns about plain-text TCP once per notebook otherwise.
from jupyter_client import KernelManager
if "transport_encryption" in KernelManager.class_trait_names():
    c.KernelManager.transport_encryption = "auto"
'''


def lesson_notebooks():
    """The lessons, ``lessons/NN-topic.ipynb``, in course order."""
    return sorted(LESSONS.glob("[0-9][0-9]-*.ipynb"))


def _nbgrader():
    try:
        import nbgrader  # noqa: F401
    except ImportError:
        sys.exit("nbgrader is not installed: pip install -e \".[class]\" (or ./dev install class)")
    # nbgrader runs the `alembic` command of its environment to set up the gradebook:
    # make this interpreter's scripts folder (the venv's bin/) findable
    scripts = os.path.dirname(sys.executable)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join(filter(None, [scripts, os.environ.get("PATH")]))


def _clear_exercise_outputs_class():
    """A preprocessor that clears the outputs of answer and check cells only."""
    from nbgrader.preprocessors import NbGraderPreprocessor

    class ClearExerciseOutputs(NbGraderPreprocessor):
        """Clear the stored outputs of nbgrader answer and check cells (the worked answer's ✓)."""

        def preprocess_cell(self, cell, resources, index):
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and (meta.get("solution") or meta.get("grade")):
                cell.outputs = []
                cell.execution_count = None
            return cell, resources

    return ClearExerciseOutputs


def config(course):
    """nbgrader's configuration for ``course``: the same settings as its nbgrader_config.py."""
    from nbgrader.converters import GenerateAssignment
    from traitlets.config import Config

    c = Config()
    c.CourseDirectory.root = str(course)
    c.CourseDirectory.course_id = COURSE_ID
    c.ClearSolutions.code_stub = {"python": CODE_STUB}
    c.Execute.timeout = CELL_TIMEOUT
    # the feedback page shows a widget's stored picture (its output's image/png), not
    # a widget view that needs the live kernel (nbconvert ranks widget views first); set for
    # the HTML templates' output filter only (nbgrader's preprocessors warn about it otherwise)
    c.DataTypeFilter.display_data_priority = [
        "text/html", "text/markdown", "image/svg+xml", "text/latex", "image/png", "image/jpeg", "text/plain"]
    if _kernel_encryption_configurable():  # CurveZMQ, not plain-text TCP (ipykernel warns per notebook)
        c.KernelManager.transport_encryption = "auto"
    c.ClearOutput.enabled = False
    steps = list(GenerateAssignment.class_traits()["preprocessors"].make_dynamic_default())
    clear_output = next(i for i, step in enumerate(steps) if step.__name__ == "ClearOutput")
    steps.insert(clear_output, _clear_exercise_outputs_class())
    c.GenerateAssignment.preprocessors = steps
    c.GenerateFeedback.post_convert_hook = _feedback_hook(course)
    return c


def quiet_nbgrader():
    """Keep nbgrader's harmless warnings off the screen (``./dev grade``) and the log (the hub's
    formgrader): nbgrader 0.9.6 adds a submission to its gradebook through SQLAlchemy 2's
    autoflush, which warns that the (still pending) object is "not in session"; the rows are written."""
    warnings.filterwarnings("ignore", message="Object of type <Submitted")


def _feedback_hook(course):
    """nbgrader's ``post_convert_hook`` for GenerateFeedback: ``_polish_feedback`` on the pages
    it just wrote (``feedback/STUDENT/LESSON/NB.html`` for ``autograded/STUDENT/LESSON/NB.ipynb``)."""
    course = Path(course)

    def polish(assignment, student, notebooks):
        for notebook in notebooks:
            page = course / "feedback" / Path(notebook).relative_to(course / "autograded")
            _polish_feedback(page.with_suffix(".html"), course)

    return polish


def copy_checks(notebook, target):
    """Copy what ``notebook``'s checks need into the folder ``target``: the ``checks`` package's
    ``__init__.py`` and ``_common.py`` and the lesson's own ``lessonNN.py`` (not the other
    lessons', nor the catalogue of typical answers)."""
    package = Path(notebook).parent / "checks"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name in ("__init__.py", "_common.py", f"lesson{Path(notebook).name[:2]}.py"):
        shutil.copy(package / name, target / name)


def _kernel_encryption_configurable():
    """jupyter_client >= 8.7 provisions CurveZMQ keys for kernels whose kernelspec supports them."""
    from jupyter_client import KernelManager

    return "transport_encryption" in KernelManager.class_trait_names()


def _api(course):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    cfg = config(course)
    return NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)


def _succeed(result, what):
    if not result["success"]:
        raise RuntimeError(f"nbgrader {what} failed:\n{result.get('error') or result.get('log')}")


def release(course, notebooks=None):
    """Copy the lessons into ``course/source`` and write the student versions to ``course/release``.

    Returns the released notebooks' paths.
    """
    _nbgrader()
    course = Path(course).resolve()
    notebooks = [Path(nb) for nb in (notebooks or lesson_notebooks())]
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(CONFIG_FILE)
    api = _api(course)
    released = []
    for notebook in notebooks:
        name = notebook.stem
        source = course / "source" / name
        source.mkdir(parents=True, exist_ok=True)
        shutil.copy(notebook, source / notebook.name)
        copy_checks(notebook, source / "checks")
        _succeed(api.generate_assignment(name, force=True, create=True), f"generate_assignment {name}")
        released.append(course / "release" / name / notebook.name)
    return released


def _collect(submissions, course, assignments):
    """Copy ``submissions/STUDENT/...`` into nbgrader's ``course/submitted`` layout; the students."""
    submissions = Path(submissions).resolve()
    target = course / "submitted"
    students = sorted(p.name for p in submissions.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not students:
        raise SystemExit(f"{submissions} has no student folders (expected {submissions}/STUDENT/NN-topic.ipynb)")
    if submissions == target.resolve():
        return students
    for student in students:
        for name in assignments:
            for candidate in (submissions / student / f"{name}.ipynb",
                              submissions / student / name / f"{name}.ipynb"):
                if candidate.exists():
                    folder = target / student / name
                    if folder.exists():
                        shutil.rmtree(folder)
                    folder.mkdir(parents=True)
                    shutil.copy(candidate, folder / f"{name}.ipynb")
                    break
    return students


def grade(submissions, course):
    """Autograde every student's notebooks; write feedback HTML and ``course/grades.csv``.

    Returns the rows of the CSV as dicts (student, lesson, exercise, score, max_score).
    A lesson a student did not hand in is not run and scores 0.
    """
    _nbgrader()
    from nbgrader.api import Gradebook

    course = Path(course).resolve()
    if not (course / "gradebook.db").exists():
        release(course)
    assignments = sorted(p.name for p in (course / "source").iterdir() if p.is_dir())
    students = _collect(submissions, course, assignments)
    api = _api(course)
    handed_in = {(student, name) for student in students for name in assignments
                 if (course / "submitted" / student / name / f"{name}.ipynb").exists()}
    for student, name in sorted(handed_in):
        with warnings.catch_warnings():
            quiet_nbgrader()
            _succeed(api.autograde(name, student, force=True, create=True), f"autograde {student} {name}")
        # the feedback page, polished by config()'s hook
        _succeed(api.generate_feedback(name, student, force=True), f"generate_feedback {student} {name}")

    rows = []
    with Gradebook(api.coursedir.db_url, COURSE_ID) as gradebook:
        for student in students:
            for name in assignments:
                for notebook in gradebook.find_assignment(name).notebooks:
                    if (student, name) in handed_in:
                        cells = gradebook.find_submission_notebook(notebook.name, name, student).grades
                        scores = {g.name: (float(g.score), float(g.max_score)) for g in cells}
                    else:  # not handed in: every exercise scores 0
                        scores = {g.name: (0.0, float(g.max_score)) for g in notebook.grade_cells}
                    for grade_id, (score, max_score) in sorted(scores.items()):
                        rows.append({"student": student, "lesson": name,
                                     "exercise": _exercise_name(grade_id),
                                     "score": score, "max_score": max_score})
    with open(course / "grades.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["student", "lesson", "exercise", "score", "max_score"])
        writer.writeheader()
        writer.writerows(rows)
    return rows


def _polish_feedback(page, course):
    """What a student reads in nbgrader's feedback HTML: "Exercise 3.1" where nbgrader says
    "Test cell", and tracebacks without the instructor's folders (``File checks/lesson03.py:77``)."""
    text = page.read_text(encoding="utf-8")
    text = re.sub(r'(<a href="#(ex\d+_\d+_check)">)Test cell</a>',
                  lambda m: f"{m[1]}Exercise {_exercise_name(m[2])}</a>", text)
    text = re.sub(r"Grade cell: <code>(ex\d+_\d+_check)</code>",
                  lambda m: f"Exercise {_exercise_name(m[1])}: <code>{m[1]}</code>", text)
    text = re.sub(re.escape(str(course)) + r"/autograded/[^/\s]+/[^/\s]+/", "", text)
    page.write_text(text.replace(str(course), "COURSE"), encoding="utf-8")


def _exercise_name(grade_id):
    """``ex1_2_check`` -> ``1.2`` (the exercise's number in the lesson); other ids unchanged."""
    match = re.fullmatch(r"ex(\d+)_(\d+)_check", grade_id)
    return f"{match[1]}.{match[2]}" if match else grade_id


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rel = commands.add_parser("release", help="write student versions of the lessons")
    rel.add_argument("course", nargs="?", default="course", help="nbgrader course folder (default: course)")
    gr = commands.add_parser("grade", help="autograde a folder of submissions")
    gr.add_argument("submissions", help="folder with one sub-folder per student")
    gr.add_argument("course", nargs="?", default="course", help="nbgrader course folder (default: course)")
    args = parser.parse_args(argv)
    logging.getLogger("traitlets").setLevel(logging.WARNING)
    if args.command == "release":
        for path in release(args.course):
            print(f"student version: {path}")
        print(f"hand out the folders in {Path(args.course).resolve() / 'release'} (each with its checks/)")
    else:
        rows = grade(args.submissions, args.course)
        course = Path(args.course).resolve()
        totals = {}
        for row in rows:
            score, most = totals.get(row["student"], (0.0, 0.0))
            totals[row["student"]] = (score + row["score"], most + row["max_score"])
        for student, (score, most) in totals.items():
            print(f"{student}: {score:g} / {most:g}")
        print(f"scores per student and exercise: {course / 'grades.csv'}")
        print(f"feedback HTML: {course / 'feedback'}/STUDENT/LESSON/LESSON.html")


if __name__ == "__main__":
    main()
