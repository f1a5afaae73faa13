"""What every lesson's checks share: the result a student sees, the graded wrapper, and helpers
that read edutorch and real PyTorch objects alike."""
from __future__ import annotations

import functools
import os
import sys
from types import ModuleType

import numpy as np

import edutorch


class Result:
    """The outcome of one check: ``ok`` plus a message for the student."""

    def __init__(self, ok, message):
        self.ok = bool(ok)
        self.message = message

    def __bool__(self):
        return self.ok

    def __repr__(self):
        mark = "✓ correct" if self.ok else "✗ not yet"
        return f"{mark}: {self.message}"


class NotYet(AssertionError):
    """A graded check failed under nbgrader: the cell raises, so nbgrader scores it 0.

    The hint is printed above the error; the error itself is one line naming
    the exercise (Jupyter shows ``_render_traceback_`` instead of a traceback
    into this package).
    """

    def _render_traceback_(self):
        return [f"NotYet: {self}"]


def grading():
    """True while nbgrader autogrades (or validates) a notebook: it sets ``NBGRADER_EXECUTION``."""
    return bool(os.environ.get("NBGRADER_EXECUTION"))


def exercise(check):
    """Turn a check returning a :class:`Result` into a graded check.

    The graded function returns the Result: Jupyter shows it as one line,
    ``✓ correct: ...`` or ``✗ not yet: <hint>``, and a student's Run All goes
    on to the next cell either way. Under nbgrader's autograding a wrong answer
    prints the hint and raises :class:`NotYet` instead, so the cell scores 0.

    A blank answer (``...``) and an answer the check cannot use (a crash on
    ``None``, a wrong type) are reported as hints, never as an error inside
    this package. ``graded.check`` returns the Result only.
    """
    number = check.__name__.removeprefix("exercise_").replace("_", ".")

    @functools.wraps(check)
    def result_of(*args, **kwargs):
        if any(arg is ... for arg in (*args, *kwargs.values())):
            return _hint("write your answer in the cell above (it still holds ...)")
        try:
            return check(*args, **kwargs)
        except Exception as error:  # the answer is not something the check can use
            return _hint(f"the check could not use your answer: {type(error).__name__}: {error}")

    @functools.wraps(check)
    def graded(*args, **kwargs):
        result = result_of(*args, **kwargs)
        if not result and grading():
            print(repr(result))
            raise NotYet(f"exercise {number} is not right yet (0 points): the hint is printed above")
        return result

    graded.check = result_of
    return graded


def _correct(message):
    return Result(True, message)


def _hint(message):
    return Result(False, message)


def _values(tensor):
    """A float64 NumPy copy of an edutorch or torch tensor (or a plain number/list)."""
    if hasattr(tensor, "detach"):
        tensor = tensor.detach()
    if hasattr(tensor, "cpu"):
        tensor = tensor.cpu()
    if hasattr(tensor, "numpy"):
        tensor = tensor.numpy()
    # a copy even for float64: a view would follow later in-place changes (optimizer state, BatchNorm)
    return np.array(tensor, dtype=np.float64, copy=True)


def _is_tensor(obj):
    return hasattr(obj, "requires_grad") and hasattr(obj, "grad_fn")


def _library(obj):
    """``torch`` if ``obj`` (an object or a class) comes from real PyTorch, else ``edutorch``.

    A student's own ``nn.Module`` or ``autograd.Function`` subclass is recognised
    by its base classes, so the check can build its inputs with the same library.
    """
    klass = obj if isinstance(obj, type) else type(obj)
    for base in klass.__mro__:
        if base.__module__.split(".")[0] == "torch" and "torch" in sys.modules:
            return sys.modules["torch"]
    return edutorch


def _linear_layers(net):
    """``(name, module)`` for every ``nn.Linear`` of ``net``, in the library ``net`` comes from."""
    linear = _library(net).nn.Linear
    return [(name, m) for name, m in net.named_modules() if isinstance(m, linear)]


def _node_name(node):
    """``MulBackward0``, ``AccumulateGrad``, ``MyFnBackward``: the class name of a graph node."""
    return type(node).__name__


def _library_of_function(function):
    """``torch`` if ``function`` works with real PyTorch, else ``edutorch``.

    The names the function uses (``torch.relu``, ``nn.Linear``, a closure
    variable, a helper function it calls) say which library it works with; a
    function that names neither gets the library its notebook imported as
    ``torch``/``nn``.
    """
    roots = _roots_used(function, set())
    if "torch" not in roots and "edutorch" not in roots:
        names = getattr(function, "__globals__", {})
        roots = {_root_module(names.get("torch")), _root_module(names.get("nn"))}
    if "torch" in roots and "torch" in sys.modules:
        return sys.modules["torch"]
    return edutorch


def _roots_used(function, seen):
    """The root modules of the globals and closure variables ``function`` uses, and of those its
    own helper functions use."""
    if id(function) in seen or not hasattr(function, "__code__"):
        return set()
    seen.add(id(function))
    names = getattr(function, "__globals__", {})
    used = [names.get(name) for name in _code_names(function.__code__)]
    used += [cell.cell_contents for cell in function.__closure__ or () if _filled(cell)]
    roots = {_root_module(value) for value in used}
    for value in used:
        roots |= _roots_used(value, seen)
    return roots


def _filled(cell):
    try:
        _ = cell.cell_contents
    except ValueError:  # a closure variable not assigned yet
        return False
    return True


def _root_module(value):
    """``"torch"`` for ``torch.nn``, ``torch.nn.Linear``, a torch tensor; ``"edutorch"`` for theirs."""
    if isinstance(value, ModuleType):
        return value.__name__.split(".")[0]
    where = getattr(value, "__module__", None) or type(value).__module__
    return (where or "").split(".")[0]


def _code_names(code):
    """The global names a code object and the functions nested in it use."""
    if code is None:
        return []
    nested = [c for c in code.co_consts if hasattr(c, "co_names")]
    return list(code.co_names) + [name for c in nested for name in _code_names(c)]


class _seeded:
    """``with _seeded(lib):`` the check's random numbers from seed 0; the user's stream restored."""

    def __init__(self, lib):
        self.lib = lib

    def __enter__(self):
        self.state = self.lib.get_rng_state()
        self.lib.manual_seed(0)

    def __exit__(self, *exc):
        self.lib.set_rng_state(self.state)


def _state_arrays(module):
    """``{key: float64 array}`` of a module's state_dict (to see what a call changed)."""
    return {key: _values(value) for key, value in module.state_dict().items()}


def _multiple(got, expected, rtol=1e-5, atol=1e-6):
    """``k`` when ``got`` is ``k`` times ``expected`` for an integer ``k`` >= 2, else None."""
    if got.shape != expected.shape or not np.any(expected):
        return None
    k = float(np.sum(got * expected) / np.sum(expected * expected))
    if round(k) >= 2 and np.allclose(got, round(k) * expected, rtol=rtol, atol=atol):
        return round(k)
    return None
