"""Integer and bool arithmetic corners, as PyTorch does them.

NumPy quietly returns 0 for an integer division by zero, refuses negative
integer powers, and turns ``bool ** bool`` into int8; PyTorch raises
``ZeroDivisionError``, computes integer powers, and has no bool kernel for
``//``, ``%`` and tensor ``**``.  A silently wrong integer is the worst
outcome, so each corner is pinned here (and compared with torch when present).
"""
import numpy as np
import pytest

import edutorch as et

CASES = {
    "int_floordiv_by_zero": lambda lib: lib.tensor([3, 0, -3]) // lib.tensor([0, 0, 2]),
    "int_mod_by_zero": lambda lib: lib.tensor([3, 0, -3]) % lib.tensor([0, 1, 2]),
    "int_floordiv_scalar_zero": lambda lib: lib.tensor([3, 1]) // 0,
    "scalar_floordiv_int_zero": lambda lib: 3 // lib.tensor([0, 1]),
    "trunc_div_by_zero": lambda lib: lib.div(lib.tensor([3, 1]), lib.tensor([0, 1]), rounding_mode="trunc"),
    "int_floordiv_true": lambda lib: lib.tensor([3]) // lib.tensor([True]),
    "bool_floordiv_bool": lambda lib: lib.tensor([True, False]) // lib.tensor([True, True]),
    "bool_mod_bool": lambda lib: lib.tensor([True, False]) % lib.tensor([True, True]),
    "bool_pow_bool_tensor": lambda lib: lib.tensor([True, False]) ** lib.tensor([True, True]),
    "bool_pow_true": lambda lib: lib.tensor([True, False]) ** True,
    "bool_pow_int": lambda lib: lib.tensor([True, False]) ** lib.tensor([2, -1]),
    "int_pow_negative_ints": lambda lib: lib.tensor([2, -1, 1, 0, -1]) ** lib.tensor([-1, -1, -2, -2, -2]),
    "scalar_pow_negative_ints": lambda lib: 2 ** lib.tensor([-1, 2]),
    "minus_one_pow_ints": lambda lib: (-1) ** lib.tensor([-1, -2, 3]),
    "int_pow_negative_scalar": lambda lib: lib.tensor([2, 1]) ** -1,
    "float_floordiv_zero": lambda lib: lib.tensor([1.0, -1.0, 0.0]) // 0,
    "float_mod_zero": lambda lib: lib.tensor([1.0, 0.0]) % 0,
    "maximum_number_first": lambda lib: lib.maximum(2, lib.tensor([1.0])),
    "maximum_number_second": lambda lib: lib.maximum(lib.tensor([1.0]), 2),
    "minimum_method_number": lambda lib: lib.tensor([1.0]).minimum(2),
}


def _outcome(lib, name):
    try:
        out = CASES[name](lib)
    except Exception as err:  # the type and text are what is compared
        return type(err).__name__, str(err)
    return str(out.dtype).replace("torch.", ""), out.tolist()


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    mine, theirs = _outcome(et, name), _outcome(torch, name)
    assert mine[0] == theirs[0]
    if isinstance(theirs[1], list):
        np.testing.assert_array_equal(np.array(mine[1], dtype=float), np.array(theirs[1], dtype=float))
    else:
        assert mine[1] == theirs[1]


def test_integer_division_by_zero_raises():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        et.tensor([3, 1]) // et.tensor([0, 1])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        et.tensor([3, 1]) % 0


def test_integer_negative_powers_follow_pytorch():
    assert (et.tensor([2, -1, 1, 0]) ** et.tensor([-1, -1, -3, -2])).tolist() == [0, -1, 1, 0]


def test_bool_kernels_are_missing_as_in_pytorch():
    with pytest.raises(NotImplementedError, match="\"div_floor_cpu\" not implemented for 'Bool'"):
        et.tensor([True]) // et.tensor([True])
    assert (et.tensor([True, False]) ** True).dtype == et.bool
