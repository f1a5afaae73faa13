"""Lesson 13 (forward mode and function transforms): its sentences about PyTorch, checked under
real PyTorch 2.13."""
from _claims import error_of, real_torch

torch = real_torch()
fwAD = torch.autograd.forward_ad
func = torch.func

A = torch.tensor([[1.0, 2.0, 0.0], [0.0, 1.0, -1.0]])
X = torch.tensor([0.0, 1.0, 2.0])
V = torch.tensor([1.0, 0.5, 0.0])


def f(x):
    return A @ x.sin()


def test_unpack_dual_gives_primal_and_tangent_and_the_tangent_ends_with_the_level():
    """"``fwAD.make_dual(x, v)`` gives ``x`` the tangent ``v`` ..., and ``fwAD.unpack_dual(out)``
    returns the named tuple ``(primal, tangent)``"; "``J·v = A @ (cos(x) * v)``"; "once the
    ``with`` block ends, the tangents are gone (``tangent=None``)"."""
    with fwAD.dual_level():
        out = f(fwAD.make_dual(X, V))
        unpacked = fwAD.unpack_dual(out)
        assert type(unpacked).__name__ == "UnpackedDualTensor" and unpacked._fields == ("primal", "tangent")
        assert torch.allclose(unpacked.primal, f(X))
        assert torch.allclose(unpacked.tangent, A @ (X.cos() * V))
    assert fwAD.unpack_dual(out).tangent is None


def test_make_dual_checks_the_shape_and_needs_a_level():
    """"``make_dual`` checks that the tangent has the primal's shape, and refuses to run outside a
    level" (both RuntimeErrors, messages as printed)."""
    with fwAD.dual_level():
        error = error_of(fwAD.make_dual, X, torch.ones(2))
    assert isinstance(error, RuntimeError)
    assert "different size than that of the original Tensor" in str(error)
    assert "Tensor is of size [3] while the given forward gradient is of size [2]" in str(error)
    error = error_of(fwAD.make_dual, X, V)
    assert isinstance(error, RuntimeError) and "no level exists" in str(error)


def test_jvp_and_vjp_shapes_and_the_identity_linking_them():
    """"``torch.func.jvp(f, primals, tangents)`` ... returns ``(f(x), J·v)``; ``torch.func.vjp(f,
    x)`` returns ``f(x)`` and a function ``vjp_fn`` with ``vjp_fn(u) = (uᵀ·J,)``"; the output's and
    the input's shape; "``u · (J·v) = (uᵀ·J) · v``"."""
    out, jv = func.jvp(f, (X,), (V,))
    out2, vjp_fn = func.vjp(f, X)
    u = torch.tensor([1.0, -1.0])
    result = vjp_fn(u)
    assert isinstance(result, tuple) and len(result) == 1
    assert torch.equal(out, out2) and jv.shape == out.shape and result[0].shape == X.shape
    assert torch.allclose((u * jv).sum(), (result[0] * V).sum())


def test_one_hot_tangents_give_columns_and_rows_and_jacfwd_equals_jacrev():
    """"With ``v = e_j`` ... ``J·v`` is column ``j`` of ``J``; with ``u = e_i``, ``uᵀ·J`` is row
    ``i``"; ``jacfwd`` and ``jacrev`` give the same ``m × n`` matrix, ``A · diag(cos x)``."""
    jacobian = func.jacrev(f)(X)
    assert jacobian.shape == (2, 3) and torch.allclose(jacobian, A * X.cos())
    assert torch.allclose(func.jacfwd(f)(X), jacobian)
    for j in range(3):
        assert torch.allclose(func.jvp(f, (X,), (torch.eye(3)[j],))[1], jacobian[:, j])
    for i in range(2):
        assert torch.allclose(func.vjp(f, X)[1](torch.eye(2)[i])[0], jacobian[i])


def test_jacfwd_is_forward_mode_and_jacrev_reverse_mode():
    """"``torch.func.jacfwd(f)(x)`` is the first way (a jvp per column ...), ``jacrev`` the
    second (a vjp per row)" — as their documentation says."""
    assert "forward-mode autodiff" in func.jacfwd.__doc__
    assert "reverse mode autodiff" in func.jacrev.__doc__


def model_and_batch():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    return model, torch.randn(5, 3), torch.randn(5, 1)


def test_functional_call_uses_the_dict_for_one_call_and_grad_returns_a_dict():
    """"``functional_call(model, params, args)`` runs ``model.forward(*args)`` with the tensors of
    the dict ``params`` (keys as in ``named_parameters()``) ...; the model itself does not change";
    "``grad`` can differentiate with respect to the whole dict at once" (= backward's ``.grad``)."""
    model, x, y = model_and_batch()
    params = {name: p.detach() for name, p in model.named_parameters()}
    assert list(params) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    before = model(x)
    zeros = {name: torch.zeros_like(p) for name, p in params.items()}
    assert torch.equal(func.functional_call(model, zeros, (x,)), torch.zeros(5, 1))
    assert torch.equal(model(x), before)

    def loss_fn(params, x, y):
        return ((func.functional_call(model, params, (x,)) - y) ** 2).mean()

    grads = func.grad(loss_fn)(params, x, y)
    assert isinstance(grads, dict) and list(grads) == list(params)
    loss_fn({n: p for n, p in model.named_parameters()}, x, y).backward()
    assert all(torch.allclose(grads[n], p.grad) for n, p in model.named_parameters())


