"""torch.utils.checkpoint: same gradients as without checkpointing, activations recomputed."""
import contextlib
import warnings

import numpy as np
import pytest

import edutorch as et
from edutorch import nn
from edutorch.utils.checkpoint import checkpoint, checkpoint_sequential


def make_model():
    et.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Dropout(0.3), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))


def grads(model, x):
    return [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]


def test_checkpoint_gives_the_same_gradients_with_dropout():
    x = et.randn(5, 6, requires_grad=True)
    plain = make_model()
    et.manual_seed(1)
    plain(x).pow(2).sum().backward()
    expected = grads(plain, x)

    x.grad = None
    model = make_model()
    et.manual_seed(1)  # the same dropout mask in forward; the recomputation reuses it
    out = checkpoint(model, x, use_reentrant=True)
    assert type(out.grad_fn).__name__ == "CheckpointFunctionBackward"
    out.pow(2).sum().backward()
    for got, want in zip(grads(model, x), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_forward_saves_no_intermediate_graph():
    x = et.randn(3, requires_grad=True)
    out = checkpoint(lambda t: t.sin().exp(), x, use_reentrant=True)
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions] == ["AccumulateGrad"]


def test_checkpoint_sequential_matches_plain_forward_and_backward():
    x = et.randn(4, 6, requires_grad=True)
    plain = make_model().eval()
    plain(x).sum().backward()
    expected = grads(plain, x)
    x.grad = None
    model = make_model().eval()
    checkpoint_sequential(model, 3, x, use_reentrant=True).sum().backward()
    for got, want in zip(grads(model, x), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
    "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False "
    "is recommended, but if you need to preserve the current default behavior, you can pass "
    "use_reentrant=True. Refer to docs for more details on the differences between the two variants."
)
SEQUENTIAL_WARNING = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
    "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
    "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
    "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
    "two variants."
)


def _messages(record):
    return [str(w.message) for w in record]


def test_use_reentrant_not_passed_warns_and_means_true_as_in_torch_2_13():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = checkpoint(lambda t: t * 2, et.ones(2, requires_grad=True))
    assert _messages(record) == [REENTRANT_WARNING]
    assert record[0].category is UserWarning and record[0].filename == __file__
    assert type(out.grad_fn).__name__ == "CheckpointFunctionBackward"  # the reentrant variant
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = checkpoint_sequential([nn.Linear(2, 2), nn.Linear(2, 2)], 2, et.ones(1, 2, requires_grad=True))
    assert _messages(record) == [SEQUENTIAL_WARNING]  # only its own: it passes use_reentrant on
    assert type(out.grad_fn.next_functions[1][0]).__name__ == "CheckpointFunctionBackward"


def test_warnings_and_errors_like_pytorch():
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(lambda t: t * 2, et.ones(2), use_reentrant=True)
    assert not out.requires_grad
    with warnings.catch_warnings(record=True) as record:  # the non-reentrant variant does not warn
        warnings.simplefilter("always")
        checkpoint(lambda t: t * 2, et.ones(2), use_reentrant=False)
    assert record == []
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: foo,bar$"):
        checkpoint(lambda t, **kw: t, et.ones(2), use_reentrant=True, foo=1, bar=2)
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: foo$"):
        checkpoint_sequential([nn.Linear(2, 2)], 1, et.ones(1, 2), use_reentrant=False, foo=1)
    with pytest.raises(ValueError, match=r"^Passing `context_fn` or `debug` is only supported when use_reentrant=False\.$"):
        checkpoint(lambda t: t, et.ones(2), use_reentrant=True, context_fn=lambda: (None, None))
    with pytest.raises(ValueError, match=r"^determinism_check should be one of \['default', 'none'\], but got x$"):
        checkpoint(lambda t: t, et.ones(2, requires_grad=True), use_reentrant=False, determinism_check="x")


