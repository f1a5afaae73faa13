"""Run one program under real PyTorch and under edutorch and compare what comes out.

A program is a function of the module (``torch`` or ``edutorch``): it builds
its inputs from NumPy arrays, so both libraries see the same numbers, and
returns tensors (or nests of them).  An exception is compared by type and
message.
"""
import numpy as np

import edutorch


def outcome(program, T):
    """``("ok", numpy nest)`` or ``("error", type name, message)``."""
    try:
        return "ok", to_numpy(program(T))
    except Exception as e:  # noqa: BLE001 - the exception is the observable being compared
        return "error", type(e).__name__, str(e)


def to_numpy(tree):
    if isinstance(tree, (tuple, list)):
        return type(tree)(to_numpy(t) for t in tree)
    if isinstance(tree, dict):
        return {k: to_numpy(v) for k, v in tree.items()}
    if hasattr(tree, "detach"):
        return np.asarray(tree.detach().numpy())
    return tree


def assert_same(mine, theirs, rtol=1e-6, atol=1e-7):
    assert type(mine) is type(theirs) or not isinstance(theirs, (tuple, list, dict)), (mine, theirs)
    if isinstance(theirs, (tuple, list)):
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            assert_same(a, b, rtol, atol)
    elif isinstance(theirs, dict):
        assert list(mine) == list(theirs)
        for k in theirs:
            assert_same(mine[k], theirs[k], rtol, atol)
    elif isinstance(theirs, np.ndarray):
        assert mine.shape == theirs.shape and mine.dtype == theirs.dtype, (mine, theirs)
        np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=atol)
    else:
        assert mine == theirs


def check_parity(real_torch, program, rtol=1e-6, atol=1e-7):
    """The program gives the same values, or the same error, under both libraries."""
    theirs = outcome(program, real_torch)
    mine = outcome(program, edutorch)
    assert mine[0] == theirs[0], (mine, theirs)
    if theirs[0] == "error":
        assert mine[1:] == theirs[1:]
    else:
        assert_same(mine[1], theirs[1], rtol, atol)
    return mine
