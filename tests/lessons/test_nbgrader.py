"""Student versions and autograding through nbgrader (teaching/course.py, ./dev release / grade).

One release and one grading run are shared by every test of this module (nbgrader
executes each submitted notebook in a kernel, which takes seconds per lesson):

* ``blank``: the released student versions, handed in untouched;
* ``full``:  the complete lessons (the nbgrader source notebooks);
* ``half``:  lessons 01 and 03 with every other exercise answered.
"""
import copy
import csv
import json
import os
import pathlib
import re
import sys

import pytest

pytest.importorskip("nbgrader", reason="nbgrader not installed: student versions and grading "
                                       "not tested (pip install -e \".[class]\")")

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "teaching"))
import course  # noqa: E402  (teaching/course.py)

pytestmark = [
    pytest.mark.slow,
    # nbgrader 0.9.6's gradebook with SQLAlchemy 2.1: harmless autoflush warnings inside nbgrader
    pytest.mark.filterwarnings("ignore:Object of type <Submitted"),
]
LESSONS = course.lesson_notebooks()
HALF_LESSONS = [p for p in LESSONS if p.name.startswith(("01-", "03-", "13-"))]
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def load(path):
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def source(cell):
    return "".join(cell["source"])


def solution_lines(cell):
    """The lines between the solution markers of an answer cell, stripped."""
    lines, inside = [], False
    for line in source(cell).splitlines():
        if BEGIN in line:
            inside = True
        elif END in line:
            inside = False
        elif inside and line.strip():
            lines.append(line.strip())
    return lines


def answered(cell):
    """An answer cell with the worked solution in place, markers removed (what a student would write)."""
    cell = copy.deepcopy(cell)
    cell["source"] = "\n".join(line for line in source(cell).splitlines()
                               if BEGIN not in line and END not in line)
    return cell


def half_answered(released, lesson):
    """``released`` with the answers of exercises 1, 3, ... (every other one) filled in."""
    nb = load(released)
    solutions = {nbgrader_meta(c)["grade_id"]: c for c in load(lesson)["cells"]
                 if nbgrader_meta(c).get("solution")}
    answer_ids = [nbgrader_meta(c)["grade_id"] for c in nb["cells"] if nbgrader_meta(c).get("solution")]
    chosen = answer_ids[::2]
    for i, cell in enumerate(nb["cells"]):
        if nbgrader_meta(cell).get("grade_id") in chosen:
            nb["cells"][i] = answered(solutions[nbgrader_meta(cell)["grade_id"]])
    return nb, {gid.replace("_answer", "_check") for gid in chosen}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Release the lessons, hand in three students' notebooks, grade them all once."""
    base = tmp_path_factory.mktemp("class")
    root = base / "course"
    with pytest.MonkeyPatch.context() as mp:
        # the grading kernels import edutorch and widgets from this checkout
        mp.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        released = course.release(root)
        submissions = base / "submissions"
        solved = {}
        for student in ("blank", "full", "half"):
            (submissions / student).mkdir(parents=True)
        for nb_path, lesson in zip(released, LESSONS):
            (submissions / "blank" / lesson.name).write_bytes(nb_path.read_bytes())
            (submissions / "full" / lesson.name).write_bytes(lesson.read_bytes())
            if lesson in HALF_LESSONS:
                nb, solved[lesson.stem] = half_answered(nb_path, lesson)
                (submissions / "half" / lesson.name).write_text(json.dumps(nb), encoding="utf-8")
        rows = course.grade(submissions, root)
    return {"root": root, "released": released, "rows": rows, "solved": solved}


def scores(rows, student, lessons=None):
    picked = [r for r in rows if r["student"] == student and (lessons is None or r["lesson"] in lessons)]
    return sum(r["score"] for r in picked), sum(r["max_score"] for r in picked)


