"""``F.logsigmoid``, ``F.softshrink``, ``F.hardshrink``, ``kthvalue``, ``cummax``, ``cummin`` and
``take`` as one node each (issue 23).

Each is its own ``Function`` keeping what PyTorch's node keeps (``LogSigmoidBackward0``:
the input and a buffer; the shrinks: the input; ``KthvalueBackward0``: the indices only;
``CummaxBackward0``/``CumminBackward0``: the input and the indices),
so writing a saved tensor in place refuses backward exactly where PyTorch does.
Gradients, second derivatives and tangents are checked numerically in float64
without torch; names, saved attributes and errors against torch 2.13.
"""
import pytest

import edutorch as et
from edutorch.autograd import gradcheck, gradgradcheck

F = et.nn.functional
REASON = "real PyTorch not installed: parity test skipped"

# values away from the kinks at ±0.5 and from ties
VALUES = [[-1.7, -0.2, 0.9], [0.3, 2.4, -0.8]]
OPS = {
    "logsigmoid": lambda lib, x: lib.nn.functional.logsigmoid(x * 3),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x),
    "hardshrink": lambda lib, x: lib.nn.functional.hardshrink(x, 0.6),
    "kthvalue": lambda lib, x: x.kthvalue(2, 1).values,
    "kthvalue_keepdim": lambda lib, x: x.kthvalue(1, 0, keepdim=True).values,
    "kthvalue_0d": lambda lib, x: x[0, 1].kthvalue(1).values,
    "cummax": lambda lib, x: x.cummax(1).values,
    "cummin": lambda lib, x: x.cummin(0).values,
    "cummax_0d": lambda lib, x: x[1, 0].cummax(0).values,
    "take": lambda lib, x: x.t().take(lib.tensor([[5, 0], [-1, 5]])),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradients_second_derivatives_and_tangents_are_numerically_right(name):
    x = et.tensor(VALUES, dtype=et.float64, requires_grad=True)
    op = OPS[name]
    assert gradcheck(lambda t: op(et, t), (x,), check_forward_ad=True)
    assert gradgradcheck(lambda t: op(et, t), (x,))


WRITES = {  # forward, then a write in place, then backward
    "logsigmoid_input": lambda lib, x: [F_(lib).logsigmoid(a := x * 1), a.mul_(2)][0],
    "softshrink_input": lambda lib, x: [F_(lib).softshrink(a := x * 1), a.add_(1)][0],
    "hardshrink_input": lambda lib, x: [F_(lib).hardshrink(a := x * 1), a.zero_()][0],
    "logsigmoid_result": lambda lib, x: [v := F_(lib).logsigmoid(x * 1), v.mul_(2)][0],
    "kthvalue_input": lambda lib, x: [(a := x * 1).kthvalue(2, 1).values, a.mul_(2)][0],
    "kthvalue_result": lambda lib, x: [v := (x * 1).kthvalue(2, 1).values, v.mul_(2)][0],
    "cummax_input": lambda lib, x: [(a := x * 1).cummax(1).values, a.mul_(2)][0],
    "cummin_result": lambda lib, x: [v := (x * 1).cummin(0).values, v.mul_(2)][0],
}


def F_(lib):
    return lib.nn.functional


def _run(lib, write):
    x = lib.tensor(VALUES, dtype=lib.float64, requires_grad=True)
    try:
        write(lib, x).sum().backward()
    except RuntimeError as e:
        assert "modified by an inplace operation" in str(e)
        return "refused"
    return x.grad.tolist()


# what PyTorch 2.13 does: its nodes keep the input (activations) or only the indices (kthvalue)
EXPECTED = {"logsigmoid_input": "refused", "softshrink_input": "refused", "hardshrink_input": "refused",
            "logsigmoid_result": None, "kthvalue_input": [[0, 1, 0], [1, 0, 0]], "kthvalue_result": None,
            "cummax_input": "refused", "cummin_result": None}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_later_write_refuses_backward_where_pytorch_does(name):
    got = _run(et, WRITES[name])
    if EXPECTED[name] is not None:
        assert got == EXPECTED[name]
    else:
        assert got != "refused"


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_later_write_agrees_with_torch(name):
    torch = pytest.importorskip("torch", reason=REASON)
    mine, theirs = _run(et, WRITES[name]), _run(torch, WRITES[name])
    assert mine == theirs if "refused" in (mine, theirs) else et.allclose(et.tensor(mine), et.tensor(theirs))


