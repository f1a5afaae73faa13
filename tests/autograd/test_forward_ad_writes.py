"""Forward mode and writes: what the differential fuzzer's forward mode found (issue 23).

Each case is a short program on dual tensors (``dual(primal, tangent)`` makes
one) that ends with in-place writes, views of duals, ``detach_()``...  It
returns named tensors; every one's primal and tangent (``unpack_dual``) must be

* PyTorch's (skipped without PyTorch), and
* without PyTorch: the central difference of the same program run on
  ``primal ± eps * tangent`` in float64, for every name with a tangent, and no
  tangent for the names a case lists in ``none`` (PyTorch gives them none).

The rules they pin down, PyTorch's:

* ``make_dual``'s output is a view of its primal for backward only: its tangent
  is its own, a write through it gives the primal no tangent, and a tangent the
  primal gets later is not the dual's; views of the dual are views of its tangent
  (``unpack_dual(...).primal`` likewise never gets a tangent);
* an in-place op on a view (also when it records a graph: an operand requires
  grad) updates the view's tangent as a write of the view: its base's tangent
  changes at the same places, and a base without one gets zeros first;
* every tangent is laid out in memory as its primal (so ``view`` allowed on one
  is allowed on the other), and a new output's tangent is never an input's;
* ``detach_()`` drops the tangent (views made before keep theirs);
* bookkeeping of views' graphs (a write into the base of ``unbind`` outputs)
  does not need tangent formulas.
"""
from dataclasses import dataclass, field

import numpy as np
import pytest

import edutorch

EPS = 1e-6


@dataclass(frozen=True)
class Case:
    id: str
    program: object  # program(lib, dual) -> {name: tensor}
    none: tuple = ()  # names PyTorch gives no tangent
    fd: bool = True  # names with a tangent are checked by central differences
    skip_fd: tuple = field(default=())  # names whose value is not a function of the duals alone


def _t(lib, values, **kw):
    return lib.tensor(values, dtype=lib.float64, **kw)


# --- the programs ---------------------------------------------------------------------------
def dual_times_a_tensor_that_requires_grad(lib, dual):
    x = dual([2.0, -1.5], [1.0, 0.5])
    y = _t(lib, [3.0, 0.7], requires_grad=True)
    x.mul_(y)  # records a graph (y requires grad): the in-place-on-a-view path
    return {"x": x}


def dual_divided_by_a_tensor_that_requires_grad(lib, dual):
    x = dual([2.0, -1.5], [1.0, 0.5])
    x.div_(_t(lib, [3.0, 0.7], requires_grad=True))
    return {"x": x}


def a_tensor_that_requires_grad_copied_into_a_dual(lib, dual):
    x = dual([2.0, -1.5], [1.0, 0.5])
    x.copy_(_t(lib, [3.0, 0.7], requires_grad=True))
    return {"x": x}


def view_of_a_dual_times_a_tensor_that_requires_grad(lib, dual):
    x = dual([2.0, -1.5, 0.3], [1.0, 0.5, -2.0])
    v = x[:2]
    v.mul_(_t(lib, [3.0, 0.7], requires_grad=True))
    return {"x": x, "v": v}


def dual_of_a_non_leaf_view_written_with_a_graph(lib, dual):
    x = dual([[2.0, -1.5], [0.3, 1.1]], [[1.0, 0.5], [-2.0, 0.25]])
    v = x.diagonal()
    v.sigmoid_()
    v.mul_(_t(lib, [3.0, 0.7], requires_grad=True))
    return {"x": x, "v": v}


def write_through_a_dual_gives_its_primal_no_tangent(lib, dual):
    b = _t(lib, [2.0, 3.0])
    x = lib.autograd.forward_ad.make_dual(b, _t(lib, [1.0, 1.0]))
    x.mul_(_t(lib, [3.0, 4.0], requires_grad=True))
    return {"b": b, "x": x}


def primal_of_a_dual_is_no_forward_view(lib, dual):
    fw = lib.autograd.forward_ad
    b = _t(lib, [2.0, 3.0])
    x = fw.make_dual(b, _t(lib, [1.0, 1.0]))
    p = fw.unpack_dual(x).primal
    b.mul_(dual([5.0, 5.0], [1.0, 2.0]))  # b gets a tangent; p, a view of b, does not
    return {"b": b, "x": x, "p": p}


def primal_of_a_dual_written(lib, dual):
    fw = lib.autograd.forward_ad
    b = _t(lib, [2.0, 3.0])
    p = fw.unpack_dual(fw.make_dual(b, _t(lib, [1.0, 1.0]))).primal
    p.mul_(dual([5.0, 5.0], [1.0, 2.0]))  # p gets a tangent; its base b does not
    return {"b": b, "p": p}