def test_vmap_of_grad_gives_per_sample_gradients_whose_mean_is_the_batch_gradient():
    """"``vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)`` gives every parameter's
    gradient once per sample"; equal to a loop; "their mean is the batch's gradient"."""
    model, x, y = model_and_batch()
    params = {name: p.detach() for name, p in model.named_parameters()}

    def sample_loss(params, x_i, y_i):
        return ((func.functional_call(model, params, (x_i,)) - y_i) ** 2).mean()

    per_sample = func.vmap(func.grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)
    assert {n: tuple(g.shape) for n, g in per_sample.items()} == {
        "0.weight": (5, 8, 3), "0.bias": (5, 8), "2.weight": (5, 1, 8), "2.bias": (5, 1)}
    for i in range(5):
        one = func.grad(sample_loss)(params, x[i], y[i])
        assert all(torch.allclose(per_sample[n][i], one[n]) for n in params)
    batch = func.grad(lambda p: ((func.functional_call(model, p, (x,)) - y) ** 2).mean())(params)
    assert all(torch.allclose(per_sample[n].mean(0), batch[n], atol=1e-6) for n in params)


def test_vmap_without_in_dims_none_for_the_parameters_raises_value_error():
    """"Without ``in_dims=None`` for ``params``, ``vmap`` tries to map over dimension 0 of every
    parameter too, and finds sizes that do not match the batch" (a ValueError)."""
    model, x, y = model_and_batch()
    params = {name: p.detach() for name, p in model.named_parameters()}

    def sample_loss(params, x_i, y_i):
        return ((func.functional_call(model, params, (x_i,)) - y_i) ** 2).mean()

    error = error_of(func.vmap(func.grad(sample_loss)), params, x, y)
    assert isinstance(error, ValueError)
    assert str(error) == ("vmap: Expected all tensors to have the same size in the mapped "
                          "dimension, got sizes [8, 8, 1, 1, 5, 5] for the mapped dimension")


def test_the_tangent_stepper_runs_on_real_torch_with_fx():
    """"the ops found by ``torch.fx.symbolic_trace``, run by an ``fx.Interpreter``"; the last
    node's tangent is ``J·v`` (what ``jvp`` gives)."""
    from widgets import TangentTrace

    def g(x, w):
        h = x * w
        return (h.sin() * h).sum()

    x, w, v = torch.tensor([0.5, -1.0, 2.0]), torch.tensor([1.5, 0.5, -1.0]), torch.tensor([1.0, 0.0, 0.0])
    trace = TangentTrace(g, (x, w), (v, None))
    assert [n.name for n in torch.fx.symbolic_trace(g).graph.nodes][:-1] == trace.order()
    assert torch.allclose(torch.tensor(trace.output_tangent), func.jvp(lambda x: g(x, w), (x,), (v,))[1])


def test_pytorch_jacfwd_of_a_wide_function_is_many_times_slower_than_jacrev_at_2000():
    """"PyTorch's ``vmap`` batches the passes into a few large ops instead: ... at 2000 ``jacfwd``
    of the wide function is again many times slower than ``jacrev``" (here: at least 3 times, where
    the lesson's machine measured about 100)."""
    import time

    torch.manual_seed(0)
    weight = torch.randn(4, 2000) / 2000 ** 0.5

    def wide(x):
        return weight @ x.tanh()

    x = torch.randn(2000)

    def best_of_three(fn):
        fn(x)  # warm up
        times = []
        for _ in range(3):
            start = time.perf_counter()
            fn(x)
            times.append(time.perf_counter() - start)
        return min(times)

    assert best_of_three(func.jacfwd(wide)) > 3 * best_of_three(func.jacrev(wide))


def test_hessian_is_forward_over_reverse():
    """"``torch.func.hessian(f)`` is ``jacfwd(jacrev(f))``, *forward over reverse* ... which
    PyTorch's documentation calls a good default for performance"; the Hessian of
    ``Σ x·sin(x)`` is diagonal, ``2·cos(x) − x·sin(x)``."""
    doc = " ".join(func.hessian.__doc__.split())
    assert "forward-over-reverse" in doc and "jacfwd(jacrev(func))" in doc and "good default" in doc

    def e(x):
        return (x * x.sin()).sum()

    hessian = func.hessian(e)(X)
    assert torch.allclose(hessian, torch.diag(2 * X.cos() - X * X.sin()), atol=1e-6)
    assert torch.allclose(hessian, func.jacfwd(func.jacrev(e))(X))
    assert torch.allclose(hessian, func.jacrev(func.jacrev(e))(X), atol=1e-6)