def test_gradients_match_real_torch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    data = np.random.default_rng(0).standard_normal((3, 4))
    results = []
    for lib, ckpt in ((et, checkpoint), (torch, torch_checkpoint)):
        x = lib.tensor(data, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = ckpt(lambda t: (t.sin() * t).tanh(), x, use_reentrant=True)
        out.sum().backward()
        results.append((type(out.grad_fn).__name__, x.grad.numpy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


# -- use_reentrant=False ---------------------------------------------------------------------
from edutorch.autograd.graph import saved_tensors_hooks  # noqa: E402
from edutorch.utils.checkpoint import CheckpointError, saved_tensor_bytes, set_checkpoint_early_stop  # noqa: E402

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def test_non_reentrant_gives_the_same_gradients_with_dropout():
    x = et.randn(5, 6, requires_grad=True)
    plain = make_model()
    et.manual_seed(1)
    plain(x).pow(2).sum().backward()
    expected = grads(plain, x)

    x.grad = None
    model = make_model()
    et.manual_seed(1)
    out = checkpoint(model, x, use_reentrant=False)
    assert type(out.grad_fn).__name__ == "AddmmBackward0"  # the ordinary graph, recorded in forward
    out.pow(2).sum().backward()
    for got, want in zip(grads(model, x), expected):
        np.testing.assert_array_equal(got, want)


def test_non_reentrant_checkpoint_sequential_matches_plain_and_reentrant():
    x = et.randn(4, 6, dtype=et.float64, requires_grad=True)
    results = []
    for mode in ("plain", False, True):
        model = make_model().double()
        et.manual_seed(7)
        out = model(x) if mode == "plain" else checkpoint_sequential(model, 3, x, use_reentrant=mode)
        x.grad = None
        out.pow(2).sum().backward()
        results.append(grads(model, x))
    for variant in results[1:]:
        for got, want in zip(variant, results[0]):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def test_non_reentrant_works_with_autograd_grad():
    model = make_model().eval().double()
    x = et.randn(3, 6, dtype=et.float64, requires_grad=True)
    want = et.autograd.grad(model(x).sum(), [x, *model.parameters()])
    got = et.autograd.grad(checkpoint(model, x, use_reentrant=False).sum(), [x, *model.parameters()])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    # backward(inputs=...) too
    checkpoint(model, x, use_reentrant=False).sum().backward(inputs=[x])
    np.testing.assert_array_equal(x.grad.numpy(), want[0].numpy())
    assert all(p.grad is None for p in model.parameters())


def test_non_reentrant_input_without_grad_still_trains_the_parameters():
    model = make_model().eval()
    x = et.randn(3, 6)
    checkpoint(model, x, use_reentrant=False).sum().backward()
    got = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for g, p in zip(got, model.parameters()):
        np.testing.assert_array_equal(g, p.grad.numpy())


def test_non_reentrant_nested_structures_and_kwargs():
    a = et.tensor([0.1, 0.2, 0.3], dtype=et.float64, requires_grad=True)
    b = et.tensor([1.0, -2.0, 0.5], dtype=et.float64, requires_grad=True)

    def fn(d, *, scale):
        return (d["a"].sin() * d["b"][0]).exp() * scale

    checkpoint(fn, {"a": a, "b": [b]}, use_reentrant=False, scale=3.0).sum().backward()
    y = np.exp(np.sin(a.detach().numpy()) * b.detach().numpy()) * 3
    np.testing.assert_allclose(a.grad.numpy(), y * np.cos(a.detach().numpy()) * b.detach().numpy())
    np.testing.assert_allclose(b.grad.numpy(), y * np.sin(a.detach().numpy()))


def test_non_reentrant_nested_checkpoints_and_double_backward():
    data = np.array([0.3, -0.8, 1.2])
    x = et.tensor(data, requires_grad=True)
    inner = lambda t: t.sin().exp()  # noqa: E731
    y = checkpoint(lambda t: checkpoint(inner, t.cos(), use_reentrant=False).tanh(), x, use_reentrant=False)
    y.sum().backward()
    ref = et.tensor(data, requires_grad=True)
    ref.cos().sin().exp().tanh().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ref.grad.numpy(), rtol=1e-14)

    x = et.tensor(data, requires_grad=True)
    (g,) = et.autograd.grad(checkpoint(lambda t: t.sin() * t, x, use_reentrant=False).sum(), x, create_graph=True)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(data) - data * np.sin(data), rtol=1e-14)


def test_non_reentrant_gradcheck_float64():
    w = et.tensor([[0.5, -0.3], [0.2, 0.9]], dtype=et.float64, requires_grad=True)
    x = et.tensor([[0.1, 0.4], [-0.6, 0.3], [0.8, -0.2]], dtype=et.float64, requires_grad=True)

    def fn(x, w):
        return checkpoint(lambda a, b: (a @ b).tanh() * a.exp(), x, w, use_reentrant=False)

    assert et.autograd.gradcheck(fn, (x, w))
    assert et.autograd.gradgradcheck(fn, (x, w))


def test_recomputes_once_per_backward_pass():
    calls = []

    def fn(t):
        calls.append(1)
        return t.sin().exp().cos()

    x = et.randn(3, requires_grad=True)
    y = checkpoint(fn, x, use_reentrant=False)
    assert len(calls) == 1
    y.sum().backward(retain_graph=True)  # three saved tensors, one recomputation
    assert len(calls) == 2
    y.sum().backward(retain_graph=True)
    assert len(calls) == 3
    et.autograd.grad(y.sum(), x)
    assert len(calls) == 4


def _steps(**kwargs):
    seen = []

    def fn(t):
        seen.append("a")
        a = t.sin()
        seen.append("b")
        b = a.exp()  # saves its result: the last saved tensor
        seen.append("c")
        return b * 2  # saves nothing (a number)

    y = checkpoint(fn, et.randn(3, requires_grad=True), use_reentrant=False, **kwargs)
    seen.clear()
    y.sum().backward()
    return seen


def test_early_stop_ends_the_recomputation_after_the_last_saved_tensor():
    assert _steps() == ["a", "b"]
    assert _steps(early_stop=False) == ["a", "b", "c"]
    with set_checkpoint_early_stop(False):
        assert _steps() == ["a", "b", "c"]
    assert _steps() == ["a", "b"]


def test_an_outer_hook_sees_only_the_checkpoint_inputs():
    model = make_model().eval()
    x = et.randn(5, 6, requires_grad=True)
    log = []
    with saved_tensors_hooks(lambda t: log.append(tuple(t.shape)) or t, lambda t: log.append("u") or t):
        y = checkpoint(model, x, use_reentrant=False)
        z = y.exp()
    assert log == [(5, 6), (5, 2)]  # x for the recomputation; exp's result
    z.sum().backward()
    assert log.count("u") == 2


def test_input_modified_in_place_after_the_forward_is_an_error():
    x = et.randn(3, requires_grad=True)
    h = x * 2
    y = checkpoint(lambda t: t.sin().exp(), h, use_reentrant=False)
    h.add_(1)
    with pytest.raises(RuntimeError, match=r"^one of the variables needed for gradient computation has been "
                                           r"modified by an inplace operation: \[torch.FloatTensor \[3\]\], "
                                           r"which is output 0 of Add, is at version 1; expected version 0"):
        y.sum().backward()


def test_in_place_ops_inside_the_checkpoint():
    data = np.array([[0.5, -1.0], [2.0, 0.1]])

    def fn(t):
        h = t @ t
        h.add_(1)
        h.mul_(t)  # saves h's old values
        h.sin_()  # and again
        return h.relu_()  # saves its result, h itself

    results = []
    for mode in ("plain", False, True):
        x = et.tensor(data, requires_grad=True)
        (fn(x) if mode == "plain" else checkpoint(fn, x, use_reentrant=mode)).sum().backward()
        results.append(x.grad.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-14)
    np.testing.assert_allclose(results[2], results[0], rtol=1e-14)


def test_checkpoint_errors_like_pytorch():
    x = et.randn(3, requires_grad=True)

    class TwiceFn(et.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * 2

        @staticmethod
        def backward(ctx, g):
            ctx.saved_tensors
            ctx.saved_tensors
            return g * 2

    with pytest.raises(CheckpointError, match=r"^torch\.utils\.checkpoint: Unpack is being triggered for a tensor "
                                              r"that was already unpacked once\. If you are calling "
                                              r"ctx\.saved_tensors in backward, make sure to do so only once\."):
        checkpoint(lambda t: TwiceFn.apply(t.sin()), x, use_reentrant=False).sum().backward()

    def changing(first, second):
        state = []

        def fn(t):
            state.append(1)
            return first(t) if len(state) == 1 else second(t)

        return fn

    more = changing(lambda t: t.sin(), lambda t: t.sin().exp())
    with pytest.raises(CheckpointError, match=r"^torch\.utils\.checkpoint: trying to save more tensors during "
                                              r"recomputation than during the original forward pass\."):
        checkpoint(more, x, use_reentrant=False, early_stop=False).sum().backward()
    fewer = changing(lambda t: t.sin().exp(), lambda t: t.sin())
    with pytest.raises(CheckpointError) as info:
        checkpoint(fewer, x, use_reentrant=False).sum().backward()
    assert str(info.value).startswith(
        "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
        "recomputation.\nNumber of tensors saved during forward: 2\nNumber of tensors saved during recomputation: 1.")
    other_shape = changing(lambda t: t.sin(), lambda t: t[:2].sin())
    with pytest.raises(CheckpointError) as info:
        checkpoint(other_shape, x, use_reentrant=False).sum().backward()
    assert str(info.value).startswith(
        "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than "
        "during the forward pass.\ntensor at position 0:\n"
        "saved metadata: {'shape': torch.Size([3]), 'dtype': torch.float32, 'device': device(type='cpu')}\n"
        "recomputed metadata: {'shape': torch.Size([2]), 'dtype': torch.float32, 'device': device(type='cpu')}\n")
    checkpoint(other_shape, x, use_reentrant=False, determinism_check="none")  # no check asked: no error


def test_without_grad_mode_it_is_an_ordinary_call():
    x = et.randn(3, requires_grad=True)
    with et.no_grad():
        y = checkpoint(lambda t: t.exp(), x, use_reentrant=False)
    assert y.grad_fn is None and not y.requires_grad


def test_non_reentrant_matches_torch_gradients_and_hook_counts():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    rng = np.random.default_rng(3)
    data = rng.standard_normal((4, 5))
    weights = [rng.standard_normal(s) for s in ((6, 5), (6,), (3, 6), (3,))]

    def run(lib, ckpt):
        model = lib.nn.Sequential(lib.nn.Linear(5, 6), lib.nn.Tanh(), lib.nn.Linear(6, 3)).double()
        with lib.no_grad():
            for p, w in zip(model.parameters(), weights):
                p.copy_(lib.tensor(w))
        x = lib.tensor(data, requires_grad=True)
        calls, log = [], []

        def fn(t, *, power):
            calls.append(1)
            return model(t).pow(power)

        with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append(tuple(t.shape)) or t,
                                                   lambda t: log.append("u") or t):
            y = ckpt(fn, x, use_reentrant=False, power=2)
        (gx,) = lib.autograd.grad(y.sum(), x, retain_graph=True)
        y.sum().backward()
        return gx.numpy(), [p.grad.numpy() for p in model.parameters()], len(calls), log

    mine, theirs = run(et, checkpoint), run(torch, torch_checkpoint)
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-12)
    for m, t in zip(mine[1], theirs[1]):
        np.testing.assert_allclose(m, t, rtol=1e-12)
    assert mine[2:] == theirs[2:] == (3, [(4, 5), "u", "u"])


