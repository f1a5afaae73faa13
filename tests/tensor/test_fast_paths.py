"""Fast paths keep PyTorch's behaviour: number-operand edges, in-place ops without a graph."""
import numpy as np
import pytest

import edutorch as et

torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")

EXPRESSIONS = ["x*2", "2*x", "x+2", "2+x", "x-2", "2-x", "x/2", "2/x", "x**2", "2**x",
               "x.add(2, alpha=3)", "x.sub(2)", "x.mul(2)", "x.div(2)", "x % 2", "x*True", "x*y", "x+y"]


def _edges(node):
    return [(None if n is None else type(n).__name__, nr) for n, nr in node.next_functions]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_next_functions_of_number_operands_match_torch(expr):
    results = []
    for lib in (et, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.tensor([1.0, 2.0, 3.0])  # noqa: F841 (read by eval(expr))
        out = eval(expr)
        results.append((out.grad_fn.name(), _edges(out.grad_fn)))
        out.sum().backward()
        results.append(x.grad.tolist())
    assert results[:2] == results[2:]


@pytest.mark.parametrize("op, alpha", [("add_", None), ("add_", -0.5), ("sub_", None), ("sub_", -0.5), ("mul_", None)])
@pytest.mark.parametrize("other", ["tensor", "row", "number"])
def test_inplace_without_graph_matches_torch(op, other, alpha):
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    results = []
    for lib in (et, torch):
        p = lib.tensor(base, requires_grad=True)
        arg = {"tensor": lib.tensor(base + 1), "row": lib.tensor(base[0] * 2), "number": 1.5}[other]
        kwargs = {} if alpha is None else {"alpha": alpha}
        with lib.no_grad():
            out = getattr(p, op)(arg, **kwargs)
        assert out is p
        results.append((p.detach().numpy().tolist(), p._version, p.requires_grad, p.grad_fn))
    assert results[0] == results[1]


def test_inplace_without_graph_errors_match_torch():
    for lib in (et, torch):
        with lib.no_grad():
            with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
                lib.ones(3).add_(lib.ones(2, 3))
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            lib.ones(3, requires_grad=True).add_(1.0)
        # an int tensor stays int (the general path handles promotion rules)
        t = lib.tensor([1, 2, 3])
        t.add_(1)
        assert t.tolist() == [2, 3, 4]


def test_inplace_saved_input_is_a_snapshot():
    # pow_ saves its input: backward must see the values from before the write
    grads = []
    for lib in (et, torch):
        x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = x * 1
        y.pow_(2)
        y.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [1.0, 2.0, 4.0]


@pytest.mark.parametrize("op", ["mul_", "div_", "add_", "sub_"])
def test_inplace_on_plain_tensor_with_grad_operand_matches_torch(op):
    # y does not require grad, w does: the node saves y's old values (PyTorch's original self)
    results = []
    for lib in (et, torch):
        y = lib.tensor([1.0, 2.0, 3.0])
        w = lib.tensor([1.0, 1.0, 2.0], requires_grad=True)
        getattr(y, op)(w)
        y.sum().backward()
        results.append((w.grad.tolist(), y.grad_fn.name(), y._version, y.detach().numpy().tolist()))
    assert results[0] == results[1]
