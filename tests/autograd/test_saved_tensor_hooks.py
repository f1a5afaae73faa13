"""``torch.autograd.graph.saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``.

PyTorch's semantics: the pack hook runs when an op saves a tensor (after a custom
Function's ``forward`` returns, grad mode off), the graph keeps what it returns, the
unpack hook runs at every access; only the innermost pair applies.  Which tensors a
built-in op saves is compared with torch 2.13 op by op.
"""
import contextlib

import numpy as np
import pytest

import edutorch as et
from edutorch.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks

TORCH_REASON = "real PyTorch not installed: parity test skipped"

PACK_INPLACE_ERROR = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook cannot be modified by in-place operations as this can lead to unexpected side-effects. "
    "Please open an issue if you need to perform in-place operations on the input to a pack hook."
)


def _custom_function(lib):
    class MulFn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y, None)
            return x * y

        @staticmethod
        def backward(ctx, g):
            x, y, _ = ctx.saved_tensors
            return g * y, g * x

    return MulFn


# name -> builds the output from (lib, a, b, x): a, b, x are float64 leaves that require grad
CASES = {
    "exp": lambda lib, a, b, x: x.exp(),
    "mul": lambda lib, a, b, x: a * b,
    "mul_by_constant_tensor": lambda lib, a, b, x: a * b.detach(),
    "mul_by_number": lambda lib, a, b, x: a * 2,
    "pow2": lambda lib, a, b, x: x.pow(2),
    "pow3": lambda lib, a, b, x: x ** 3,
    "relu": lambda lib, a, b, x: x.relu(),
    "sigmoid": lambda lib, a, b, x: x.sigmoid(),
    "tanh": lambda lib, a, b, x: x.tanh(),
    "add": lambda lib, a, b, x: a + b,
    "sum": lambda lib, a, b, x: x.sum(),
    "softmax": lambda lib, a, b, x: x.softmax(0),
    "log_softmax": lambda lib, a, b, x: x.log_softmax(0),
    "mse_loss": lambda lib, a, b, x: lib.nn.functional.mse_loss(a, b),
    "matmul_const_left": lambda lib, a, b, x: lib.ones(2, 3, dtype=lib.float64) @ x.reshape(3, 1),
    "custom_function": lambda lib, a, b, x: _custom_function(lib).apply(a, b),
    "linear_input_without_grad": lambda lib, a, b, x: _linear(lib)(lib.ones(5, 4, dtype=lib.float64)),
    "linear_3d_input": lambda lib, a, b, x: _linear(lib)(lib.ones(6, 5, 4, dtype=lib.float64)),
}


def _linear(lib):
    lib.manual_seed(0)
    return lib.nn.Linear(4, 2).double()


def _leaves(lib):
    a = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    b = lib.tensor([1.5, 0.25, -0.75], dtype=lib.float64, requires_grad=True)
    x = lib.tensor([0.1, 0.7, -0.3], dtype=lib.float64, requires_grad=True)
    return a, b, x


def record(lib, build):
    """(what the pack hook saw in forward, how many unpacks backward made)."""
    log = []

    def pack(t):
        name = t.grad_fn.name() if t.grad_fn is not None else None
        log.append((tuple(t.shape), t.requires_grad, name, lib.is_grad_enabled()))
        return t

    def unpack(t):
        log.append("unpack")
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = build(lib, *_leaves(lib))
    packed = list(log)
    log.clear()
    out.sum().backward()
    return packed, log.count("unpack")


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_same_tensors_are_packed_as_in_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    mine, theirs = record(et, CASES[name]), record(torch, CASES[name])
    # the order of one op's saved tensors is each library's own: torch's MulBackward0
    # saves ``other`` before ``self``; count, shapes, flags and the unpacks agree
    assert sorted(mine[0]) == sorted(theirs[0])
    assert mine[1] == theirs[1] == len(mine[0])


def test_where_edutorch_saves_other_tensors_than_torch():
    """Documented differences: Linear keeps ``weight`` (torch: ``weight.t()``); cross_entropy
    does not keep a ``total_weight`` tensor (torch's NllLossBackward0 does)."""
    x = et.ones(5, 4, requires_grad=True)
    layer = et.nn.Linear(4, 2)
    seen = []
    with saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        layer(x)
    assert seen[0] is x and seen[1] is layer.weight and len(seen) == 2
    seen.clear()
    logits = et.randn(2, 3, requires_grad=True)
    with saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        et.nn.functional.cross_entropy(logits, et.tensor([0, 2]))
    assert [tuple(t.shape) for t in seen] == [(2, 3), (2, 3), (2,)]


def test_pack_gets_the_saved_tensor_itself_under_no_grad():
    a, b, x = _leaves(et)
    seen = []

    def pack(t):
        seen.append((t, et.is_grad_enabled()))
        return t

    with saved_tensors_hooks(pack, lambda t: t):
        y = x.exp()  # saves its result
        a * b  # saves both operands
    assert seen[0][0] is y
    assert {id(t) for t, _ in seen[1:]} == {id(a), id(b)}
    assert not any(grad for _, grad in seen)


