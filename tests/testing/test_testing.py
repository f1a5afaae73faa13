"""``torch.testing.assert_close`` and the deprecated ``assert_allclose``.

Without torch: the documented rule (|a - e| <= atol + rtol |e|, per-dtype defaults)
and the report's numbers on hand-computed cases.  With torch: the same calls pass
or fail alike, with the same exception type and message.
"""
import math
import warnings

import numpy as np
import pytest

import edutorch
from edutorch.testing import assert_allclose, assert_close


def test_tolerance_rule_and_report_without_torch():
    assert_close(edutorch.tensor([1.0, 2.0]), edutorch.tensor([1.0, 2.0 + 1.0e-5]))  # up to 1e-5 + 1.3e-6 * 2
    with pytest.raises(AssertionError) as info:
        assert_close(edutorch.tensor([[1.0, 2.0], [3.0, 4.0]]), edutorch.tensor([[1.0, 2.0], [3.0, 5.0]]))
    assert str(info.value) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 4 (25.0%)\n"
        "Greatest absolute difference: 1.0 at index (1, 1) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1, 1) (up to 1.3e-06 allowed)")
    with pytest.raises(AssertionError, match="Tensor-likes are not equal!"):
        assert_close(edutorch.tensor([1, 2]), edutorch.tensor([1, 3]))  # integers compare exactly
    assert_close(edutorch.tensor([math.nan]), edutorch.tensor([math.nan]), equal_nan=True)
    with pytest.raises(AssertionError, match="The failure occurred for item \\['w'\\]\\[1\\]"):
        assert_close({"w": [edutorch.ones(1), edutorch.ones(1)]}, {"w": [edutorch.ones(1), edutorch.zeros(1)]})


def test_assert_allclose_warns_and_uses_its_looser_defaults():
    with pytest.warns(FutureWarning, match="assert_allclose"):
        assert_allclose(edutorch.tensor([1.0]), [1.00005])  # rtol 1e-4 for float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(AssertionError, match="up to 0.0001 allowed"):
            assert_allclose(edutorch.tensor([1.0]), [1.1])


def test_a_bool_against_an_int_compares_as_numbers():
    # PyTorch 2.13 fails inside its NumberPair with an internal KeyError here
    assert_close(True, 1, check_dtype=False)
    with pytest.raises(AssertionError, match="The \\(d\\)types do not match"):
        assert_close(True, 1)
    with pytest.raises(AssertionError, match="Scalars are not equal"):
        assert_close(False, 1, check_dtype=False)


def t(T, *a, **k):
    return T.tensor(*a, **k)


