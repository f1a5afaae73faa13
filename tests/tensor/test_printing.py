"""``repr(tensor)`` must read exactly like PyTorch's, over many kinds of values."""
import numpy as np
import pytest

import edutorch as et

torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")

CASES = {
    "floats": lambda L: L.tensor([1.5, -2.25, 3.0]),
    "integral floats": lambda L: L.tensor([1.0, 2.0, -3.0]),
    "float scalar": lambda L: L.tensor(3.14159),
    "integral scalar": lambda L: L.tensor(2.0),
    "negative zero": lambda L: L.tensor([-0.0, 1.0]),
    "ints": lambda L: L.tensor([1, -20, 300]),
    "int scalar": lambda L: L.tensor(7),
    "bools": lambda L: L.tensor([True, False, True]),
    "bool scalar": lambda L: L.tensor(False),
    "2-D": lambda L: L.tensor([[1.5, 2.0], [-3.25, 4.0]]),
    "3-D": lambda L: L.arange(24).reshape(2, 3, 4),
    "3-D floats": lambda L: L.arange(12, dtype=L.float32).reshape(2, 3, 2) / 3,
    "4-D": lambda L: L.ones(2, 1, 2, 2),
    "sci small": lambda L: L.tensor([1e-5, 1.0]),
    "sci large": lambda L: L.tensor([1e9, 1.0]),
    "sci wide range": lambda L: L.tensor([0.001, 12345.0]),
    "large integral floats": lambda L: L.tensor([1e10, 2.0]),
    "inf nan": lambda L: L.tensor([float("inf"), float("-inf"), float("nan"), 1.5]),
    "only nan": lambda L: L.tensor([float("nan")]),
    "empty": lambda L: L.tensor([]),
    "empty 2-D": lambda L: L.zeros(0, 3),
    "empty int": lambda L: L.zeros(0, dtype=L.int64),
    "float64": lambda L: L.tensor([1.5, 2.0], dtype=L.float64),
    "float64 scalar": lambda L: L.tensor(1.0, dtype=L.float64),
    "float16": lambda L: L.tensor([1.5, 2.0], dtype=L.float16),
    "int32": lambda L: L.tensor([1, 2], dtype=L.int32),
    "uint8": lambda L: L.tensor([1, 2], dtype=L.uint8),
    "int8": lambda L: L.tensor([1, -2], dtype=L.int8),
    "requires grad": lambda L: L.tensor([1.0, 2.0], requires_grad=True),
    "grad_fn": lambda L: L.tensor([1.0, 2.0], requires_grad=True) * 2,
    "grad_fn float64": lambda L: L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True) + 1,
    "grad_fn scalar": lambda L: (L.tensor([1.0, 2.0], requires_grad=True) ** 2).sum(),
    "grad_fn 2-D": lambda L: L.ones(2, 3, requires_grad=True).exp(),
    "long row wraps": lambda L: L.arange(40, dtype=L.float32) / 7,
    "long int row": lambda L: L.arange(60),
    "summarized 1-D": lambda L: L.arange(2000),
    "summarized floats": lambda L: L.arange(1500, dtype=L.float32) / 3,
    "summarized 2-D": lambda L: L.arange(1200).reshape(40, 30),
    "summarized 3-D": lambda L: L.arange(2000, dtype=L.float64).reshape(10, 10, 20),
    "mixed widths": lambda L: L.tensor([[1.0, -100.5], [0.25, 7.0]]),
    "big ints": lambda L: L.tensor([123456789012, -1]),
    "round to 4": lambda L: L.tensor([0.123456, 1.0]),
    "tiny": lambda L: L.tensor([1e-10]),
    "mostly zeros": lambda L: L.tensor([0.0, 0.0, 1e-3]),
    "negative sci": lambda L: L.tensor([-1e-6, 2e3]),
    "bool 2-D": lambda L: L.tensor([[True, False], [False, True]]),
    "requires grad 2-D": lambda L: L.zeros(2, 2, requires_grad=True),
    "view of summarized": lambda L: L.arange(3000).reshape(3, 1000)[:, :5],
    "summarized bools": lambda L: L.arange(1100) % 3 == 0,
    "sci with zeros": lambda L: L.tensor([0.0, 1e-7, 5.0]),
    "nan with ints": lambda L: L.tensor([float("nan"), 2.0, 3.0]),
    "int64 column": lambda L: L.arange(5).reshape(5, 1),
    "wide 2-D float": lambda L: L.arange(60, dtype=L.float32).reshape(3, 20) / 9,
    "random": lambda L: L.tensor(np.random.default_rng(0).standard_normal((3, 5)).astype("float32")),
    "random 1-D wrap": lambda L: L.tensor(np.random.default_rng(1).standard_normal(20).astype("float32") * 100),
}


@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_torch(name):
    assert repr(CASES[name](et)) == repr(CASES[name](torch))


@pytest.mark.parametrize("name", ["floats", "ints", "grad_fn", "2-D", "bools"])
def test_str_matches_torch(name):
    assert str(CASES[name](et)) == str(CASES[name](torch))


def test_size_dtype_device_reprs_match_torch():
    for lib_expr in (lambda L: L.ones(2, 3).shape, lambda L: L.ones(2).dtype, lambda L: L.ones(2).device,
                     lambda L: L.float64, lambda L: L.Size([2, 3]) if hasattr(L, "Size") else None,
                     lambda L: L.ones(2, 3).size(), lambda L: L.ones(()).shape):
        assert repr(lib_expr(et)) == repr(lib_expr(torch))