# -- memory: bytes held by saved tensors --------------------------------------------------------
def _mlp(lib, depth, width=32):
    lib.manual_seed(0)
    return lib.nn.Sequential(*[lib.nn.Sequential(lib.nn.Linear(width, width), lib.nn.ReLU()) for _ in range(depth)])


def _saved_bytes(lib, depth, segments):
    """Bytes of the tensors saved for backward, counted by a pack hook (works for torch and edutorch)."""
    from importlib import import_module

    ckpt = import_module(lib.__name__ + ".utils.checkpoint")
    model, x = _mlp(lib, depth), lib.randn(16, 32, requires_grad=True)
    total = [0]

    def pack(t):
        total[0] += t.numel() * t.element_size()
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if segments is None:
            model(x)
        else:
            ckpt.checkpoint_sequential(model, segments, x, use_reentrant=False)
    return total[0]


def test_checkpointing_cuts_saved_memory_from_n_to_sqrt_n():
    plain = {n: _saved_bytes(et, n, None) for n in (16, 64)}
    ckpt = {n: _saved_bytes(et, n, int(np.sqrt(n))) for n in (16, 64)}
    assert plain[64] / plain[16] == 4.0  # linear in depth: input, weight and ReLU output per layer
    assert 1.8 <= ckpt[64] / ckpt[16] <= 2.5  # about sqrt(64 / 16) = 2
    assert ckpt[64] < plain[64] / 6
    # the helper counts the same way
    model, x = _mlp(et, 16), et.randn(16, 32, requires_grad=True)
    out, counted = saved_tensor_bytes(lambda: checkpoint_sequential(model, 4, x, use_reentrant=False))
    assert counted == ckpt[16] and tuple(out.shape) == (16, 32)


