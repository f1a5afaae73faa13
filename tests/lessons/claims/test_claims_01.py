"""Lesson 01 (tensors and autograd): its sentences about PyTorch, checked under real PyTorch 2.13."""
import numpy as np
import pytest
from _claims import error_of, real_torch, warnings_of

torch = real_torch()


def test_int64_plus_float32_gives_float32():
    """"an ``int64`` tensor plus a ``float32`` tensor gives ``float32``"."""
    assert (torch.tensor([1, 2]) + torch.tensor([0.5, 0.5])).dtype == torch.float32


def test_numpy_and_from_numpy_share_memory():
    """"``tensor.numpy()`` and ``torch.from_numpy(array)`` **share memory** with the NumPy array ...:
    change one and the other changes too"."""
    array = np.zeros(3, dtype=np.float32)
    t = torch.from_numpy(array)
    array[0] = 1.0
    assert t[0].item() == 1.0
    t.numpy()[1] = 2.0
    assert array[1] == 2.0


def test_grad_fn_names_and_next_functions():
    """"``MulBackward0`` is the backward of ``*``"; "``next_functions``, a tuple of ``(node, input_nr)``
    pairs"; "A leaf that requires grad is reached through an ``AccumulateGrad`` node ...
    (``node.variable`` is ``x`` itself). An input that needs no gradient, such as the number ``2``, has
    the edge ``(None, 0)``"."""
    x = torch.tensor(0.5, requires_grad=True)
    y = torch.tanh(2 * x) * x
    assert type(y.grad_fn).__name__ == "MulBackward0"
    tanh, accumulate = (node for node, _ in y.grad_fn.next_functions)
    assert type(accumulate).__name__ == "AccumulateGrad" and accumulate.variable is x
    mul = tanh.next_functions[0][0]
    assert mul.next_functions == ((accumulate, 0), (None, 0))


def test_x_tanh_2x_gradient_adds_both_paths():
    """"two paths to the same ``AccumulateGrad`` node: backward adds the gradients of both paths";
    d/dx [x · tanh(2x)] = tanh(2x) + 2x · (1 − tanh²(2x))."""
    x = torch.tensor(0.7, requires_grad=True)
    (x * torch.tanh(2 * x)).backward()
    t = torch.tanh(torch.tensor(1.4))
    assert x.grad.item() == pytest.approx((t + 1.4 * (1 - t ** 2)).item(), rel=1e-6)


def test_exercise_1_2_first_edge_walk():
    """Exercise 1.2's walk along the first edge of ``((a * b) + c).exp().sum()``."""
    a, b, c = (torch.randn(3, requires_grad=True) for _ in range(3))
    node, names = ((a * b) + c).exp().sum().grad_fn, []
    while node is not None:
        names.append(type(node).__name__)
        node = node.next_functions[0][0] if node.next_functions else None
    assert names == ["SumBackward0", "ExpBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad"]


def test_backward_accumulates_and_frees_the_graph():
    """"``backward()`` **adds** into ``.grad``; it never overwrites it"; "A second backward through the
    same graph is an error, unless the first call kept them with ``retain_graph=True``"."""
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        (w * w).sum().backward()
    assert torch.equal(w.grad, 3 * 2 * w.detach())
    loss = (w * w).sum()
    loss.backward()
    error = error_of(loss.backward)
    assert isinstance(error, RuntimeError) and "Trying to backward through the graph a second time" in str(error)
    kept = (w * w).sum()
    kept.backward(retain_graph=True)
    kept.backward()


def test_no_grad_and_detach():
    """"Inside ``torch.no_grad()`` results have no ``grad_fn``. ``t.detach()`` returns a tensor that
    shares ``t``'s numbers but is cut out of the graph"."""
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with torch.no_grad():
        z = w * 2
    assert z.grad_fn is None and not z.requires_grad
    d = w.detach()
    assert d.grad_fn is None and not d.requires_grad
    d[0] = 10.0
    assert w[0].item() == 10.0


def test_detach_bumps_the_shared_version_data_does_not():
    """"an in-place change through ``t.detach()`` bumps the version counter that ``t`` shares with it,
    so autograd notices ...; a change through ``t.data`` does not, and a later ``backward()`` silently
    uses the new values"."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.detach().add_(1)
    assert y._version == 1
    assert isinstance(error_of(y.sum().backward), RuntimeError)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.data.add_(1)
    assert y._version == 0
    y.sum().backward()
    assert torch.allclose(x.grad, torch.tensor([1.0, 2.0]).exp() + 1)


def test_backward_gradient_is_a_vector_jacobian_product():
    """"``backward()`` with no argument needs a scalar output"; "``x.grad`` receives vᵀ·(dy/dx) — the
    gradient of ``(v * y).sum()``"; "``loss.backward()`` is
    ``loss.backward(gradient=torch.tensor(1.0))``"."""
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x ** 2
    error = error_of(y.backward)
    assert isinstance(error, RuntimeError) and "grad can be implicitly created only for scalar outputs" in str(error)
    v = torch.tensor([1.0, 0.5, -1.0])
    y.backward(gradient=v)
    assert torch.equal(x.grad, v * 2 * x.detach())
    a = torch.tensor(2.0, requires_grad=True)
    (a ** 3).backward(gradient=torch.tensor(1.0))
    assert a.grad.item() == 12.0