def view_of_a_primal_written(lib, dual):
    fw = lib.autograd.forward_ad
    x = fw.make_dual(_t(lib, [2.0, 3.0]), _t(lib, [1.0, 1.0]))
    v = x[:1]
    p = fw.unpack_dual(v).primal
    p.mul_(dual([5.0], [2.0]))
    return {"x": x, "v": v, "p": p}


def tangent_in_the_primals_layout(lib, dual):
    # log_softmax of a transposed view: a contiguous result in PyTorch, its tangent too, so
    # Linear's flatten is a view of both (it raised "view size is not compatible" here)
    x = dual(np.arange(12.0).reshape(4, 3, 1) / 10 - 0.5, np.arange(12.0).reshape(4, 3, 1) / 7 - 0.8)
    v = lib.log_softmax(x.reshape((3, 2, 2)).transpose(0, 2), 2).sigmoid()
    y = lib.nn.functional.linear(v, _t(lib, [[-0.91, -0.44, 0.85]]))
    return {"y": y, "flat": v.flatten(0, -2)}


def detach_in_place_drops_the_tangent(lib, dual):
    y = dual([2.0, 3.0], [1.0, 2.0]).sin()
    v = y[0]  # made before: keeps its tangent
    y.detach_()
    w = y[1]
    return {"y": y, "v": v, "w": w}


def detached_in_place_then_written_with_a_dual(lib, dual):
    y = dual([2.0, 3.0], [1.0, 2.0]) * 1
    y.detach_()
    y.mul_(dual([0.5, -1.5], [0.25, 1.0]))
    return {"y": y}


def output_tangent_is_not_the_inputs(lib, dual):
    x = dual(-0.32, -0.52)
    v = x[...]
    c = lib.cumprod(v, dim=-1)  # of a 0-d tensor: its tangent is the input's, as a copy
    c[...] = -0.5
    d = lib.cumprod(x * 1, dim=0)
    lib.nn.functional.hardswish(d, inplace=True)
    return {"x": x, "v": v, "c": c, "d": d}


def write_into_the_base_of_unbind_outputs(lib, dual):
    x = dual([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]])
    y = lib.add(x, _t(lib, [[0.5, 1.5], [2.0, -1.0]], requires_grad=True), alpha=0.5)
    parts = y.unbind(1)  # alive while y is written: their graphs are remade
    lib.nn.functional.selu_(y)
    return {"y": y} if parts else {}


def write_into_the_base_of_split_outputs_with_a_graph(lib, dual):
    x = dual([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]])
    y = x * _t(lib, [[0.5, 1.5], [2.0, -1.0]], requires_grad=True)
    parts = y.split(1, 0)
    y.zero_()
    y.add_(x)
    return {"y": y} if parts else {}


def expand_of_a_dual_written(lib, dual):
    x = dual([[1.0, 2.0]], [[0.5, -1.0]]) * 1
    e = x.expand(1, 2)
    e.mul_(_t(lib, [[3.0, 0.25]], requires_grad=True))
    return {"x": x, "e": e}


def expand_of_a_dual_partly_written(lib, dual):
    # the tangent's memory repeats as the values' does: written as the op writes them (was the
    # overlap error for an empty write, and a whole-tensor copy in general)
    x = dual(2.0, 3.0) * 1
    e = x.expand(2)
    e[1:-1] = -0.5
    y = dual(2.0, 3.0) * 1
    f = y.expand(2)
    f[:1] = dual([1.0], [7.0])
    return {"x": x, "e": e, "y": y, "f": f}


def view_of_a_non_contiguous_primal_written(lib, dual):
    # the primal of a transposed dual: the zero tangent its view's write gives it is laid out as
    # it (not contiguous), and the view's tangent is a view of that one (was a tangent of its own)
    fw = lib.autograd.forward_ad
    x = fw.make_dual(_t(lib, [[-1.11, 0.84, -1.77], [-0.88, 1.45, -0.41]]), _t(lib, [[1.0, 2.0, 3.0]] * 2))
    x.t_()
    p = fw.unpack_dual(x).primal
    v = p.t()
    v[lib.tensor([0, 1])] = dual([-2.11, 2.41, -1.91], [-0.78, -1.4, -1.48])
    y = dual([-1.14, -1.83], [1.18, 1.51])
    r = fw.unpack_dual(lib.stack([y, y], 1).mT).primal
    r.squeeze(1).index_add_(0, lib.tensor([1]), dual([[0.11, -1.99]], [[-1.03, -1.43]]))
    return {"p": p, "v": v, "r": r}