def test_saved_memory_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for depth, segments in ((16, None), (16, 4), (64, 8)):
        assert _saved_bytes(et, depth, segments) == _saved_bytes(torch, depth, segments)


def test_helpers_detach_variable_and_check_backward_validity():
    from edutorch.utils.checkpoint import check_backward_validity, detach_variable

    x = et.ones(2, requires_grad=True) * 2
    y = et.ones(2)
    dx, dy, n = detach_variable((x, y, 3))
    assert dx.is_leaf and dx.requires_grad and not dy.requires_grad and n == 3
    with pytest.raises(RuntimeError, match="^Only tuple of tensors is supported. Got Unsupported input type: list$"):
        detach_variable([x])
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        check_backward_validity([y, 1])


def test_increment_version_makes_a_hidden_change_visible():
    from edutorch.autograd.graph import increment_version

    x = et.ones(2, requires_grad=True)
    h = x * 1.0
    y = h.sin()
    increment_version(h)
    increment_version([h, h])
    assert h._version == 3
    with pytest.raises(RuntimeError, match="is at version 3; expected version 0 instead"):
        y.sum().backward()


def test_reentrant_refuses_autograd_grad_and_backward_inputs_like_torch():
    w = et.tensor([1.0, 2.0], requires_grad=True)
    x = et.tensor([0.5, 0.1], requires_grad=True)
    message = (r"^When use_reentrant=True, torch\.utils\.checkpoint is incompatible with \.grad\(\) or passing an "
               r"`inputs` parameter to \.backward\(\)\. To resolve this error, you can either set "
               r"use_reentrant=False, or call \.backward\(\) without passing the `inputs` argument\.$")
    with pytest.raises(RuntimeError, match=message):
        et.autograd.grad(checkpoint(lambda t: (t * w).sin(), x, use_reentrant=True).sum(), x)
    with pytest.raises(RuntimeError, match=message):
        checkpoint(lambda t: (t * w).sin(), x, use_reentrant=True).sum().backward(inputs=[x])
    assert w.grad is None and x.grad is None  # nothing leaked into the leaves
    checkpoint(lambda t: (t * w).sin(), x, use_reentrant=True).sum().backward()  # a plain backward is fine
    np.testing.assert_allclose(w.grad.numpy(), np.cos([0.5, 0.2]) * [0.5, 0.1], rtol=1e-6)


def test_context_fn_wraps_the_forward_and_the_recomputation():
    log = []

    @contextlib.contextmanager
    def tag(name):
        log.append(f"enter {name}")
        try:
            yield
        finally:  # the recomputation ends with an exception once every saved tensor is back (early stop)
            log.append(f"exit {name}")

    def fn(t):
        log.append("run")
        return t.sin()

    x = et.randn(3, requires_grad=True)
    y = checkpoint(fn, x, use_reentrant=False, context_fn=lambda: (tag("forward"), tag("recompute")))
    assert log == ["enter forward", "run", "exit forward"]
    y.sum().backward()
    assert log[3:] == ["enter recompute", "run", "exit recompute"]


def test_preserve_rng_state_false_draws_new_random_numbers_in_the_recomputation():
    def fn(t):
        return t * et.rand(3)

    for preserve, same in ((True, True), (False, False)):
        x = et.ones(3, requires_grad=True)
        et.manual_seed(0)
        y = checkpoint(fn, x, use_reentrant=False, preserve_rng_state=preserve)
        y.sum().backward()  # d(x * r)/dx = r from the recomputation
        assert np.array_equal(x.grad.numpy(), y.detach().numpy()) == same