def test_custom_function_packs_after_forward_returns_in_save_order():
    log = []

    class Fn(et.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(y, x)
            log.append("forward")
            return x * y

        @staticmethod
        def backward(ctx, g):
            y, x = ctx.saved_tensors
            return g * y, g * x

    a, b, _ = _leaves(et)
    with saved_tensors_hooks(lambda t: log.append(t) or t, lambda t: t):
        Fn.apply(a, b)
    assert log[0] == "forward" and log[1] is b and log[2] is a


def test_unpack_runs_at_every_access():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    with saved_tensors_hooks(lambda t: t, lambda t: calls.append(1) or t):
        y = x.sin()
    assert calls == []  # nothing is unpacked in forward
    y.grad_fn.saved_tensors
    y.grad_fn.saved_tensors
    assert len(calls) == 2
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert len(calls) == 4


def test_nesting_innermost_pair_applies_same_order_as_torch():
    def run(lib):
        log = []
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        outer = lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t,
                                                      lambda t: log.append("outer-u") or t)
        inner = lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("inner") or t,
                                                      lambda t: log.append("inner-u") or t)
        with outer:
            with inner:
                y = x.exp()
            z = y.sin()
        z.sum().backward()
        return log

    assert run(et) == ["inner", "outer", "outer-u", "inner-u"]
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    assert run(et) == run(torch)


def test_packed_object_may_be_anything_and_unpack_rebuilds_the_graph_place():
    x = et.tensor([0.1, 0.2, 0.3], dtype=et.float64, requires_grad=True)
    with saved_tensors_hooks(lambda t: {"values": t.detach().numpy().copy()},
                             lambda d: et.from_numpy(d["values"])):
        y = x.exp()
        z = x.sin()
    (saved_y,) = y.grad_fn.saved_tensors
    assert saved_y is not y and saved_y.grad_fn is y.grad_fn and saved_y.requires_grad
    (saved_x,) = z.grad_fn.saved_tensors
    assert saved_x.grad_fn is None and saved_x.requires_grad and saved_x.is_leaf
    (y + z).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.1, 0.2, 0.3]) + np.cos([0.1, 0.2, 0.3]))


def test_gradients_with_hooks_equal_gradients_without_float64_and_double_backward():
    data = np.array([0.1, 0.5, 1.0, -0.7])

    def grads(hooks):
        x = et.tensor(data, requires_grad=True)
        ctx = saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t) if hooks else contextlib.nullcontext()
        with ctx:
            y = ((x.sin() * x).exp() / (1 + x * x)).tanh()
        (g,) = et.autograd.grad(y.sum(), x, create_graph=True)
        g.pow(2).sum().backward()
        return g.detach().numpy(), x.grad.numpy()

    for got, want in zip(grads(True), grads(False)):
        np.testing.assert_array_equal(got, want)


def test_gradcheck_through_hooked_graph():
    x = et.tensor([0.3, -0.2, 0.9], dtype=et.float64, requires_grad=True)

    def fn(t):
        with saved_tensors_hooks(lambda s: (s.detach().numpy().copy(),), lambda p: et.from_numpy(p[0])):
            return (t.exp() * t.sin()).log_softmax(0)

    assert et.autograd.gradcheck(fn, (x,))
    assert et.autograd.gradgradcheck(fn, (x,))


def test_inplace_ops_under_hooks_keep_the_old_values():
    """An in-place op saves its input before overwriting it (PyTorch saves a clone)."""

    def run(lib, hooks):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        ctx = lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t) if hooks \
            else contextlib.nullcontext()
        with ctx:
            y = x * 1.0
            y.mul_(w)
            y.sin_()
            (y * y).sum().backward()
        return x.grad.numpy(), w.grad.numpy()

    for got, want in zip(run(et, True), run(et, False)):
        np.testing.assert_allclose(got, want, rtol=1e-14)


def test_no_version_check_with_hooks():
    """PyTorch cannot follow versions through hooks: an in-place change after packing is not an error."""
    x = et.tensor([1.0, 2.0], requires_grad=True)
    b = x * 1.0
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = b.sin()
    b.mul_(2)
    y.sum().backward()  # the clone's values are used
    np.testing.assert_allclose(x.grad.numpy(), np.cos([1.0, 2.0]), rtol=1e-6)
    b = x * 1.0
    y = b.sin()
    b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_pack_hook_that_modifies_its_input_in_place_is_an_error():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        with saved_tensors_hooks(lambda t: t.mul_(2), lambda t: t):
            x.exp()
    assert str(info.value) == PACK_INPLACE_ERROR