def test_retain_grad_keeps_an_intermediate_gradient():
    """"Only leaves get a ``.grad``"; "Call ``h.retain_grad()`` before ``backward()`` to keep it"."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    h.retain_grad()
    (h ** 2).sum().backward()
    assert torch.equal(h.grad, 2 * h.detach())


def test_autograd_grad_returns_a_tuple_and_create_graph_differentiates_again():
    """"``torch.autograd.grad(outputs, inputs)`` returns the gradients as a tuple instead of adding
    them into ``.grad``. With ``create_graph=True`` the result is itself recorded"."""
    x = torch.tensor(2.0, requires_grad=True)
    (first,) = torch.autograd.grad(x ** 3, x, create_graph=True)
    assert x.grad is None and first.item() == 12.0 and first.grad_fn is not None
    (second,) = torch.autograd.grad(first, x)
    assert second.item() == 12.0


def test_version_counter_exp_saves_its_output_and_leaf_in_place_is_refused():
    """"``exp`` saves its output"; "a version counter, ``t._version``, which each in-place op
    increments. Backward ... refuses stale values"; "An in-place op on a leaf that requires grad is
    refused at once (do it inside ``torch.no_grad()``...)"."""
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a.exp()
    assert torch.equal(b.grad_fn._saved_result, b)
    b.add_(1)
    assert b._version == 1
    error = error_of(b.sum().backward)
    assert "modified by an inplace operation" in str(error) and "which is output 0 of Exp, is at version 1; expected version 0 instead" in str(error)
    error = error_of(a.add_, 1)
    assert isinstance(error, RuntimeError) and "a leaf Variable that requires grad is being used in an in-place operation" in str(error)
    with torch.no_grad():
        a.add_(1)


def test_inference_mode_records_nothing_skips_versions_and_refuses_saving():
    """"nothing inside is recorded"; "it also skips the version counters, and a tensor created in
    inference mode may not be saved for backward ...: an op that needs it for its gradient, such as
    ``*``, raises ``RuntimeError: Inference tensors cannot be saved for backward`` (one that saves
    nothing, such as ``+``, accepts it)"."""
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled()
        q = p * 2
    assert not torch.is_inference_mode_enabled() and q.grad_fn is None and not q.requires_grad
    assert isinstance(error_of(lambda: q._version), RuntimeError)
    assert (q + p).grad_fn is not None
    error = error_of(lambda: q * p)
    assert isinstance(error, RuntimeError) and "Inference tensors cannot be saved for backward" in str(error)


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x ** 2


class WrongCube(Cube):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 2 * x ** 2


def test_custom_function_node_name_and_gradcheck():
    """"The node of a custom Function is named after its class: ``CubeBackward``"; ``gradcheck``
    accepts a right backward and rejects a wrong one; "Use ``float64``: in ``float32`` the rounding
    error of the difference is larger than the tolerance"."""
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = Cube.apply(x)
    assert type(y.grad_fn).__name__ == "CubeBackward"
    y.sum().backward()
    assert torch.equal(x.grad, torch.tensor([3.0, 12.0, 27.0]))
    torch.manual_seed(0)
    x64 = torch.randn(5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(Cube.apply, (x64,))
    assert not torch.autograd.gradcheck(WrongCube.apply, (x64,), raise_exception=False)
    x32 = (torch.rand(5) + 1).requires_grad_()
    passed, caught = warnings_of(torch.autograd.gradcheck, Cube.apply, (x32,), raise_exception=False)
    assert not passed and any("not a double precision" in message for _, message in caught)


def test_sigmoid_derivative_needs_only_the_output():
    """Exercise 1.4: "Its derivative is σ(x)(1 − σ(x)), so saving the **output** in ``forward`` is
    enough"."""
    x = torch.linspace(-3, 3, 7, requires_grad=True)
    s = torch.sigmoid(x)
    (grad,) = torch.autograd.grad(s.sum(), x)
    assert torch.allclose(grad, s.detach() * (1 - s.detach()))
