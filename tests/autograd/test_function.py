"""Custom ``autograd.Function``: ctx API, errors, and the graph node it becomes."""
import numpy as np
import pytest

import edutorch as et

REASON = "real PyTorch not installed: parity test skipped"


def run_both(scenario):
    torch = pytest.importorskip("torch", reason=REASON)
    return scenario(et), scenario(torch)


def error_of(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value)


def functions(lib):
    """The same custom Functions written against ``lib`` (edutorch or torch)."""
    F = lib.autograd.Function

    class MyExp(F):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class ScaleBy(F):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    class WrongCount(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    class WrongShape(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return lib.ones(5)

    class GradForNumber(F):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    class Broadcasting(F):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return g.expand(2, 3)  # input is [3]: expandable, so it is summed back

    return dict(MyExp=MyExp, ScaleBy=ScaleBy, WrongCount=WrongCount, WrongShape=WrongShape,
                GradForNumber=GradForNumber, Broadcasting=Broadcasting)


def test_custom_exp_values_grad_and_node_name():
    def scenario(lib):
        fn = functions(lib)["MyExp"]
        x = lib.tensor([0.0, 1.0, -1.0], dtype=lib.float64, requires_grad=True)
        y = fn.apply(x)
        y.sum().backward()
        return y.tolist(), x.grad.tolist(), type(y.grad_fn).__name__, y.grad_fn.name()

    mine, theirs = run_both(scenario)
    assert mine[2:] == theirs[2:] == ("MyExpBackward", "MyExpBackward")
    np.testing.assert_allclose(mine[0], theirs[0])
    np.testing.assert_allclose(mine[1], theirs[1])


def test_non_tensor_argument_and_needs_input_grad():
    seen = []

    class Probe(et.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen.append(ctx.needs_input_grad)
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    a = et.ones(2, requires_grad=True)
    Probe.apply(a, et.ones(2), 3.0).sum().backward()
    assert seen == [(True, False, False)]
    assert a.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("name", ["WrongCount", "WrongShape", "GradForNumber"])
def test_bad_backward_errors_match_pytorch(name):
    def scenario(lib):
        fn = functions(lib)[name]
        x = lib.ones(2, requires_grad=True)
        y = fn.apply(x, 3.0) if name == "GradForNumber" else fn.apply(x)
        return error_of(lambda: y.sum().backward())

    mine, theirs = run_both(scenario)
    assert mine == theirs


def test_expandable_gradient_is_summed_back():
    def scenario(lib):
        x = lib.ones(3, requires_grad=True)
        functions(lib)["Broadcasting"].apply(x).backward()
        return x.grad.tolist()

    mine, theirs = run_both(scenario)
    assert mine == theirs == [2.0, 2.0, 2.0]


def test_saved_output_modified_in_place_matches_pytorch():
    def scenario(lib):
        y = functions(lib)["MyExp"].apply(lib.ones(3, requires_grad=True))
        y.mul_(2)
        return error_of(lambda: y.sum().backward())

    mine, theirs = run_both(scenario)
    assert mine == theirs
    assert "which is output 0 of MyExp," in mine[1]


def test_saved_tensors_freed_after_backward():
    def scenario(lib):
        y = functions(lib)["MyExp"].apply(lib.ones(3, requires_grad=True))
        y.sum().backward()
        return error_of(lambda: y.grad_fn.saved_tensors)

    mine, theirs = run_both(scenario)
    assert mine == theirs


def test_mark_dirty_in_place_function():
    class AddOneInPlace(et.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.data += 1  # modify the input's storage
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    a = et.ones(2, requires_grad=True)
    b = a * 2
    version = b._version
    out = AddOneInPlace.apply(b)
    assert out is b and b._version == version + 1
    assert type(b.grad_fn).__name__ == "AddOneInPlaceBackward"
    b.sum().backward()
    assert b.tolist() == [3.0, 3.0] and a.grad.tolist() == [2.0, 2.0]


def test_mark_dirty_on_leaf_is_an_error():
    def scenario(lib):
        class Dirty(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        return error_of(lambda: Dirty.apply(lib.ones(2, requires_grad=True)))

    mine, theirs = run_both(scenario)
    assert mine == theirs


def test_mark_non_differentiable_and_materialize_grads():
    def scenario(lib):
        seen = []

        class SortLike(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = lib.arange(x.shape[0])
                y = x * 2
                ctx.mark_non_differentiable(idx)
                return y, idx, x * 3

            @staticmethod
            def backward(ctx, gy, gidx, gz):
                seen.append((gidx is None, None if gz is None else gz.tolist()))
                return gy * 2

        x = lib.ones(2, requires_grad=True)
        y, idx, z = SortLike.apply(x)
        y.sum().backward()
        return seen, idx.requires_grad, x.grad.tolist()

    mine, theirs = run_both(scenario)
    assert mine == theirs
    assert mine[0] == [(False, [0.0, 0.0])]  # the unused output z got materialized zeros


def test_set_materialize_grads_false_passes_none():
    seen = []

    class Two(et.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            seen.append(gb)
            return ga * 2

    x = et.ones(2, requires_grad=True)
    a, _ = Two.apply(x)
    a.sum().backward()
    assert seen == [None] and x.grad.tolist() == [2.0, 2.0]


def test_setup_context_style():
    class Cube(et.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    x = et.tensor([2.0], requires_grad=True)
    Cube.apply(x).sum().backward()
    assert x.grad.tolist() == [12.0]


def test_apply_without_grad_records_nothing():
    fn = functions(et)["MyExp"]
    y = fn.apply(et.ones(2))
    assert y.grad_fn is None and not y.requires_grad
    with et.no_grad():
        z = fn.apply(et.ones(2, requires_grad=True))
    assert z.grad_fn is None


def test_forward_returning_none_gives_none_as_in_pytorch():
    """A forward that returns nothing (a student's empty method) makes ``apply`` return None."""
    def scenario(lib):
        class Empty(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                pass

            @staticmethod
            def backward(ctx, g):
                pass

        return [Empty.apply(lib.ones(2, requires_grad=r)) for r in (False, True)]

    assert scenario(et) == [None, None]
    ours, theirs = run_both(scenario)
    assert ours == theirs


def test_forward_runs_without_recording():
    seen = []

    class Probe(et.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(et.is_grad_enabled())
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    Probe.apply(et.ones(1, requires_grad=True))
    assert seen == [False]


def test_once_differentiable_backward_gives_no_graph():
    class Square(et.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @et.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    x = et.tensor([3.0], requires_grad=True)
    (g,) = et.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [6.0] and not g.requires_grad


def test_custom_function_passes_gradcheck():
    fn = functions(et)["MyExp"]
    x = et.tensor([0.1, -0.4, 0.7], dtype=et.float64, requires_grad=True)
    assert et.autograd.gradcheck(fn.apply, (x,))