def tangent_of_a_dual_of_a_view_is_a_copy(lib, dual):
    # PyTorch's has_same_meta: a tangent that does not sit in memory as the primal does (a chunk of
    # 3 at offset 2, a tangent of its own memory) is copied: writes through the dual leave it alone
    fw = lib.autograd.forward_ad
    base = _t(lib, [1.61, -0.23, -0.92])
    given = _t(lib, [0.54])
    x = fw.make_dual(base.chunk(3, 0)[2], given)
    x.clamp_min_(-0.2)
    return {"x": x, "given": given}


def view_of_a_0d_tensor_written(lib, dual):
    # a 0-d base's zero tangent and its view's: the view's is a view of the base's (``t[...]``, not
    # the copy ``t[()]`` makes; seeds 9750003017, 9750005826)
    x = _t(lib, -0.55)
    v = lib.broadcast_to(x, ())
    v += dual(-1.98, 0.55)
    y = _t(lib, -1.01).square()
    w = y.t()
    w.addcdiv_(dual(-0.35, 1.36), dual(-1.49, -1.71))
    return {"x": x, "v": v, "y": y, "w": w}


CASES = [
    Case("dual-mul_-requires-grad", dual_times_a_tensor_that_requires_grad),
    Case("dual-div_-requires-grad", dual_divided_by_a_tensor_that_requires_grad),
    Case("dual-copy_-requires-grad", a_tensor_that_requires_grad_copied_into_a_dual),
    Case("view-of-dual-mul_-requires-grad", view_of_a_dual_times_a_tensor_that_requires_grad),
    Case("diagonal-of-dual-written-with-graph", dual_of_a_non_leaf_view_written_with_a_graph),
    Case("write-through-dual-primal-no-tangent", write_through_a_dual_gives_its_primal_no_tangent,
         none=("b",), skip_fd=("b", "x")),
    Case("unpacked-primal-no-forward-view", primal_of_a_dual_is_no_forward_view, none=("p",), skip_fd=("x",)),
    Case("unpacked-primal-written", primal_of_a_dual_written, none=("b",)),
    Case("view-of-unpacked-primal-written", view_of_a_primal_written, skip_fd=("x", "v")),
    Case("tangent-in-primal-layout", tangent_in_the_primals_layout),
    Case("detach_-drops-tangent", detach_in_place_drops_the_tangent, none=("y", "w")),
    Case("detach_-then-dual-write", detached_in_place_then_written_with_a_dual, skip_fd=("y",)),
    Case("output-tangent-own", output_tangent_is_not_the_inputs),
    Case("write-base-of-unbind", write_into_the_base_of_unbind_outputs),
    Case("write-base-of-split-with-graph", write_into_the_base_of_split_outputs_with_a_graph),
    Case("expand-of-dual-written", expand_of_a_dual_written),
    Case("expand-of-dual-partly-written", expand_of_a_dual_partly_written),
    Case("view-of-non-contiguous-primal-written", view_of_a_non_contiguous_primal_written, skip_fd=("p", "v", "r")),
    Case("view-of-0d-written", view_of_a_0d_tensor_written),
    Case("tangent-of-dual-of-view-copied", tangent_of_a_dual_of_a_view_is_a_copy, none=("given",),
         skip_fd=("x",)),
]
by_case = pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])