def _node(lib, name):
    return OPS[name](lib, lib.tensor(VALUES, dtype=lib.float64, requires_grad=True)).grad_fn


def _saved(node):
    return {a: (tuple(v.shape) if hasattr(v, "shape") else v)
            for a in dir(node) if a.startswith("_saved") for v in [getattr(node, a)]}


@pytest.mark.parametrize("name", ["logsigmoid", "softshrink", "hardshrink", "kthvalue", "kthvalue_keepdim", "cummax",
                                  "cummin", "cummax_0d", "take"])
def test_names_and_saved_attributes_match_torch(name):
    torch = pytest.importorskip("torch", reason=REASON)
    mine, theirs = _node(et, name), _node(torch, name)
    assert mine.name() == theirs.name()
    assert _saved(mine) == _saved(theirs)


def test_names_and_saved_attributes_without_torch():
    x = et.tensor(VALUES, dtype=et.float64, requires_grad=True)
    assert F.logsigmoid(x).grad_fn.name() == "LogSigmoidBackward0"
    assert F.softshrink(x, 0.25).grad_fn._saved_lambd == 0.25
    assert F.hardshrink(x).grad_fn._saved_self is x
    node = x.kthvalue(2).values.grad_fn
    assert (node.name(), node._saved_dim, node._saved_self_sym_sizes) == ("KthvalueBackward0", 2 ** 64 - 1, (2, 3))


BAD = [
    lambda lib: lib.nn.functional.softshrink(lib.ones(2, dtype=lib.float64), -1.0),
    lambda lib: lib.nn.functional.softshrink(lib.ones(2, dtype=lib.float16), 1e6),
    lambda lib: lib.nn.functional.softshrink(lib.tensor([1, 2])),
    lambda lib: lib.nn.functional.hardshrink(lib.tensor([True])),
    lambda lib: lib.nn.functional.logsigmoid(lib.tensor([1, 2])),
    lambda lib: lib.tensor([True, False]).kthvalue(1),
    lambda lib: lib.ones(2, 3).kthvalue(4),
    lambda lib: lib.ones(2, 3).kthvalue(0, 0),
    lambda lib: lib.ones(2, 0).kthvalue(1),
    lambda lib: lib.tensor(2.0).kthvalue(2),
]


def _error(lib, make):
    try:
        make(lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_input_raises_pytorchs_error(i):
    torch = pytest.importorskip("torch", reason=REASON)
    assert _error(et, BAD[i]) == _error(torch, BAD[i])


def test_bad_input_raises_without_torch():
    assert _error(et, BAD[0]) == ("RuntimeError", "lambda must be in range [0, 1.79769e+308] for input dtype "
                                                  "Double, but found -1")
    assert _error(et, BAD[5]) == ("NotImplementedError", "\"kthvalue_cpu\" not implemented for 'Bool'")
    assert _error(et, BAD[6]) == ("RuntimeError", "kthvalue(): selected number k out of range for dimension 1")


def test_values_match_torch_at_extremes_and_nan():
    torch = pytest.importorskip("torch", reason=REASON)
    values = [-800.0, -30.0, -0.5, 0.0, 0.5, 40.0, 800.0, float("nan")]
    for f in (lambda lib, x: lib.nn.functional.logsigmoid(x), lambda lib, x: lib.nn.functional.softshrink(x),
              lambda lib, x: lib.nn.functional.hardshrink(x)):
        mine = f(et, et.tensor(values, dtype=et.float64)).tolist()
        theirs = f(torch, torch.tensor(values, dtype=torch.float64)).tolist()
        assert str(mine) == str(theirs)  # NaN and the sign of zeros too
