"""Automatic checks for the lesson exercises.

Each exercise is followed by a graded cell such as ``checks.exercise_1_1(x)``.
The check recomputes the right answer itself (nothing is hard-coded) and
compares:

* it returns a :class:`Result`, which Jupyter shows as one line,
  ``✓ correct: ...`` or ``✗ not yet: <a hint>``; a student's Run All goes on
  to the end of a lesson whatever the answers;
* under nbgrader's autograding (which sets ``NBGRADER_EXECUTION``) a wrong
  answer prints its hint and raises :class:`NotYet` (an ``AssertionError``),
  so nbgrader scores the cell 0; a cell that runs scores full marks. The same
  call is the student's self-check and the autograder's test.

``checks.exercise_1_1.check(x)`` never raises and returns the :class:`Result`
(``bool(result)`` says whether it passed): use it in scripts and tests.

The checks accept edutorch objects and real PyTorch objects alike: a check
builds its own test inputs with the library the answer comes from.

Layout: ``_common.py`` holds what every check shares, ``lessonNN.py`` the
checks of lesson NN, and ``catalogue/lessonNN.py`` the typical mistakes of
each exercise, as data (tests/lessons/test_catalogue.py runs them). A released
lesson folder carries ``__init__.py``, ``_common.py`` and its own
``lessonNN.py`` only: this package exports whatever lesson modules it finds.
"""
from ._common import NotYet, Result, exercise  # noqa: F401  (checks.Result, checks.NotYet)


def _export_lessons():
    """Make every public name of each ``lessonNN`` module a name of ``checks`` itself."""
    import importlib
    import pkgutil
    from types import ModuleType

    for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        if info.name.startswith("lesson"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            globals().update({name: value for name, value in vars(module).items()
                              if not name.startswith("_") and not isinstance(value, ModuleType)})


_export_lessons()