# --- running them -----------------------------------------------------------------------------
def forward_mode(lib, case):
    """{name: (primal, tangent or None)} with every ``dual(...)`` a dual tensor."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        outs = case.program(lib, lambda p, t: fw.make_dual(_t(lib, p), _t(lib, t)))
        return {name: _numpy(fw.unpack_dual(v)) for name, v in outs.items()}


def _numpy(pair):
    primal, tangent = pair
    return (primal.detach().numpy().copy(), None if tangent is None else tangent.detach().numpy().copy())


def shifted(case, h):
    """{name: values} of the program with every ``dual(p, t)`` the plain tensor ``p + h t`` (in a
    dual level: some programs make duals of their own, whose names ``skip_fd`` lists)."""
    with edutorch.autograd.forward_ad.dual_level():
        outs = case.program(edutorch, lambda p, t: _t(edutorch, p) + h * _t(edutorch, t))
        return {name: v.detach().numpy().copy() for name, v in outs.items()}


@by_case
def test_tangents_are_central_differences(case):
    got = forward_mode(edutorch, case)
    plus, minus = shifted(case, EPS), shifted(case, -EPS)
    for name, (primal, tangent) in got.items():
        if name in case.none:
            assert tangent is None, f"{name} has a tangent; PyTorch gives none"
            continue
        assert tangent is not None, f"{name} has no tangent"
        if name in case.skip_fd:
            continue
        np.testing.assert_allclose(tangent, (plus[name] - minus[name]) / (2 * EPS), rtol=1e-6, atol=1e-7,
                                   err_msg=name)


@by_case
def test_primals_and_tangents_are_pytorchs(case):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    want, got = forward_mode(torch, case), forward_mode(edutorch, case)
    for name, (primal, tangent) in want.items():
        np.testing.assert_allclose(got[name][0], primal, rtol=1e-12, atol=1e-12, err_msg=f"{name} primal")
        if tangent is None:
            assert got[name][1] is None, f"{name}: PyTorch gives no tangent"
        else:
            assert got[name][1] is not None, f"{name}: no tangent (PyTorch: {tangent})"
            np.testing.assert_allclose(got[name][1], tangent, rtol=1e-12, atol=1e-12, err_msg=f"{name} tangent")


def test_a_dual_made_of_an_expand_is_refused_as_in_pytorch():
    # PyTorch copies the tangent into the primal's layout: into repeated memory, its overlap error
    fw = edutorch.autograd.forward_ad
    with fw.dual_level(), pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        fw.make_dual(edutorch.zeros(1, 3, dtype=edutorch.float64).expand(2, 3), edutorch.ones(2, 3))


@pytest.mark.parametrize("op", ["mul_", "addcmul_", "view-mul_"])
def test_an_op_reading_what_it_writes_gets_the_derivative(op):
    """``x.mul_(x)``: edutorch's tangent is the derivative, 2 x t.  PyTorch 2.13's formula reads the
    other operand after the write (x = 2, t = 1 gives 6, not 4): not compared with it."""
    fw = edutorch.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(_t(edutorch, [2.0, -0.5]) * 1, _t(edutorch, [1.0, 3.0]))
        if op == "mul_":
            x.mul_(x)
            want = 2 * np.array([2.0, -0.5]) * [1.0, 3.0]
        elif op == "addcmul_":
            x.addcmul_(x, x)  # x + x^2
            want = (1 + 2 * np.array([2.0, -0.5])) * [1.0, 3.0]
        else:
            x[:1].mul_(x[:1])
            want = np.array([4.0, 3.0])
        np.testing.assert_allclose(fw.unpack_dual(x).tangent.numpy(), want)


def _in_place_view_op_on_a_dual(lib):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(_t(lib, [[1.0, 2.0]]), _t(lib, [[3.0, 4.0]])) * 1
        tangent = fw.unpack_dual(x).tangent  # read before: PyTorch runs the view op on it in place
        x.t_()
        shapes = [tuple(tangent.shape)]
        x.squeeze_()
        shapes.append(tuple(tangent.shape))
        x.unsqueeze_(0)
        return shapes + [tuple(tangent.shape), tangent.tolist(), fw.unpack_dual(x).tangent.tolist()]


def _tangent_written_with_a_dual(lib, then):
    """The error (type, first words) or the tangent after ``then(x)``, where ``x``'s tangent was
    written with ``x`` itself (a tangent that has a tangent)."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(_t(lib, [2.22, -0.5]), _t(lib, [1.88, 0.25]))
        fw.unpack_dual(x).tangent.add_(fw.make_dual(_t(lib, [1.0, 1.0]), _t(lib, [0.5, 0.5])))
        try:
            out = then(lib, x)
        except RuntimeError as err:
            return str(err)
        return fw.unpack_dual(out).tangent.tolist()


THEN = {"mul": lambda lib, x: x * 2.0, "l1_loss": lambda lib, x: lib.nn.functional.l1_loss(x, x * 0),
        "view": lambda lib, x: x[:1], "floor": lambda lib, x: x.floor(), "sign": lambda lib, x: x.sign()}


def test_an_in_place_view_op_changes_the_tangent_tensor_itself():
    shapes_and_values = _in_place_view_op_on_a_dual(edutorch)
    assert shapes_and_values == [(2, 1), (2,), (1, 2), [[3.0, 4.0]], [[3.0, 4.0]]]


@pytest.mark.parametrize("then", sorted(THEN))
def test_a_tangent_that_has_a_tangent_is_refused_as_in_pytorch(then):
    got = _tangent_written_with_a_dual(edutorch, THEN[then])
    if then in ("floor", "sign"):  # a formula of zeros reads no tangent: PyTorch runs
        assert got == [0.0, 0.0]
    else:
        assert got == ("Setting a forward grad that itself has a forward gradient at the same level0 is not "
                       "supported.")


def test_a_dual_tangent_is_refused_by_make_dual():
    fw = edutorch.autograd.forward_ad
    with fw.dual_level(), pytest.raises(RuntimeError, match="^Setting a forward grad that itself has a forward"):
        fw.make_dual(_t(edutorch, [1.0]), fw.make_dual(_t(edutorch, [1.0]), _t(edutorch, [1.0])))


def test_tangent_tensors_behave_as_pytorchs():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    assert _in_place_view_op_on_a_dual(edutorch) == _in_place_view_op_on_a_dual(torch)
    for then in THEN.values():
        assert _tangent_written_with_a_dual(edutorch, then) == _tangent_written_with_a_dual(torch, then)
