"""``out=`` on the ``torch.<op>`` functions tutorials use: the result written into the given tensor,
which is returned; resizing, dtype and autograd rules as PyTorch's (``_functional_more._with_out``)."""
import warnings

import numpy as np
import pytest

import edutorch


def _inputs(lib):
    rng = np.random.default_rng(0)
    return {"a": lib.tensor(rng.standard_normal((2, 3)), dtype=lib.float32),
            "b": lib.tensor(rng.uniform(0.5, 2, (2, 3)), dtype=lib.float32),
            "m": lib.tensor(rng.standard_normal((3, 4)), dtype=lib.float32),
            "i": lib.tensor([[3, 1, 2], [0, 5, 4]])}


F32, I64, BOOL = "float32", "int64", "bool"
# (name, call(lib, inputs, out), out shape, out dtype)
CASES = [
    ("add", lambda L, i, o: L.add(i["a"], i["b"], alpha=2, out=o), (2, 3), F32),
    ("sub", lambda L, i, o: L.sub(i["a"], 1, out=o), (2, 3), F32),
    ("mul", lambda L, i, o: L.mul(i["a"], i["b"], out=o), (2, 3), F32),
    ("div", lambda L, i, o: L.div(i["a"], i["b"], out=o), (2, 3), F32),
    ("matmul", lambda L, i, o: L.matmul(i["a"], i["m"], out=o), (2, 4), F32),
    ("mm", lambda L, i, o: L.mm(i["a"], i["m"], out=o), (2, 4), F32),
    ("addmm", lambda L, i, o: L.addmm(L.ones(4), i["a"], i["m"], out=o), (2, 4), F32),
    ("cat", lambda L, i, o: L.cat([i["a"], i["b"]], 1, out=o), (2, 6), F32),
    ("stack", lambda L, i, o: L.stack([i["a"], i["b"]], out=o), (2, 2, 3), F32),
    ("exp", lambda L, i, o: L.exp(i["a"], out=o), (2, 3), F32),
    ("sqrt", lambda L, i, o: L.sqrt(i["b"], out=o), (2, 3), F32),
    ("pow", lambda L, i, o: L.pow(i["a"], 2, out=o), (2, 3), F32),
    ("clamp", lambda L, i, o: L.clamp(i["a"], -0.5, 0.5, out=o), (2, 3), F32),
    ("where", lambda L, i, o: L.where(i["a"] > 0, i["a"], i["b"], out=o), (2, 3), F32),
    ("sum", lambda L, i, o: L.sum(i["a"], 1, out=o), (2,), F32),
    ("mean_keepdim", lambda L, i, o: L.mean(i["a"], 0, keepdim=True, out=o), (1, 3), F32),
    ("cumsum", lambda L, i, o: L.cumsum(i["a"], 1, out=o), (2, 3), F32),
    ("argmax", lambda L, i, o: L.argmax(i["a"], 1, out=o), (2,), I64),
    ("eq", lambda L, i, o: L.eq(i["i"], 3, out=o), (2, 3), BOOL),
    ("int into float", lambda L, i, o: L.add(i["i"], 1, out=o), (2, 3), F32),
    ("arange", lambda L, i, o: L.arange(6, out=o), (6,), F32),
    ("linspace", lambda L, i, o: L.linspace(0, 1, 5, out=o), (5,), F32),
    ("resized from empty", lambda L, i, o: L.mul(i["a"], 3, out=o), (0,), F32),
]


@pytest.mark.parametrize("name,call,shape,dtype", CASES, ids=[c[0] for c in CASES])
def test_out_matches_torch(real_torch, name, call, shape, dtype):
    results = []
    for lib in (edutorch, real_torch):
        out = lib.empty(shape, dtype=getattr(lib, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no resize warning: the shape fits, or out was empty
            returned = call(lib, _inputs(lib), out)
        assert returned is out
        results.append(out.numpy().copy())
    assert results[0].dtype == results[1].dtype and results[0].shape == results[1].shape
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=1e-6)  # float32 sums: order may differ


@pytest.mark.parametrize("op", ["max", "sort", "topk"])
def test_out_tuples_match_torch(real_torch, op):
    results = []
    for lib in (edutorch, real_torch):
        x = _inputs(lib)["a"]
        values, indices = lib.empty(0), lib.empty(0, dtype=lib.int64)
        args = {"max": (x, 1), "sort": (x, 1), "topk": (x, 2)}[op]
        returned = getattr(lib, op)(*args, out=(values, indices))
        assert returned.values is values and returned.indices is indices and type(returned).__name__.startswith(op)
        results.append((values.numpy().copy(), indices.numpy().copy()))
    for got, expected in zip(*results):
        np.testing.assert_array_equal(got, expected)


def test_a_non_empty_out_of_another_shape_is_resized_with_torchs_warning(real_torch):
    messages = []
    for lib in (edutorch, real_torch):
        out = lib.empty(5)
        with pytest.warns(UserWarning, match="An output with one or more elements was resized") as record:
            lib.add(lib.ones(2, 3), 1, out=out)
        assert out.shape == (2, 3) and out.numpy().tolist() == [[2.0] * 3] * 2
        messages.append(str(record[0].message).split(" (Triggered")[0])
    assert messages[0] == messages[1]


ERRORS = [
    lambda L: L.add(L.ones(2), L.ones(2, requires_grad=True), out=L.empty(2)),
    lambda L: L.mul(L.ones(2), 2, out=L.empty(2, requires_grad=True)),
    lambda L: L.add(L.ones(2), 0.5, out=L.empty(2, dtype=L.int64)),
    lambda L: L.exp(L.ones(2), out=L.empty(2, dtype=L.bool)),
]


@pytest.mark.parametrize("make", ERRORS, ids=["input requires grad", "out requires grad", "float into int",
                                              "float into bool"])
def test_errors_match_torch(real_torch, make):
    with pytest.raises(RuntimeError) as expected:
        make(real_torch)
    with pytest.raises(RuntimeError) as got:
        make(edutorch)
    assert str(got.value).split(" (Triggered")[0] == str(expected.value).split(" (Triggered")[0]


def test_out_under_no_grad_is_allowed_and_leaves_no_graph():
    w = edutorch.ones(2, requires_grad=True)
    out = edutorch.empty(2)
    with edutorch.no_grad():
        edutorch.mul(w, 3, out=out)
    assert out.tolist() == [3.0, 3.0] and out.grad_fn is None and not out.requires_grad
