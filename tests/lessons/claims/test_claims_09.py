"""Lesson 09 (extending autograd): its sentences about PyTorch, checked under real PyTorch 2.13."""
import inspect

import pytest
from _claims import error_of, real_torch, warnings_of

torch = real_torch()
Function = torch.autograd.Function
once_differentiable = pytest.importorskip("torch.autograd.function").once_differentiable


class MyExp(Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class WrongExp(MyExp):
    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return result


def test_forward_runs_with_grad_off_and_the_node_is_the_ctx():
    """"It runs with autograd **off**"; "recorded a graph node of a class PyTorch makes for you,
    ``MyExpBackward``. **That node is the ``ctx``** that ``forward`` received"; its ``next_functions``
    point to ``x``'s ``AccumulateGrad``; "the engine calls ``MyExp.backward`` with that same object"."""
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen["grad_enabled"], seen["forward_ctx"] = torch.is_grad_enabled(), ctx
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            seen["backward_ctx"] = ctx
            return grad_output * 2

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = Probe.apply(x)
    y.sum().backward()
    assert seen["grad_enabled"] is False
    assert y.grad_fn is seen["forward_ctx"] is seen["backward_ctx"]
    assert type(MyExp.apply(x).grad_fn).__name__ == "MyExpBackward"
    assert [type(n).__name__ for n, _ in y.grad_fn.next_functions] == ["AccumulateGrad"]


def test_gradcheck_defaults_error_type_and_raise_exception_false():
    """"each input entry is nudged by ``eps = 1e-6``"; "It returns ``True``, or raises a
    ``GradcheckError`` (a ``RuntimeError``) ...; with ``raise_exception=False`` it returns ``False``
    instead. The default tolerances are ``atol=1e-5`` and ``rtol=1e-3``"; the Jacobians shown."""
    params = inspect.signature(torch.autograd.gradcheck).parameters
    assert (params["eps"].default, params["atol"].default, params["rtol"].default) == (1e-6, 1e-5, 1e-3)
    x64 = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(MyExp.apply, (x64,)) is True
    error = error_of(torch.autograd.gradcheck, WrongExp.apply, (x64,))
    assert type(error).__name__ == "GradcheckError" and isinstance(error, RuntimeError)
    assert "numerical:" in str(error) and "analytical:" in str(error)
    assert torch.autograd.gradcheck(WrongExp.apply, (x64,), raise_exception=False) is False


def test_float32_gradcheck_warns_and_fails_and_the_slope_is_off_by_percents():
    """"So a **correct** backward fails on float32 inputs. PyTorch warns before it even starts"; "the
    estimated slope is off by up to a few percent, far above ``rtol=1e-3``"."""
    x32 = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    ok, caught = warnings_of(torch.autograd.gradcheck, MyExp.apply, (x32,), raise_exception=False)
    assert ok is False
    assert any("is not a double precision floating point" in message for _, message in caught)
    for value in (0.5, 1.0, 2.0):
        t = torch.tensor(value)
        slope = ((t + 1e-6).exp() - (t - 1e-6).exp()) / 2e-6
        error = abs(slope.item() / t.exp().item() - 1)
        assert 1e-3 < error < 0.1
        t64 = torch.tensor(value, dtype=torch.float64)
        slope64 = ((t64 + 1e-6).exp() - (t64 - 1e-6).exp()) / 2e-6
        assert abs(slope64.item() / t64.exp().item() - 1) < 1e-8


def test_needs_input_grad_is_one_boolean_per_forward_argument():
    """"``ctx.needs_input_grad`` is a tuple of booleans, one per argument of ``forward``"; "``None``
    for a non-tensor argument"."""
    seen = []

    class Scaled(Function):
        @staticmethod
        def forward(ctx, a, b, factor):
            seen.append(ctx.needs_input_grad)
            return a * b * factor

        @staticmethod
        def backward(ctx, grad):
            return grad, None, None

    Scaled.apply(torch.ones(2, requires_grad=True), torch.ones(2), 3.0).sum().backward()
    assert seen == [(True, False, False)]


def test_setup_context_style_behaves_like_the_classic_one():
    """"``forward(*inputs)`` only computes, and a separate static method ``setup_context(ctx, inputs,
    output)`` saves what ``backward`` needs"."""
    class MyExp2(Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    x64 = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(MyExp2.apply, (x64,))
    assert torch.allclose(MyExp2.apply(x64), MyExp.apply(x64))


class ReLUInPlace(Function):
    @staticmethod
    def forward(ctx, x):
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return grad_output * (out > 0)


def test_mark_dirty_returns_the_same_object_with_a_new_grad_fn_and_version_two():
    """"The returned tensor is then *the same object* as the input, now produced by the new node";
    "The version went from 0 to 2: one for ``clamp_``, one from ``apply``"; "A leaf that requires grad
    may not be modified in place, and PyTorch refuses"."""
    a = torch.tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)
    h = a * 1
    r = ReLUInPlace.apply(h)
    assert r is h and type(h.grad_fn).__name__ == "ReLUInPlaceBackward" and h._version == 2
    r.sum().backward()
    assert torch.equal(a.grad, torch.tensor([0.0, 1.0, 0.0, 1.0]))
    error = error_of(ReLUInPlace.apply, a)
    assert isinstance(error, RuntimeError) and "a leaf Variable that requires grad" in str(error)


def test_mark_non_differentiable_and_materialize_grads():
    """"these outputs never require grad"; "``backward`` still receives one gradient per output, zeros
    for these"; "by default an output that got no gradient ... arrives in ``backward`` as a tensor of
    zeros. With ``False``, it arrives as ``None``"."""
    received = []

    class Clip(Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            clipped = x.clamp(-1, 1)
            mask = (clipped != x).to(x.dtype)
            ctx.mark_non_differentiable(mask)
            return clipped, mask

        @staticmethod
        def backward(ctx, grad_clipped, grad_mask):
            received.append(grad_mask)
            return grad_clipped, None

    x = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    clipped, mask = Clip.apply(x, True)
    assert clipped.requires_grad and not mask.requires_grad
    clipped.sum().backward()
    clipped, _ = Clip.apply(x, False)
    clipped.sum().backward()
    assert torch.equal(received[0], torch.zeros(3)) and received[1] is None


def test_double_backward_through_a_differentiable_backward():
    """"under ``create_graph=True`` the engine runs ``backward`` with grad mode on"; ``MyExp``'s second
    derivative is exp again; "``gradgradcheck`` tests the second derivative"."""
    x = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    (dy,) = torch.autograd.grad(MyExp.apply(x).sum(), x, create_graph=True)
    (d2y,) = torch.autograd.grad(dy.sum(), x)
    assert torch.allclose(d2y, x.detach().exp())
    assert torch.autograd.gradgradcheck(MyExp.apply, (x,))


def test_once_differentiable_raises_on_a_second_backward():
    """"``@once_differentiable`` ... runs ``backward`` with grad mode off, and under
    ``create_graph=True`` it hangs a node named ``Error`` on the gradients it returns: differentiating
    them again raises"; "``gradgradcheck`` catches it too"."""
    grad_mode = []

    class ExpOnce(MyExp):
        @staticmethod
        @once_differentiable
        def backward(ctx, grad_output):
            grad_mode.append(torch.is_grad_enabled())
            (result,) = ctx.saved_tensors
            return grad_output * result

    x = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(ExpOnce.apply, (x,))
    y = ExpOnce.apply(x)
    (dy,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    assert grad_mode[-1] is False and type(dy.grad_fn).__name__ == "Error"  # printed grad_fn=<Error>
    error = error_of(dy.sum().backward)
    assert "trying to differentiate twice a function that was marked with @once_differentiable" in str(error)
    assert torch.autograd.gradgradcheck(ExpOnce.apply, (x,), raise_exception=False) is False


def test_builtin_ops_save_outputs_inputs_or_nothing():
    """"``x.sigmoid()`` saves its output, ``x * w`` its inputs, ``x + w`` nothing"; "(``exp`` its
    result, ``a * b`` both operands)"."""
    x, w = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)

    def saved(fn):
        packed = []
        with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
            out = fn()
        return out, packed

    out, packed = saved(lambda: x.sigmoid())
    assert len(packed) == 1 and torch.equal(packed[0], out)
    _, packed = saved(lambda: x * w)
    assert len(packed) == 2 and {id(t) for t in packed} == {id(x), id(w)}
    assert saved(lambda: x + w)[1] == []


def test_modified_saved_tensor_error_names_tensor_op_and_versions():
    """"The message names the tensor (``[torch.FloatTensor [3]]``, its type and shape), the op that
    produced it (``output 0 of Mul``: ``h = a * 1``), and the versions"; the fix ``h = h * 10``
    works."""
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output

    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = a * 1
    s = Square.apply(h)
    h.mul_(10)
    message = str(error_of(s.sum().backward))
    assert ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            "[torch.FloatTensor [3]], which is output 0 of Mul, is at version 1; expected version 0 instead") in message
    h = a * 1
    s = Square.apply(h)
    h = h * 10
    s.sum().backward()
    assert torch.equal(a.grad, torch.tensor([2.0, 4.0, 6.0]))


def masked_sqrt(x):
    z = torch.sqrt(x * 2 - 1)
    return torch.where(x > 0.5, z, 0.0).sum()


def test_where_over_an_unsafe_branch_gives_nan_and_detect_anomaly_names_the_node():
    """"the backward of the unsafe branch still runs on **every** element, and ``0 · 1/(2·sqrt(negative))``
    is ``0 · NaN = NaN``"; "The first node that returns a NaN raises ``RuntimeError: Function
    'SqrtBackward0' returned nan values in its 0th output.``, and just before, a ``UserWarning`` shows
    the *traceback of the forward call*"."""
    x = torch.tensor([0.25, 1.0, 2.0], requires_grad=True)
    masked_sqrt(x).backward()
    assert x.grad[0].isnan() and not x.grad[1:].isnan().any()

    def run():
        with torch.autograd.detect_anomaly():
            masked_sqrt(torch.tensor([0.25, 1.0, 2.0], requires_grad=True)).backward()

    error, caught = warnings_of(error_of, run)
    assert str(error) == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert any("Error detected in SqrtBackward0. Traceback of forward call that caused the error" in m
               and "torch.sqrt(x * 2 - 1)" in m for _, m in caught)
    assert callable(torch.autograd.set_detect_anomaly)


def packed_by(fn, *args):
    """Every tensor a saved_tensors_hooks pack hook sees while ``fn(*args)`` runs."""
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        fn(*args)
    return packed


def test_saved_tensors_of_a_two_layer_mlp():
    """"Five tensors: the input ..., ReLU's output ... and the same tensor once more ..., the second
    weight ..., and the output (for ``** 2``). Only the weight's 1280 bytes do not grow with the batch";
    "The first weight is not saved at all: its input needs no gradient"."""
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    for batch in (32, 128):
        sizes = [t.numel() * t.element_size() for t in packed_by(lambda x: (mlp(x) ** 2).mean(), torch.randn(batch, 64))]
        assert sizes == [batch * 64 * 4, batch * 32 * 4, batch * 32 * 4, 1280, batch * 10 * 4]
    saved = packed_by(lambda: mlp(torch.randn(4, 64)))
    assert saved[3]._base is mlp[2].weight  # weight.t(): a view, no memory of its own
    assert callable(torch.autograd.graph.save_on_cpu)


def test_saved_attributes_of_builtin_nodes():
    """"``_saved_self`` for the input called ``self``, ... ``_saved_result`` for the op's own output, and
    non-tensor values such as ``_saved_exponent``. A saved input comes back as the very tensor you passed.
    A saved *output* comes back as a new tensor object with the same values, whose ``grad_fn`` is the
    node"; "Once ``backward`` has run, the saved tensors are freed and reading one raises"; "``_saved_other``"
    for the second operand; "``_raw_saved_self.register_hooks(pack, unpack)``"."""
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x.pow(2)
    assert y.grad_fn._saved_self is x and y.grad_fn._saved_exponent == 2
    w = torch.ones(3, requires_grad=True)
    assert (x * w).grad_fn._saved_other is w
    z = x.exp()
    saved = z.grad_fn._saved_result
    assert torch.equal(saved, z) and saved is not z and saved.grad_fn is z.grad_fn
    z.sum().backward()
    error = error_of(lambda: z.grad_fn._saved_result)
    assert isinstance(error, RuntimeError) and "Trying to backward through the graph a second time" in str(error)
    assert callable(x.pow(3).grad_fn._raw_saved_self.register_hooks)


def test_torch_func_transforms_refuse_a_classic_function_and_take_the_setup_context_style():
    """"The split is what the ``torch.func`` transforms (``vmap``, ``grad``, ``jacrev``, ...) need [...]
    they refuse a Function written the classic way. Outside them both styles behave the same"."""

    class NewExp(Function):
        generate_vmap_rule = True  # vmap also wants a batching rule (grad does not)

        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    x = torch.tensor(0.5, dtype=torch.float64)
    refused = error_of(lambda: torch.func.grad(MyExp.apply)(x))
    assert refused is not None and "setup_context" in str(refused)
    assert torch.allclose(torch.func.grad(NewExp.apply)(x), x.exp())
    assert torch.allclose(torch.func.vmap(NewExp.apply)(torch.ones(3)), torch.ones(3).exp())
