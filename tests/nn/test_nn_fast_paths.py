"""Cross entropy without class weights, and the layers' backward with and without ``create_graph``.

(The file is named after the fast paths these tests once compared with the general ones;
issues 11 and 27 removed those paths, and the tests now hold the single paths to the same
values and to torch.)

* ``F.cross_entropy`` / ``F.nll_loss`` give the same values and gradients with
  no class weights as with all-ones weights: one ``NllLoss`` for every case
  (``nn/_functions/loss.py``), its ``NllLossBackward0`` after a
  ``LogSoftmaxBackward0``, as in PyTorch.
* Conv, pooling and normalization backwards are written once, with Tensor ops
  (``nn/_functions/``): a plain backward runs them outside the graph,
  ``create_graph=True`` records them, so the first derivative is the same either
  way and second derivatives match torch; a custom backward marked
  ``@once_differentiable`` still raises PyTorch's error when differentiated again.
* Max pooling sends the gradient of tied maxima to the first of them, as torch.
"""
import numpy as np
import pytest

import edutorch as et
import edutorch.nn.functional as EF

TORCH_REASON = "real PyTorch not installed: parity test skipped"
R = np.random.default_rng(7)
ONCE_ERROR = "trying to differentiate twice a function that was marked with @once_differentiable"


def randn(*shape):
    return R.standard_normal(shape)


