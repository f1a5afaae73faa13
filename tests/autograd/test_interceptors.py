"""The one extension point of ``Function.apply`` and of the engine: ``function.Interceptors``.

The profiler, autocast and anomaly mode each register an interceptor from
their own package while they are on; autograd itself imports none of them.
"""
import ast
import pathlib
import re

import numpy as np
import pytest

import edutorch
from edutorch.autograd import _saved_tensor, engine, function

AUTOGRAD = pathlib.Path(function.__file__).parent


def _names(chain):
    return [fn.__name__ for _, fn in chain.active]


@pytest.fixture
def log():
    """A list the interceptors below write to; they are unregistered afterwards whatever happens."""
    entries = []
    yield entries
    for chain in (function.apply_interceptors, engine.node_interceptors):
        for _, fn in chain.active:
            if fn.__name__.startswith("spy"):
                chain.unregister(fn)


def test_an_op_interceptor_sees_every_op_and_returns_its_result(log):
    def spy(proceed, cls, args, kwargs):
        log.append(cls.__name__)
        return proceed(cls, args, kwargs)

    x = edutorch.tensor([1.0, 2.0], requires_grad=True)
    function.apply_interceptors.register(spy, 5)
    y = (x * 3).exp()
    function.apply_interceptors.unregister(spy)
    (x * 3).exp()
    assert log == ["Mul", "Exp"]
    assert y.grad_fn.name() == "ExpBackward0"
    np.testing.assert_allclose(y.detach().numpy(), np.exp([3.0, 6.0]), rtol=1e-6)


def test_an_interceptor_may_change_the_arguments(log):
    def spy_double(proceed, cls, args, kwargs):
        if cls.__name__ == "Exp":
            args = (edutorch.tensor(args[0]._data * 2),)
        return proceed(cls, args, kwargs)

    function.apply_interceptors.register(spy_double, 5)
    try:
        y = edutorch.tensor([1.0]).exp()
    finally:
        function.apply_interceptors.unregister(spy_double)
    np.testing.assert_allclose(y.numpy(), np.exp([2.0]), rtol=1e-6)


def test_lower_levels_run_further_out_and_ops_made_inside_start_from_the_top(log):
    def spy_outer(proceed, cls, args, kwargs):
        log.append(("outer", cls.__name__))
        return proceed(cls, args, kwargs)

    def spy_inner(proceed, cls, args, kwargs):
        log.append(("inner", cls.__name__))
        if cls.__name__ == "Exp":  # an op made inside an interceptor, as autocast's casts
            args = (args[0] + 0.0,)
        return proceed(cls, args, kwargs)

    function.apply_interceptors.register(spy_inner, 7)
    function.apply_interceptors.register(spy_outer, 3)
    edutorch.tensor([1.0]).exp()
    assert log == [("outer", "Exp"), ("inner", "Exp"), ("outer", "Add"), ("inner", "Add")]


def test_a_node_interceptor_sees_every_node_the_engine_runs(log):
    def spy_node(proceed, node, grads):
        log.append(node.name())
        return proceed(node, grads)

    x = edutorch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 3).sum()
    engine.node_interceptors.register(spy_node, 5)
    y.backward()
    engine.node_interceptors.unregister(spy_node)
    assert log == ["SumBackward0", "MulBackward0", "AccumulateGrad"]
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_profiler_autocast_and_anomaly_mode_register_and_unregister_themselves():
    assert _names(function.apply_interceptors) == [] and _names(engine.node_interceptors) == []
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        anomaly = edutorch.autograd.detect_anomaly(check_nan=False)
    with anomaly:
        with edutorch.autocast("cpu"):
            with edutorch.profiler.profile():
                assert _names(function.apply_interceptors) == [
                    "record_op", "_autocast_interceptor", "_remember_forward_stack", "record_kernel"]
                assert _names(engine.node_interceptors) == ["record_node", "_check_node"]
            assert _names(function.apply_interceptors) == ["_autocast_interceptor", "_remember_forward_stack"]
        assert _names(engine.node_interceptors) == ["_check_node"]
    assert _names(function.apply_interceptors) == [] and _names(engine.node_interceptors) == []


def test_the_three_together_give_the_gradients_of_autocast_alone():
    def step(contexts):
        edutorch.manual_seed(0)
        model = edutorch.nn.Linear(4, 3)
        x = edutorch.randn(5, 4)
        for c in contexts:
            c.__enter__()
        try:
            loss = model(x).float().square().mean()
        finally:
            for c in reversed(contexts):
                c.__exit__(None, None, None)
        loss.backward()
        return model.weight.grad.numpy()

    alone = step([edutorch.autocast("cpu")])
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        anomaly = edutorch.autograd.detect_anomaly()
    together = step([edutorch.profiler.profile(), edutorch.autocast("cpu"), anomaly])
    np.testing.assert_array_equal(alone, together)


def _imported_modules(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            names.add((node.module or "") + ":" + ",".join(a.name for a in node.names))
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


@pytest.mark.parametrize("name", ["function.py", "engine.py"])
def test_autograd_core_imports_none_of_profiler_autocast_and_anomaly_mode(name):
    imports = " ".join(_imported_modules(AUTOGRAD / name))
    for other in ("amp", "profiler", "anomaly_mode", "autocast"):
        assert other not in imports, (name, imports)


def test_only_autograd_touches_saved_variables():
    """The in-place ops ask autograd (``saved_output_now_is``, ``Node._saves``) instead of
    rewriting a node's saved entries themselves."""
    package = AUTOGRAD.parent
    outside = [p for p in package.rglob("*.py")
               if "autograd" not in p.parts and re.search(r"(?<!save)_for_backward", p.read_text())]
    assert outside == []


def test_a_node_keeps_saved_tensors_as_saved_variables_and_other_values_as_they_are():
    x = edutorch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2  # Mul keeps what backward reads: not x (only the number's gradient would need it), the 2
    assert y.grad_fn._for_backward == [None, 2]
    y = x * edutorch.tensor([3.0, 4.0])
    saved = y.grad_fn._for_backward
    assert [type(s) for s in saved] == [type(None), _saved_tensor.SavedVariable]
    assert saved[1].version == 0 and not saved[1].is_output
    z = x.exp()
    (out,) = z.grad_fn._for_backward
    assert out.is_output and out.data is z._data  # the array only: the node does not keep itself alive
