"""`./dev new-lesson NN-topic`: a lesson made from lessons/_template.ipynb passes the contract at once."""
import importlib.util
import json
import pathlib
import shutil
import sys

import pytest

import test_notebooks as contract

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "teaching"))
import new_lesson  # noqa: E402  (teaching/new_lesson.py)

CONTRACT = [contract.test_starts_with_a_title_and_goals, contract.test_kernel_is_python3,
            contract.test_has_checked_exercises,
            contract.test_every_stored_check_reports_success,
            contract.test_shows_a_widget_with_its_state_saved,
            contract.test_widget_text_form_is_short_and_stable,
            contract.test_ends_with_an_optional_pytorch_parity_cell,
            contract.test_outputs_are_one_clean_run_in_order,
            contract.test_no_memory_addresses_or_timings_in_outputs, contract.test_seeded,
            contract.test_exercises_are_nbgrader_answer_and_check_cells]


@pytest.fixture
def lessons(tmp_path):
    # numbers 98 and 99: real lessons already own checks/lesson05.py, ...
    shutil.copy(ROOT / "lessons" / "_template.ipynb", tmp_path / "_template.ipynb")
    (tmp_path / "checks").mkdir()
    for name in ("__init__.py", "_common.py", "lesson00.py"):
        shutil.copy(ROOT / "lessons" / "checks" / name, tmp_path / "checks" / name)
    return tmp_path


def test_new_lesson_is_numbered_titled_and_passes_the_contract(lessons):
    path = new_lesson.create("99-training-loop", lessons)
    assert path == lessons / "99-training-loop.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    text = path.read_text(encoding="utf-8")
    assert "".join(nb["cells"][0]["source"]).startswith("# 99 · Training loop")
    assert "exercise_0_" not in text and "ex0_" not in text and "<!--" not in text
    assert "checks.exercise_99_1(layer)" in text and "### Exercise 99.2" in text
    for test in CONTRACT:
        test(nb)


def test_new_lesson_runs_with_its_new_checks(lessons, monkeypatch):
    path = new_lesson.create("98-gradients-up-close", lessons)
    assert (lessons / "checks" / "lesson98.py").exists()
    for name in [n for n in sys.modules if n == "checks" or n.startswith("checks.")]:
        monkeypatch.delitem(sys.modules, name)  # import the copied package, not lessons/checks
    monkeypatch.syspath_prepend(str(lessons))
    module = importlib.import_module("checks")
    assert module.__file__ == str(lessons / "checks" / "__init__.py")
    namespace = {}
    results = []
    for cell in contract.code_cells(json.loads(path.read_text(encoding="utf-8"))):
        code = contract.source(cell)
        if code.startswith("checks.exercise_"):
            results.append(eval(code, namespace))
        else:
            exec(compile(code, str(path), "exec"), namespace)
    assert len(results) == 2 and all(results)
    assert all(repr(r).startswith("✓ correct") for r in results)
    assert not module.exercise_98_2.check(42), "the copied check still rejects a wrong answer"
    assert "the biases" in repr(module.exercise_98_2.check(32 + 16))


def test_new_lesson_refuses_bad_names_and_existing_lessons(lessons):
    for bad in ("5-x", "05_training", "Training", "00-template", "05-Big-Title"):
        with pytest.raises(ValueError, match="NN-topic"):
            new_lesson.create(bad, lessons)
    new_lesson.create("99-training-loop", lessons)
    with pytest.raises(FileExistsError):
        new_lesson.create("99-training-loop", lessons)
    with pytest.raises(FileExistsError, match="exercise_99_"):
        new_lesson.create("99-other-topic", lessons)
