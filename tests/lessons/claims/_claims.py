"""Shared by the claims files: real PyTorch or a clean skip, and the small helpers they use.

Each ``test_claims_NN.py`` checks, under real PyTorch 2.13, the sentences of lesson NN that say
how PyTorch behaves: a test per sentence, named after it, quoting it in its docstring. A sentence
that stops being true (a wrong edit, a new PyTorch) then fails CI instead of misleading a class.
"""
import warnings

import pytest

SKIP_REASON = ("real PyTorch not installed: the lessons' claims about PyTorch are not checked "
               "(pip install torch==2.13.0)")


def real_torch():
    """The real ``torch`` module; skips the calling test module when it is not installed."""
    return pytest.importorskip("torch", reason=SKIP_REASON)


def warnings_of(fn, *args, **kwargs):
    """``(result, [(category, message), ...])``: every warning ``fn(*args, **kwargs)`` emits."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs)
    return result, [(w.category, str(w.message)) for w in caught]


def error_of(fn, *args, **kwargs):
    """The exception ``fn(*args, **kwargs)`` raises (the test fails if it raises none)."""
    try:
        fn(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - the caller asserts the type and message
        return error
    raise AssertionError(f"{getattr(fn, '__name__', fn)} raised nothing")