A = [1.0, 2.0, 3.0]
NAN, INF = math.nan, math.inf
CASES = {
    "one_mismatch": lambda T: T.testing.assert_close(t(T, A), t(T, [1.0, 2.5, 3.0])),
    "two_mismatches": lambda T: T.testing.assert_close(t(T, A), t(T, [1.0, 2.5, 3.5])),
    "2d_index": lambda T: T.testing.assert_close(t(T, [[1.0, 2.0], [3.0, 4.0]]), t(T, [[1.0, 2.0], [3.0, 5.0]])),
    "shape": lambda T: T.testing.assert_close(t(T, A), t(T, [1.0, 2.0])),
    "dtype": lambda T: T.testing.assert_close(t(T, A), t(T, A).double()),
    "dtype_unchecked": lambda T: T.testing.assert_close(t(T, A), t(T, A).double(), check_dtype=False),
    "dtype_int_float": lambda T: T.testing.assert_close(t(T, A), t(T, [1, 2, 3])),
    "ints_not_equal": lambda T: T.testing.assert_close(t(T, [1, 2, 3]), t(T, [1, 2, 4])),
    "ints_relative": lambda T: T.testing.assert_close(t(T, [1, 2, 3]), t(T, [1, 5, 3])),
    "bools": lambda T: T.testing.assert_close(t(T, [True, False]), t(T, [True, True])),
    "tensor_vs_list": lambda T: T.testing.assert_close(t(T, A), A),
    "lists": lambda T: T.testing.assert_close([t(T, A), t(T, A)], [t(T, A), t(T, A)]),
    "list_length": lambda T: T.testing.assert_close([t(T, A), t(T, A)], [t(T, A)]),
    "list_vs_tuple": lambda T: T.testing.assert_close([t(T, A)], (t(T, A),)),
    "dict_item": lambda T: T.testing.assert_close({"x": t(T, A)}, {"x": t(T, A) + 1}),
    "dict_keys": lambda T: T.testing.assert_close({"x": t(T, A)}, {"y": t(T, A)}),
    "list_item": lambda T: T.testing.assert_close([t(T, A), t(T, A)], [t(T, A), t(T, A) + 1]),
    "nested_item": lambda T: T.testing.assert_close({"a": [1, {"b": t(T, A)}]}, {"a": [1, {"b": t(T, A) * 2}]}),
    "structure_error_wins": lambda T: T.testing.assert_close([t(T, A) + 1, [1]], [t(T, A), [1, 2]]),
    "floats": lambda T: T.testing.assert_close(1.0, 1.1),
    "ints": lambda T: T.testing.assert_close(1, 2),
    "float_vs_int": lambda T: T.testing.assert_close(1.0, 1),
    "float_vs_int_unchecked": lambda T: T.testing.assert_close(1.0, 1, check_dtype=False),
    "floats_close": lambda T: T.testing.assert_close(1.0, 1.0 + 1e-8),
    "numpy_scalar": lambda T: T.testing.assert_close(np.float64(1.0), 1.5),
    "nan_vs_number": lambda T: T.testing.assert_close(t(T, A), t(T, [1.0, 2.0, NAN])),
    "nan_vs_nan": lambda T: T.testing.assert_close(t(T, [NAN]), t(T, [NAN])),
    "nan_equal": lambda T: T.testing.assert_close(t(T, [NAN, 1.0]), t(T, [NAN, 1.0]), equal_nan=True),
    "inf": lambda T: T.testing.assert_close(t(T, A), t(T, [1.0, 2.0, INF])),
    "inf_equal": lambda T: T.testing.assert_close(t(T, [INF]), t(T, [INF])),
    "only_rtol": lambda T: T.testing.assert_close(t(T, A), t(T, A) + 1e-3, rtol=1e-2),
    "only_atol_numbers": lambda T: T.testing.assert_close(1.0, 1.0, atol=1e-2),
    "both_tolerances": lambda T: T.testing.assert_close(t(T, A), t(T, A) + 1e-3, rtol=1e-2, atol=0),
    "msg_string": lambda T: T.testing.assert_close(t(T, A), t(T, A) + 1, msg="custom"),
    "msg_callable": lambda T: T.testing.assert_close(t(T, A), t(T, A) + 1, msg=lambda m: m + " extra"),
    "msg_with_item": lambda T: T.testing.assert_close([t(T, A)], [t(T, A) + 1], msg=lambda m: "<" + m + ">"),
    "requires_grad_ignored": lambda T: T.testing.assert_close(t(T, A, requires_grad=True), t(T, A)),
    "zero_dim": lambda T: T.testing.assert_close(t(T, 1.0), t(T, 2.0)),
    "zero_dim_int": lambda T: T.testing.assert_close(t(T, 3), t(T, 5)),
    "strings": lambda T: T.testing.assert_close("a", "a"),
    "none": lambda T: T.testing.assert_close(None, None),
    "none_mismatch": lambda T: T.testing.assert_close(t(T, A), None),
    "half": lambda T: T.testing.assert_close(t(T, A).half(), t(T, A).half() + 0.01),
    "bfloat16_close": lambda T: T.testing.assert_close(t(T, A).bfloat16(), t(T, A).bfloat16() + 0.01),
    "zero_expected": lambda T: T.testing.assert_close(t(T, [0.0, 1.0]), t(T, [1.0, 1.0])),
    "zero_expected_inf_relative": lambda T: T.testing.assert_close(t(T, [1.0, 1.0]), t(T, [0.0, 1.0])),
    "transposed_shape": lambda T: T.testing.assert_close(T.zeros(2, 3), T.zeros(3, 2)),
    "transposed_values": lambda T: T.testing.assert_close(t(T, [[1, 2], [3, 4]]), t(T, [[1, 2], [3, 4]]).t()),
    "booleans": lambda T: T.testing.assert_close(True, False),
    "numpy_arrays": lambda T: T.testing.assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.5])),
    "tensor_vs_numpy": lambda T: T.testing.assert_close(t(T, A), np.array(A)),
    "empty": lambda T: T.testing.assert_close(T.zeros(0), T.zeros(0)),
    "allclose_list": lambda T: T.testing.assert_allclose(t(T, A), [1.0, 2.0, 3.0]),
    "allclose_mismatch": lambda T: T.testing.assert_allclose(t(T, A), t(T, A) + 1),
    "allclose_scalar_expected": lambda T: T.testing.assert_allclose(t(T, A), 1.0),
    "allclose_nan_equal": lambda T: T.testing.assert_allclose(t(T, [NAN]), t(T, [NAN])),
    "allclose_float64": lambda T: T.testing.assert_allclose(t(T, A).double(), t(T, A).double() + 2e-5),
}


def outcome(T, case):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            CASES[case](T)
            result = ("ok",)
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            result = (type(e).__name__, str(e).replace("torch.Tensor", "edutorch._tensor.Tensor"))
    return result, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("case", CASES)
def test_parity(real_torch, case):
    assert outcome(edutorch, case) == outcome(real_torch, case)
