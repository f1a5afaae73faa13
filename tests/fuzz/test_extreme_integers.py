"""Python numbers at the edges of int64 (issue 23): ``sub``/``add`` with a huge ``alpha``,
``fill_``/``masked_fill``/``clamp``/``where``/``full`` with a value that does not fit, true
division by ``2**63``.

PyTorch reads a Python int as an int64, or as a uint64 from 2**63 on (OverflowError beyond
64 bits).  Arithmetic wraps it to the tensor's bits; ops that store it (``fill_``...) check
that it fits (RuntimeError "value cannot be converted to type int64_t without overflow").
The expectations are PyTorch 2.13's answers; the parity test compares them with torch.
"""
import pytest

import edutorch

BIG = 2 ** 63
CASES = [  # (expression over x, xf, xi, xu, m and a, its value or "ErrorType: message")
    ("x - a", BIG, [-9223372036854775805]),
    ("x.sub(1, alpha=a)", BIG, [-9223372036854775805]),
    ("x.sub(y, alpha=a)", BIG + 1, [1]),
    ("x.sub(y, alpha=a)", -BIG, [3]),
    ("x.sub_(y, alpha=a)", 2 ** 64 - 1, [5]),
    ("xf.sub(yf, alpha=a)", BIG + 1, [1.8446744073709552e+19]),
    ("x.sub(y, alpha=a)", -BIG - 1, "OverflowError: can't convert negative int to unsigned"),
    ("x.add(y, alpha=a)", BIG, "RuntimeError: value cannot be converted to type int64_t without overflow"),
    ("xf.sub(yf, alpha=a)", 1e40, "RuntimeError: value cannot be converted to type float without overflow"),
    ("x.fill_(a)", BIG, "RuntimeError: value cannot be converted to type int64_t without overflow"),
    ("x.fill_(a)", -BIG, [-BIG]),
    ("x.fill_(a)", 2 ** 64, "OverflowError: int too big to convert"),
    ("x.fill_(a)", float("nan"), "RuntimeError: value cannot be converted to type int64_t without overflow"),
    ("xi.fill_(a)", 2 ** 40, "RuntimeError: value cannot be converted to type int without overflow"),
    ("xu.fill_(a)", -1, [255]),
    ("xu.fill_(a)", 300, "RuntimeError: value cannot be converted to type uint8_t without overflow"),
    ("xf.fill_(a)", 1e40, "RuntimeError: value cannot be converted to type float without overflow"),
    ("xf.fill_(a)", BIG, [9.223372036854776e+18]),
    ("x.masked_fill(m, a)", BIG, "RuntimeError: value cannot be converted to type int64_t without overflow"),
    ("x.clamp(max=a)", BIG, "RuntimeError: value cannot be converted to type int64_t without overflow"),
    ("x.clamp(min=a)", -BIG, [3]),
    ("torch.where(m, x, a)", BIG, "RuntimeError: value cannot be converted to type int64_t without overflow"),
    ("torch.full((1,), a, dtype=torch.int32)", BIG, "RuntimeError: value cannot be converted to type int without overflow"),
    ("torch.full((1,), a)", 1e40, "RuntimeError: value cannot be converted to type float without overflow"),
    ("x.div(a)", BIG, [3.2526065174565133e-19]),
    ("x * a", BIG + 1, [-9223372036854775805]),
    ("xf - a", 2 ** 64, "OverflowError: int too big to convert"),
    ("x.pow(a)", BIG, "RuntimeError: value cannot be converted to type int64_t without overflow"),
]


def run(torch, expression, a):
    x, y, m = torch.tensor([3]), torch.tensor([2]), torch.tensor([True])
    xf, yf = torch.tensor([3.0]), torch.tensor([2.0])
    xi, xu = torch.tensor([3], dtype=torch.int32), torch.tensor([3], dtype=torch.uint8)
    env = dict(torch=torch, x=x, y=y, m=m, xf=xf, yf=yf, xi=xi, xu=xu, a=a)
    try:
        return eval(expression, env).tolist()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("expression, a, expected", CASES, ids=[f"{c[0]} a={c[1]}" for c in CASES])
def test_extreme_python_numbers_as_in_pytorch(expression, a, expected):
    assert run(edutorch, expression, a) == expected


@pytest.mark.parametrize("expression, a, expected", CASES, ids=[f"{c[0]} a={c[1]}" for c in CASES])
def test_the_expectations_are_pytorchs(expression, a, expected):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    assert run(torch, expression, a) == expected
