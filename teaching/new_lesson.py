"""Start a new lesson from ``lessons/_template.ipynb`` (what ``./dev new-lesson NN-topic`` runs).

The template is a complete, executed lesson that passes the structure tests
(docs/teaching.md, "The lesson contract"): ``create`` copies it to
``lessons/NN-topic.ipynb`` with the number and title filled in, and appends
writes the template's two checks (``lessons/checks/lesson00.py``) to
``lessons/checks/lessonNN.py`` under the new exercise numbers
(``exercise_N_1``, ``exercise_N_2``). ``./dev new-lesson`` then
re-executes the notebook, so its stored outputs are a clean run. Replace the
explanations, the widget, the exercises and their checks with your own, run
``./dev execute lessons/NN-topic.ipynb`` and ``./dev test``.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

LESSONS = Path(__file__).resolve().parents[1] / "lessons"
TEMPLATE = "_template.ipynb"
TEMPLATE_CHECKS = "lesson00.py"


def parse_name(name):
    """``"05-training-loop"`` -> ``(5, "05", "Training loop")``; anything else is a ValueError."""
    match = re.fullmatch(r"(\d\d)-([a-z0-9]+(?:-[a-z0-9]+)*)", name)
    if not match or match[1] == "00":
        raise ValueError(f"lesson name {name!r}: use NN-topic, e.g. 05-training-loop "
                         "(two digits from 01, then lowercase words joined by '-')")
    title = match[2].replace("-", " ")
    return int(match[1]), match[1], title[0].upper() + title[1:]


def _renumber(text, number):
    """Exercise numbers, check names and nbgrader ids of lesson 00 -> lesson ``number``."""
    text = re.sub(r"\bexercise_0_(\d+)", rf"exercise_{number}_\1", text)
    text = re.sub(r"\b([Ee]xercise) 0\.(\d+)", rf"\1 {number}.\2", text)
    return re.sub(r"\bex0_(\d+)_", rf"ex{number}_\1_", text)


def notebook_for(name, template_text):
    """The new lesson's notebook JSON text, from the template's."""
    number, digits, title = parse_name(name)
    nb = json.loads(template_text)
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        text = text.replace("# 00 · Your lesson title", f"# {digits} · {title}")
        text = _renumber(text, number)
        if cell["cell_type"] == "markdown":
            text = re.sub(r"\s*<!-- The template of a lesson:.*?-->\n", "\n", text, flags=re.S)
        cell["source"] = text.splitlines(keepends=True)
        grading = cell.get("metadata", {}).get("nbgrader")
        if grading and "grade_id" in grading:
            grading["grade_id"] = _renumber(grading["grade_id"], number)
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def checks_for(name, template_checks):
    """The new lesson's checks module: the template's (``checks/lesson00.py``), renumbered."""
    number, digits, title = parse_name(name)
    text = _renumber(template_checks, number)
    docstring = re.match(r'"""(.*?)"""\n', text, re.S)
    if docstring is None:
        raise ValueError("lessons/checks/lesson00.py does not start with its docstring")
    return (f'"""Checks of lesson {digits} · {title} (lessons/{name}.ipynb).\n\n'
            "Made from the template's checks: replace them with your lesson's own (recompute the\n"
            'right answer from the API, name the likely mistake in the hint).\n"""\n'
            + text[docstring.end():])


def create(name, lessons=LESSONS):
    """Write ``lessons/NAME.ipynb`` and ``lessons/checks/lessonNN.py``; return the notebook's path."""
    lessons = Path(lessons)
    number, digits, _ = parse_name(name)
    target = lessons / f"{name}.ipynb"
    if target.exists():
        raise FileExistsError(f"{target} already exists")
    checks = lessons / "checks" / f"lesson{digits}.py"
    if checks.exists():
        raise FileExistsError(f"{checks} already holds the checks of lesson {number} (exercise_{number}_*)")
    target.write_text(notebook_for(name, (lessons / TEMPLATE).read_text(encoding="utf-8")),
                      encoding="utf-8")
    template_checks = (lessons / "checks" / TEMPLATE_CHECKS).read_text(encoding="utf-8")
    checks.write_text(checks_for(name, template_checks), encoding="utf-8")
    return target


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python teaching/new_lesson.py NN-topic")
    try:
        print(create(sys.argv[1]))
    except (ValueError, FileExistsError) as error:
        sys.exit(f"error: {error}")