def test_released_notebooks_contain_no_solution_text(graded):
    for released, lesson in zip(graded["released"], LESSONS):
        student, teacher = load(released), load(lesson)
        outside = "\n".join(source(c) if not nbgrader_meta(c).get("solution")
                            else "\n".join(l for l in source(c).splitlines() if l.strip() not in solution_lines(c))
                            for c in teacher["cells"])
        text = released.read_text(encoding="utf-8")
        assert BEGIN not in text and END not in text
        outputs = json.dumps([c.get("outputs", []) for c in student["cells"]], ensure_ascii=False)
        assert "✓ correct" not in outputs, "the worked answers' stored results are cleared"
        answers = [c for c in teacher["cells"] if nbgrader_meta(c).get("solution")]
        assert len(answers) >= 2
        for answer in answers:
            for line in solution_lines(answer):
                if line not in outside:  # a line that only the solution contains
                    assert line not in text, f"{released.name} still contains {line!r}"
        stubs = [c for c in student["cells"] if nbgrader_meta(c).get("solution")]
        assert all("# YOUR CODE HERE" in source(c) and c["outputs"] == [] for c in stubs)
        checks_ = [c for c in student["cells"] if nbgrader_meta(c).get("grade")]
        assert all(re.search(r"checks\.exercise_\d+_\d+\(", source(c)) and c["outputs"] == []
                   for c in checks_)
        shipped = sorted(p.name for p in (released.parent / "checks").iterdir())
        assert shipped == ["__init__.py", "_common.py", f"lesson{lesson.name[:2]}.py"], \
            "students get their lesson's checks, not the other lessons' nor the catalogue of answers"


def test_released_notebooks_keep_the_explanations_and_their_outputs(graded):
    for released, lesson in zip(graded["released"], LESSONS):
        student, teacher = load(released), load(lesson)
        assert len(student["cells"]) == len(teacher["cells"])
        for mine, theirs in zip(student["cells"], teacher["cells"]):
            if not nbgrader_meta(theirs):
                assert source(mine) == source(theirs)
                if theirs["cell_type"] == "code":
                    assert mine["outputs"] == theirs["outputs"]
        assert student["metadata"]["widgets"] == teacher["metadata"]["widgets"], "widget pictures kept"


def test_blank_notebooks_run_to_the_end_fail_only_in_checks_and_score_zero(graded):
    root = graded["root"]
    for lesson in LESSONS:
        nb = load(root / "autograded" / "blank" / lesson.stem / lesson.name)
        checks_ = 0
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            assert cell["execution_count"] is not None, f"{lesson.name}: a cell did not run"
            errors = [o for o in cell["outputs"] if o["output_type"] == "error"]
            if nbgrader_meta(cell).get("grade"):
                checks_ += 1
                assert [e["ename"] for e in errors] == ["NotYet"], source(cell)
                assert errors[0]["traceback"] == [f"NotYet: {errors[0]['evalue']}"], "one line, no frames"
                assert "0 points" in errors[0]["evalue"]
                printed = "".join("".join(o.get("text", "")) for o in cell["outputs"])
                assert printed.startswith("✗ not yet: ") and printed.count("✗ not yet") == 1, printed
            else:
                assert not errors, f"{lesson.name}: {source(cell)[:80]!r} raised {errors[0]['ename']}"
        assert checks_ >= 2
        feedback = (root / "feedback" / "blank" / lesson.stem / f"{lesson.stem}.html").read_text()
        assert "not yet" in feedback
    score, most = scores(graded["rows"], "blank")
    assert score == 0 and most > 0


def test_source_notebooks_score_full_marks(graded):
    score, most = scores(graded["rows"], "full")
    assert score == most > 0
    assert (graded["root"] / "feedback" / "full" / LESSONS[0].stem / f"{LESSONS[0].stem}.html").exists()


def test_half_right_scores_about_half(graded):
    rows = [r for r in graded["rows"] if r["student"] == "half"]
    lessons = {p.stem for p in HALF_LESSONS}
    score, most = scores(rows, "half", lessons)
    expected = sum(r["max_score"] for r in rows
                   if r["lesson"] in lessons
                   and f"ex{r['exercise'].replace('.', '_')}_check" in graded["solved"][r["lesson"]])
    assert score == expected, "exactly the answered exercises score"
    assert 0.35 <= score / most <= 0.65
    # lessons not handed in are listed with 0 points, not left out
    missing = [r for r in rows if r["lesson"] not in lessons]
    assert missing and all(r["score"] == 0 for r in missing)


def test_grades_csv_has_one_row_per_student_and_exercise(graded):
    with open(graded["root"] / "grades.csv", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert len(table) == len(graded["rows"])
    exercises = {(r["lesson"], r["exercise"]) for r in table}
    assert ("01-tensors-and-autograd", "1.1") in exercises
    assert ("04-pruning", "4.4") in exercises
    for student in ("blank", "full", "half"):
        assert {(r["lesson"], r["exercise"]) for r in table if r["student"] == student} == exercises
    assert all(float(r["max_score"]) > 0 for r in table)