# -- cross entropy ------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_plain_cross_entropy_matches_the_general_path(reduction):
    """No weights vs all-ones class weights: value and gradient."""
    x_np, t_np = randn(6, 5) * 4, np.array([0, 4, 2, 2, 1, 3])
    results = []
    for weight in (None, et.ones(5, dtype=et.float64)):
        x = et.tensor(x_np, requires_grad=True)
        loss = EF.cross_entropy(x, et.tensor(t_np), weight=weight, reduction=reduction)
        (loss * et.tensor(np.arange(1.0, 7.0) if reduction == "none" else 1.0)).sum().backward()
        results.append((loss.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_plain_cross_entropy_and_nll_gradcheck(reduction):
    t = et.tensor([1, 0, 3, 3])
    x = et.tensor(randn(4, 4), requires_grad=True)
    for loss in (EF.cross_entropy, lambda x, t, reduction: EF.nll_loss(x * x, t, reduction=reduction)):
        assert et.autograd.gradcheck(lambda x, loss=loss: loss(x, t, reduction=reduction), (x,))
        assert et.autograd.gradgradcheck(lambda x, loss=loss: loss(x, t, reduction=reduction), (x,))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_plain_cross_entropy_parity_with_torch(reduction):
    """Values, gradients, grad_fn name and a Hessian-vector product (create_graph) agree with torch."""
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x_np, v_np, t_np = randn(5, 3) * 3, randn(5, 3), np.array([2, 0, 1, 1, 0])

    def run(lib):
        x = lib.tensor(x_np, requires_grad=True)
        loss = lib.nn.CrossEntropyLoss(reduction=reduction)(x * 2, lib.tensor(t_np))
        (g,) = lib.autograd.grad(loss.sum(), x, create_graph=True)
        (g * lib.tensor(v_np)).sum().backward()
        names = [type(loss.grad_fn).__name__, type(loss.grad_fn.next_functions[0][0]).__name__]
        return loss.detach().numpy(), g.detach().numpy(), x.grad.numpy(), names

    ours, theirs = run(et), run(torch)
    for a, b in zip(ours[:3], theirs[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert ours[3] == theirs[3] == ["NllLossBackward0", "LogSoftmaxBackward0"]


def test_plain_cross_entropy_float32_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x_np, t_np = randn(8, 10).astype(np.float32) * 5, R.integers(0, 10, 8)

    def run(lib):
        x = lib.tensor(x_np, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(t_np))
        loss.backward()
        return loss.item(), x.grad.numpy(), loss.dtype == lib.float32, x.grad.dtype == lib.float32

    ours, theirs = run(et), run(torch)
    assert ours[2:] == theirs[2:] == (True, True)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-7)


def test_plain_cross_entropy_frees_its_graph_and_ignores_later_inplace_changes():
    """Backward twice raises PyTorch's error; changing the logits in place after the loss is fine (as in torch)."""
    x = et.tensor(randn(3, 4), requires_grad=True)
    logits = x * 1
    loss = EF.cross_entropy(logits, et.tensor([0, 1, 3]))
    expected = EF.cross_entropy(x.detach() * 1, et.tensor([0, 1, 3]), weight=et.ones(4, dtype=et.float64))
    with et.no_grad():
        logits.mul_(0)
    loss.backward()
    assert x.grad.abs().sum().item() > 0 and np.isclose(loss.item(), expected.item())
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()


def test_cross_entropy_out_of_range_target_still_raises_torchs_error():
    x = et.randn(2, 3, requires_grad=True)
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        EF.cross_entropy(x, et.tensor([0, 3]))


def test_cross_entropy_ignore_index_inside_the_class_range_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x_np, t_np = randn(4, 3), np.array([0, 1, 2, 1])

    def run(lib):
        x = lib.tensor(x_np, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(t_np), ignore_index=1)
        loss.backward()
        return loss.item(), x.grad.numpy()

    ours, theirs = run(et), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


# -- double backward through the layers ----------------------------------------------
# Under create_graph=True the conv, pooling and normalization backwards are
# recorded (tests/nn/test_double_backward.py covers them in depth); a custom
# backward marked @once_differentiable still refuses to be differentiated again.
W2, W1 = randn(2, 2, 3, 3), randn(3, 2, 2)
LAYERS = {
    "conv2d": lambda lib, x: lib.nn.functional.conv2d(x, lib.tensor(W2), padding=1),
    "conv1d_strided": lambda lib, x: lib.nn.functional.conv1d(x.flatten(2), lib.tensor(W1), stride=2),
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x, 2),
    "avg_pool2d": lambda lib, x: lib.nn.functional.avg_pool2d(x, 2),
    "adaptive_avg_pool2d": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 3),
    "batch_norm": lambda lib, x: lib.nn.functional.batch_norm(x, None, None, training=True),
    "layer_norm": lambda lib, x: lib.nn.functional.layer_norm(x, (4, 4)),
    "group_norm": lambda lib, x: lib.nn.functional.group_norm(x, 1),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_second_derivative_through_layer_backward_matches_torch(name):
    """Formerly PyTorch's once_differentiable error: now the values torch computes."""
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x_np = randn(2, 2, 4, 4)

    def run(lib):
        x = lib.tensor(x_np, requires_grad=True)
        (g,) = lib.autograd.grad((LAYERS[name](lib, x) ** 2).sum(), x, create_graph=True)
        assert g.requires_grad
        g.sum().backward()
        return g.detach().numpy(), x.grad.numpy()

    for a, b in zip(run(et), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_first_derivative_is_the_same_with_create_graph(name):
    """create_graph=True (the backward's Tensor ops recorded) gives the plain backward's values."""
    x_np = randn(2, 2, 4, 4)
    grads = []
    for create_graph in (False, True):
        x = et.tensor(x_np, requires_grad=True)
        (g,) = et.autograd.grad((LAYERS[name](et, x) ** 2).sum(), x, create_graph=create_graph)
        assert g.requires_grad == create_graph
        grads.append(g.detach().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["conv2d", "conv1d_strided", "batch_norm", "layer_norm", "group_norm"])
def test_gradient_of_a_plain_sum_still_depends_on_the_layer_inputs(name):
    """d sum(conv(x, w)) / dx depends on w (and a norm's on x): it is differentiated again, as in torch."""
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x_np = randn(2, 2, 4, 4)
    convs = {"conv2d": (W2, lambda F, x, w: F.conv2d(x, w, padding=1)),
             "conv1d_strided": (W1, lambda F, x, w: F.conv1d(x.flatten(2), w, stride=2))}

    def run(lib):
        x = lib.tensor(x_np, requires_grad=True)
        if name in convs:  # a trainable weight
            w_np, conv = convs[name]
            w = lib.tensor(w_np, requires_grad=True)
            leaves, out = [x, w], conv(lib.nn.functional, x, w)
        else:
            leaves, out = [x], LAYERS[name](lib, x)
        (g,) = lib.autograd.grad(out.sum(), x, create_graph=True)
        assert g.requires_grad
        (g * g).sum().backward()
        # a convolution is linear in x: dx depends on w only, and x gets no gradient (None)
        return [None if t.grad is None else t.grad.numpy() for t in leaves]

    ours, theirs = run(et), run(torch)
    assert [a is None for a in ours] == [b is None for b in theirs] == ([True, False] if name in convs else [False])
    for a, b in zip(ours, theirs):
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_weight_gradient_of_conv_can_be_differentiated_again():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x_np, w_np = randn(1, 2, 5, 5), randn(3, 2, 3, 3)

    def run(lib):
        x = lib.tensor(x_np, requires_grad=True)
        w = lib.tensor(w_np, requires_grad=True)
        (gw,) = lib.autograd.grad((lib.nn.functional.conv2d(x, w) ** 2).sum(), w, create_graph=True)
        gw.sum().backward()
        return gw.detach().numpy(), x.grad.numpy(), w.grad.numpy()

    ours, theirs = run(et), run(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_custom_once_differentiable_backward_still_raises():
    """``@once_differentiable`` itself is unchanged: its results carry PyTorch's Error node."""

    class Cube(et.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @et.autograd.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    x = et.tensor(randn(3), requires_grad=True)
    (g,) = et.autograd.grad((Cube.apply(x) ** 2).sum(), x, create_graph=True)
    assert type(g.grad_fn).__name__ == "Error"  # PyTorch's DelayedError node
    with pytest.raises(RuntimeError, match=ONCE_ERROR):
        g.sum().backward()


# -- max pooling: ties ------------------------------------------------------------
@pytest.mark.parametrize("kernel, stride, padding", [(2, 2, 0), (3, 2, 1), (3, 1, 1), (2, 1, 0)])
def test_max_pool_gradient_goes_to_the_first_of_tied_maxima(kernel, stride, padding):
    """After a ReLU many windows hold several equal maxima (zeros): torch sends the gradient to the first."""
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x_np = np.round(randn(2, 3, 7, 6)).clip(0, 1)  # lots of exact ties between 0s and 1s
    g_np = randn(*torch.nn.functional.max_pool2d(torch.tensor(x_np), kernel, stride, padding).shape)

    def run(lib):
        x = lib.tensor(x_np, requires_grad=True)
        lib.nn.functional.max_pool2d(x, kernel, stride, padding).backward(lib.tensor(g_np))
        return x.grad.numpy()

    np.testing.assert_allclose(run(et), run(torch), rtol=1e-12, atol=1e-12)
