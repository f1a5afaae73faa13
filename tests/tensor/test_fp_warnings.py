"""0/0, log(0), sqrt(-1)... give nan/inf silently, as in PyTorch (NumPy would warn)."""
import math
import warnings

import pytest

import edutorch as et

CASES = {
    "div by zero": lambda x: x / 0,
    "zero over zero": lambda x: x / x,
    "log": lambda x: x.log(),
    "log1p": lambda x: (x - 1).log1p(),
    "sqrt": lambda x: x.sqrt(),
    "rsqrt": lambda x: x.rsqrt(),
    "reciprocal": lambda x: x.reciprocal(),
    "rdiv": lambda x: 1 / x,
    "pow fractional": lambda x: x ** 0.5,
    "pow negative": lambda x: x ** -1,
    "pow tensor": lambda x: x ** et.tensor(0.5),
    "negative base": lambda x: (-2.0) ** x,
}


@pytest.mark.parametrize("name", list(CASES))
def test_no_numpy_warning_forward_and_backward(name):
    x = et.tensor([0.0, -1.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = CASES[name](x)
        y.sum().backward()
    assert any(math.isnan(v) or math.isinf(v) for v in y.tolist() + x.grad.tolist())


def test_values_match_torch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    for name, f in CASES.items():
        got = []
        for lib in (et, torch):
            x = lib.tensor([0.0, -1.0, 1.0], requires_grad=True)
            if name == "pow tensor":
                y = x ** lib.tensor(0.5)
            else:
                y = f(x)
            y.sum().backward()
            got.append([str(round(v, 5)) for v in y.tolist() + x.grad.tolist()])
        assert got[0] == got[1], name
