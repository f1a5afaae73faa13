"""The catalogue of typical answers to every exercise, right and wrong, as data.

``catalogue/lessonNN.py`` lists, for each exercise of lesson NN, the mistakes
a real student makes and the different ways of being right. Each entry is a
small function that builds the answer — the arguments the notebook passes to
``checks.exercise_N_M`` — with the library it is given (edutorch, or real
PyTorch: the check must build its own inputs with the answer's library)::

    @wrong("5.2", "momentum buffer", "lr")   # the words the hint must contain
    def buffer_scaled_by_lr(lib):            # the mistake, in a teacher's words
        ...
        return (sgd_update,)

    @right("5.2")
    def the_formulas_of_the_text(lib):
        ...

tests/lessons/test_catalogue.py runs every entry: a wrong answer must be
rejected with a hint containing its words (the hint NAMES the mistake), a
right one accepted, and no answer may end in the generic "the check could not
use your answer". To extend the catalogue, add a function to the lesson's
file. Students do not get this folder (``./dev release`` leaves it out).
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable

BOTH = ("edutorch", "torch")
ANSWERS = []


@dataclass(frozen=True)
class Answer:
    """One typical answer to exercise ``exercise`` ("5.2")."""

    exercise: str
    make: Callable  # make(lib) -> the tuple of arguments of checks.exercise_N_M
    hint: tuple  # the words a wrong answer's hint must contain; () for a right answer
    libs: tuple  # the libraries the answer is built with

    @property
    def right(self):
        return not self.hint

    @property
    def what(self):
        return self.make.__name__.replace("_", " ")


def wrong(exercise, *hint, libs=BOTH):
    """Register the decorated function as a wrong answer whose hint must contain ``hint``."""
    if not hint:
        raise ValueError(f"a wrong answer to {exercise} needs the words its hint must contain")
    return lambda make: _register(Answer(exercise, make, hint, libs))


def right(exercise, libs=BOTH):
    """Register the decorated function as a right answer the check must accept."""
    return lambda make: _register(Answer(exercise, make, (), libs))


def _register(answer):
    ANSWERS.append(answer)
    return answer.make


def load():
    """Every answer of every lesson's file, in lesson order."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        if info.name.startswith("lesson"):
            importlib.import_module(f"{__name__}.{info.name}")
    return list(ANSWERS)