@pytest.mark.parametrize("value, type_name", [(3, "int"), (None, "NoneType"), ((1,), "tuple")])
def test_unpack_must_return_a_tensor(value, type_name):
    x = et.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: value):
        y = x.exp()
    with pytest.raises(TypeError) as info:
        y.sum().backward()
    assert str(info.value) == (
        f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type {type_name}")


def test_packed_values_are_freed_by_backward():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        y = x.exp()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


def test_exceptions_in_hooks_propagate_and_leave_grad_mode_on():
    def boom(t):
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        with saved_tensors_hooks(boom, lambda t: t):
            et.tensor([1.0], requires_grad=True).exp()
    assert et.is_grad_enabled()
    y = et.tensor([1.0], requires_grad=True).exp()  # the hook stack is empty again
    assert len(y.grad_fn.saved_tensors) == 1


def test_nothing_is_packed_without_a_graph():
    calls = []
    x = et.tensor([1.0, 2.0], requires_grad=True)
    with et.no_grad(), saved_tensors_hooks(lambda t: calls.append(t) or t, lambda t: t):
        x.exp()
    with saved_tensors_hooks(lambda t: calls.append(t) or t, lambda t: t):
        et.tensor([1.0, 2.0]).exp()
    assert calls == []


def test_disable_saved_tensors_hooks_messages():
    with disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="^no hooks here$"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        with pytest.raises(RuntimeError, match="^no hooks here$"):
            with save_on_cpu():
                pass
        with disable_saved_tensors_hooks("inner"):
            with pytest.raises(RuntimeError, match="^inner$"):
                saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
        with pytest.raises(RuntimeError, match="^no hooks here$"):  # the outer message is back
            saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
        y = et.tensor([1.0], requires_grad=True).exp()  # saving without hooks still works
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # enabled again
        with pytest.raises(RuntimeError, match="^busy$"):  # disabling while hooks are active
            with disable_saved_tensors_hooks("busy"):
                pass
        y = et.tensor([1.0], requires_grad=True).exp()
    with disable_saved_tensors_hooks("unpacking is still fine"):
        y.sum().backward()


def test_disable_messages_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)

    def messages(lib):
        graph = lib.autograd.graph
        out = []
        for scenario in range(3):
            try:
                if scenario == 0:
                    with graph.disable_saved_tensors_hooks("outer"), graph.disable_saved_tensors_hooks("inner"):
                        pass
                    with graph.disable_saved_tensors_hooks("outer"), graph.save_on_cpu():
                        pass
                elif scenario == 1:
                    with graph.saved_tensors_hooks(lambda t: t, lambda t: t), \
                            graph.disable_saved_tensors_hooks("busy"):
                        pass
                else:
                    with graph.disable_saved_tensors_hooks("outer"):
                        with graph.disable_saved_tensors_hooks("inner"):
                            pass
                        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                            pass
            except RuntimeError as e:
                out.append(str(e))
        return out

    assert messages(et) == messages(torch) == ["outer", "busy", "outer"]


def test_save_on_cpu_cpu_tensors_and_pin_memory():
    data = np.array([0.2, -0.4, 1.1])
    results = []
    for kwargs in (None, {}, {"pin_memory": True}):
        x = et.tensor(data, dtype=et.float64, requires_grad=True)
        ctx = contextlib.nullcontext() if kwargs is None else save_on_cpu(**kwargs)
        with ctx:
            y = (x * x).tanh()
        y.sum().backward()
        results.append(x.grad.numpy())
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])


def test_save_on_cpu_packs_to_the_cpu_and_unpacks_to_the_device(fake_cuda):
    x = et.tensor([0.5, 1.5], requires_grad=True, device="cuda")
    packed = []
    hooks = save_on_cpu()
    pack = hooks.pack_hook
    hooks.pack_hook = lambda t: packed.append(pack(t)) or packed[-1]
    with hooks:
        y = x.exp()
    ((device, stored),) = packed
    assert device == x.device and stored.device.type == "cpu"
    (unpacked,) = y.grad_fn.saved_tensors
    assert unpacked.device.type == "cuda"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.exp([0.5, 1.5]), rtol=1e-6)


def test_save_on_cpu_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    data = np.array([[0.2, -0.4], [1.1, 0.3]])

    def run(lib, pin):
        x = lib.tensor(data, requires_grad=True)
        with lib.autograd.graph.save_on_cpu(pin_memory=pin):
            y = (x @ x).sigmoid() * x
        y.sum().backward()
        return x.grad.numpy()

    for pin in (False, True):
        np.testing.assert_allclose(run(et, pin), run(torch, pin), rtol=1e-12)


def test_pytorch_docstring_example_prints_the_same():
    """The example of ``saved_tensors_hooks``'s docstring, run unchanged on both libraries."""
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    import io
    from contextlib import redirect_stdout

    def example(torch):
        def pack_hook(x):
            print("Packing", x)
            return x.detach()

        def unpack_hook(x):
            print("Unpacking", x)
            return x

        a = torch.ones(5, requires_grad=True)
        b = torch.ones(5, requires_grad=True) * 2
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            y = a * b
        y.sum().backward()

    outputs = []
    for lib in (et, torch):
        buffer = io.StringIO()
        with redirect_stdout(buffer):
            example(lib)
        outputs.append(buffer.getvalue())
    # the order of a * b's two operands is each library's own (see the README's known differences)
    assert sorted(outputs[0].splitlines()) == sorted(outputs[1].splitlines())
    assert outputs[0].splitlines()[0].startswith("Packing tensor([1., 1., 1., 1., 1.], requires_grad=True)")
