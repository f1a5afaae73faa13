"""The catalogue of typical answers (lessons/checks/catalogue/): every wrong answer is rejected
with a hint that names its mistake, every right answer is accepted, no answer reaches a raw error."""
import numpy as np
import pytest

import checks
import edutorch
from check_helpers import assert_hint, assert_ok
from checks import catalogue

ANSWERS = catalogue.load()
RAW_ERROR = "the check could not use your answer"


def _exercises():
    """``"5.2"`` for every graded check of the course (lesson 00, the template, aside)."""
    names = [n for n in dir(checks) if n.startswith("exercise_") and n.count("_") == 2]
    numbers = [n.removeprefix("exercise_").replace("_", ".") for n in names]
    return sorted((n for n in numbers if not n.startswith("0.")), key=lambda n: tuple(map(int, n.split("."))))


def _library(name):
    if name == "torch":
        return pytest.importorskip("torch", reason="real PyTorch not installed: torch-built answers skipped")
    return edutorch


def _check(exercise):
    return getattr(checks, "exercise_" + exercise.replace(".", "_")).check


CASES = [pytest.param(answer, lib, id=f"{answer.exercise}-{'right' if answer.right else 'wrong'}-"
                                       f"{answer.make.__name__}-{lib}")
         for answer in ANSWERS for lib in answer.libs]


@pytest.mark.parametrize(("answer", "lib_name"), CASES)
def test_typical_answer(answer, lib_name):
    lib = _library(lib_name)
    lib.manual_seed(0)
    np.random.seed(0)
    result = _check(answer.exercise)(*answer.make(lib))
    assert RAW_ERROR not in repr(result), f"{answer.what}: {result!r}"
    if answer.right:
        assert_ok(result)
    else:
        assert_hint(result, *answer.hint)


@pytest.mark.parametrize("exercise", _exercises())
def test_every_exercise_has_four_typical_mistakes_and_two_right_answers(exercise):
    answers = [a for a in ANSWERS if a.exercise == exercise]
    wrong = [a for a in answers if not a.right]
    right = [a for a in answers if a.right]
    assert len(wrong) >= 4, f"{exercise}: {len(wrong)} typical mistakes catalogued, 4 needed"
    assert len(right) >= 2, f"{exercise}: {len(right)} right answers catalogued, 2 needed"
    assert len({a.make.__name__ for a in answers}) == len(answers), "each answer named once"
    assert any("torch" in a.libs for a in right) or all(a.libs == ("edutorch",) for a in answers), \
        f"{exercise}: a right answer built from real torch objects"


def test_the_catalogue_names_only_existing_exercises():
    assert {a.exercise for a in ANSWERS} <= set(_exercises())
