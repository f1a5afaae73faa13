"""``fx.Interpreter``, ``fx.Transformer`` and ``fx.subgraph_rewriter``.

The programs (tests/fx/programs.py) are the torch.fx documentation's examples;
without torch they run with their own asserts and the generated code is
checked against the docs' text, with torch everything they return (code,
matches, values) is compared.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import edutorch
from edutorch import fx
from edutorch.fx.subgraph_rewriter import replace_pattern_with_filters

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "func"))
import programs  # noqa: E402
from tutorials import imported_as_torch  # noqa: E402

X = np.linspace(-1, 1, 12).reshape(3, 4).astype(np.float32)
PROGRAMS = {
    "neg_sigmoid_interpreter": (X,), "neg_sigmoid_transformer": (X,), "shape_prop": (X[0],),
    "replace_cat_by_stack": (), "filtered_rewrite": (), "rewrite_with_modules": (),
}


def run(T, name):
    with imported_as_torch(T):
        return getattr(programs, name)(T, *PROGRAMS[name])


def normalised(result):
    """Code text with the library's name taken out, tensors as arrays."""
    if isinstance(result, (tuple, list)):
        return [normalised(r) for r in result]
    if isinstance(result, str):
        return result.replace("edutorch.", "torch.")
    if hasattr(result, "detach"):
        return result.detach().numpy()
    return result


@pytest.mark.parametrize("name", PROGRAMS)
def test_docs_example_runs(name):
    run(edutorch, name)


def assert_same(mine, theirs):
    if isinstance(theirs, np.ndarray):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6)  # float32 sigmoid: last-bit differences
    elif isinstance(theirs, list):
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            assert_same(a, b)
    else:
        assert mine == theirs


@pytest.mark.parametrize("name", PROGRAMS)
def test_docs_example_as_pytorch(real_torch, name):
    assert_same(normalised(run(edutorch, name)), normalised(run(real_torch, name)))


def test_replace_pattern_gives_the_docs_code():
    code, matches = run(edutorch, "replace_cat_by_stack")
    assert "stack = edutorch.stack([w1, w2])" in code and "cat" not in code
    assert [anchor for anchor, _ in matches] == ["cat", "cat"]


def make_chain():
    def f(x, y):
        a = edutorch.relu(x + y)
        b = edutorch.relu(a + y)
        return a * b
    return fx.symbolic_trace(f)


def test_interpreter_runs_the_graph_and_frees_values():
    gm = make_chain()
    x, y = edutorch.tensor([1.0, -2.0]), edutorch.tensor([0.5, 0.5])
    interp = fx.Interpreter(gm)
    np.testing.assert_allclose(interp.run(x, y).numpy(), gm(x, y).numpy())
    assert [n.op for n in interp.env] == ["output"]  # every other value dropped after its last use
    assert fx.Interpreter(gm).boxed_run([x, y]).tolist() == gm(x, y).tolist()
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter y"):
        fx.Interpreter(gm).run(x)


def test_interpreter_errors_name_the_node():
    gm = make_chain()
    with pytest.raises(RuntimeError, match="While executing %add"):
        fx.Interpreter(gm).run(edutorch.ones(2), edutorch.ones(3))


def test_transformer_without_overrides_copies_the_graph():
    gm = make_chain()
    copy = fx.Transformer(gm).transform()
    assert copy.code == gm.code and copy is not gm
    x = edutorch.tensor([1.0, -2.0])
    assert copy(x, x).tolist() == gm(x, x).tolist()


def test_a_match_used_outside_is_not_replaced():
    gm = make_chain()

    def pattern(x, y):
        return edutorch.relu(x + y)

    def replacement(x, y):
        return edutorch.sigmoid(x - y)

    # both relu(a + y) occurrences are self-contained: a is returned by the match
    assert len(fx.replace_pattern(gm, pattern, replacement)) == 2
    gm2 = make_chain()

    def inner(x, y):
        return x + y  # its result is used only by relu: contained

    assert len(replace_pattern_with_filters(gm2, inner, replacement, [lambda m, g, p: False])) == 0
    assert "sigmoid" not in gm2.code
