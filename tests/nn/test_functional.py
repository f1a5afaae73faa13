"""``edutorch.nn.functional`` against real PyTorch: values, gradients, grad_fn names.

Each case is a function ``case(F, *tensors)`` run once with edutorch and once
with torch on identical inputs; the outputs and the gradients of
``sum(out * cotangent)`` w.r.t. every float input must agree.  A float64
central-difference gradient check (no torch needed) covers each op too.
"""
import numpy as np
import pytest

import edutorch as et
import edutorch.nn.functional as EF

R = np.random.default_rng(0)


def _inputs(lib, arrays, dtype):
    out = []
    for a in arrays:
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            out.append(lib.tensor(a.astype(dtype), requires_grad=True))
        elif isinstance(a, np.ndarray):
            out.append(lib.tensor(a))
        else:
            out.append(a)
    return out


def _outputs(out):
    return out if isinstance(out, tuple) else (out,)


def parity(case, *arrays, dtype="float64", grad=True, name=None):
    """Run ``case`` in both libraries; compare outputs, gradients and the grad_fn name."""
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    import torch.nn.functional as TF

    tol = dict(rtol=1e-10, atol=1e-12) if dtype == "float64" else dict(rtol=1e-4, atol=1e-5)
    e_in, t_in = _inputs(et, arrays, dtype), _inputs(torch, arrays, dtype)
    e_out, t_out = _outputs(case(EF, *e_in)), _outputs(case(TF, *t_in))
    for e, t in zip(e_out, t_out):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **tol)
        assert e.dtype.__repr__() == repr(t.dtype)
    if name is not None:
        assert type(e_out[0].grad_fn).__name__ == type(t_out[0].grad_fn).__name__ == name
    if not grad:
        return
    cot = R.standard_normal(tuple(t_out[0].shape)).astype(dtype)
    (e_out[0] * et.tensor(cot)).sum().backward()
    (t_out[0] * torch.tensor(cot)).sum().backward()
    for e, t in zip(e_in, t_in):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            assert (e.grad is None) == (t.grad is None)
            if t.grad is not None:
                np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), **tol)


def gradcheck(case, *arrays, eps=1e-6, atol=1e-6):
    """Central differences in float64 for every float input of ``case`` (no torch needed)."""
    e_in = _inputs(et, arrays, "float64")
    out = _outputs(case(EF, *e_in))[0]
    cot = R.standard_normal(tuple(out.shape))
    (out * et.tensor(cot)).sum().backward()
    for t in e_in:
        if not (isinstance(t, et.Tensor) and t.requires_grad):
            continue
        num = np.zeros(t.shape)
        flat = t.detach().numpy().reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            with et.no_grad():
                flat[i] = old + eps
                plus = (_outputs(case(EF, *e_in))[0].data * cot).sum()
                flat[i] = old - eps
                minus = (_outputs(case(EF, *e_in))[0].data * cot).sum()
            flat[i] = old
            num.reshape(-1)[i] = (plus - minus) / (2 * eps)
        np.testing.assert_allclose(t.grad.numpy(), num, atol=atol, rtol=1e-5)


def randn(*shape):
    return R.standard_normal(shape)


# (id, case, input arrays, grad_fn name in PyTorch)
CASES = [
    ("linear", lambda F, x, w, b: F.linear(x, w, b), (randn(4, 3), randn(5, 3), randn(5)), "AddmmBackward0"),
    ("linear_nobias", lambda F, x, w: F.linear(x, w), (randn(4, 3), randn(5, 3)), "MmBackward0"),
    ("linear_3d", lambda F, x, w, b: F.linear(x, w, b), (randn(2, 4, 3), randn(5, 3), randn(5)), "ViewBackward0"),
    ("linear_1d", lambda F, x, w, b: F.linear(x, w, b), (randn(3), randn(5, 3), randn(5)), None),
    ("bilinear", lambda F, a, b, w, c: F.bilinear(a, b, w, c), (randn(4, 2), randn(4, 3), randn(5, 2, 3), randn(5)), None),
    ("conv2d", lambda F, x, w, b: F.conv2d(x, w, b), (randn(2, 3, 6, 5), randn(4, 3, 3, 3), randn(4)), "ConvolutionBackward0"),
    ("conv2d_pad_stride", lambda F, x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
     (randn(2, 3, 7, 6), randn(4, 3, 3, 2), randn(4)), "ConvolutionBackward0"),
    ("conv2d_dilation", lambda F, x, w: F.conv2d(x, w, dilation=(2, 1), padding=(1, 0)),
     (randn(1, 2, 7, 6), randn(3, 2, 3, 3)), "ConvolutionBackward0"),
    ("conv2d_groups", lambda F, x, w, b: F.conv2d(x, w, b, groups=2), (randn(2, 4, 5, 5), randn(6, 2, 3, 3), randn(6)), None),
    ("conv2d_same_even", lambda F, x, w: F.conv2d(x, w, padding="same"), (randn(1, 2, 5, 6), randn(3, 2, 4, 2)), None),
    ("conv2d_valid", lambda F, x, w: F.conv2d(x, w, padding="valid"), (randn(1, 2, 5, 6), randn(3, 2, 2, 2)), None),
    ("conv2d_unbatched", lambda F, x, w: F.conv2d(x, w, padding=1), (randn(2, 5, 5), randn(3, 2, 3, 3)), None),
    ("conv1d", lambda F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1), (randn(2, 3, 9), randn(4, 3, 3), randn(4)),
     "ConvolutionBackward0"),
    ("conv1d_same_dil", lambda F, x, w: F.conv1d(x, w, padding="same", dilation=2), (randn(2, 2, 9), randn(4, 2, 3)), None),
    ("max_pool2d", lambda F, x: F.max_pool2d(x, 2), (randn(2, 3, 6, 4),), "MaxPool2DWithIndicesBackward0"),
    ("max_pool2d_overlap", lambda F, x: F.max_pool2d(x, 3, stride=2, padding=1), (randn(2, 2, 7, 6),), None),
    ("max_pool2d_ceil", lambda F, x: F.max_pool2d(x, 2, ceil_mode=True), (randn(1, 2, 5, 7),), None),
    ("max_pool2d_dilation", lambda F, x: F.max_pool2d(x, 2, stride=1, dilation=2), (randn(1, 2, 6, 6),), None),
    ("max_pool2d_indices", lambda F, x: F.max_pool2d(x, 3, 2, 1, return_indices=True), (randn(2, 2, 7, 6),), None),
    ("max_pool1d", lambda F, x: F.max_pool1d(x, 3, stride=2), (randn(2, 3, 9),), None),
    ("max_pool1d_indices", lambda F, x: F.max_pool1d(x, 2, return_indices=True), (randn(2, 3, 8),), None),
    ("avg_pool2d", lambda F, x: F.avg_pool2d(x, 2), (randn(2, 3, 6, 4),), "AvgPool2DBackward0"),
    ("avg_pool2d_pad", lambda F, x: F.avg_pool2d(x, 3, 2, 1), (randn(1, 2, 7, 6),), None),
    ("avg_pool2d_pad_exclude", lambda F, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (randn(1, 2, 7, 6),), None),
    ("avg_pool2d_ceil", lambda F, x: F.avg_pool2d(x, 2, ceil_mode=True), (randn(1, 2, 5, 7),), None),
    ("avg_pool2d_divisor", lambda F, x: F.avg_pool2d(x, 2, divisor_override=3), (randn(1, 2, 4, 4),), None),
    ("adaptive_avg_pool2d", lambda F, x: F.adaptive_avg_pool2d(x, (3, 2)), (randn(2, 3, 7, 5),), "AdaptiveAvgPool2DBackward0"),
    ("adaptive_avg_pool2d_1", lambda F, x: F.adaptive_avg_pool2d(x, 1), (randn(2, 3, 4, 4),), "MeanBackward1"),
    ("batch_norm_train", lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     (randn(4, 3, 2, 2), randn(3), randn(3)), "NativeBatchNormBackward0"),
    ("batch_norm_1d", lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True, eps=1e-3),
     (randn(5, 3), randn(3), randn(3)), None),
    ("layer_norm", lambda F, x, w, b: F.layer_norm(x, (4,), w, b), (randn(3, 4), randn(4), randn(4)), "NativeLayerNormBackward0"),
    ("layer_norm_2d", lambda F, x, w, b: F.layer_norm(x, (3, 4), w, b), (randn(2, 3, 4), randn(3, 4), randn(3, 4)), None),
    ("layer_norm_noaffine", lambda F, x: F.layer_norm(x, (5,)), (randn(2, 3, 5),), None),
    ("group_norm", lambda F, x, w, b: F.group_norm(x, 2, w, b), (randn(3, 4, 2, 3), randn(4), randn(4)), "NativeGroupNormBackward0"),
    ("embedding", lambda F, i, w: F.embedding(i, w), (np.array([[1, 0], [3, 1]]), randn(4, 3)), "EmbeddingBackward0"),
    ("embedding_pad", lambda F, i, w: F.embedding(i, w, padding_idx=1), (np.array([[1, 0], [3, 1]]), randn(4, 3)), None),
    ("pad_constant", lambda F, x: F.pad(x, (1, 2, 0, 1), value=0.5), (randn(2, 3, 4),), "ConstantPadNdBackward0"),
    ("pad_reflect", lambda F, x: F.pad(x, (2, 1), mode="reflect"), (randn(2, 3, 4),), None),
    ("pad_replicate", lambda F, x: F.pad(x, (2, 1, 1, 0), mode="replicate"), (randn(1, 2, 3, 4),), None),
    ("pad_circular", lambda F, x: F.pad(x, (2, 1), mode="circular"), (randn(1, 3, 4),), None),
    ("relu", lambda F, x: F.relu(x), (randn(3, 4),), "ReluBackward0"),
    ("leaky_relu", lambda F, x: F.leaky_relu(x, 0.2), (randn(3, 4),), "LeakyReluBackward0"),
    ("elu", lambda F, x: F.elu(x, 0.7), (randn(3, 4),), "EluBackward0"),
    ("gelu", lambda F, x: F.gelu(x), (randn(3, 4),), "GeluBackward0"),
    ("gelu_tanh", lambda F, x: F.gelu(x, approximate="tanh"), (randn(3, 4),), "GeluBackward0"),
    ("silu", lambda F, x: F.silu(x), (randn(3, 4),), "SiluBackward0"),
    ("sigmoid", lambda F, x: F.sigmoid(x), (randn(3, 4),), "SigmoidBackward0"),
    ("tanh", lambda F, x: F.tanh(x), (randn(3, 4),), "TanhBackward0"),
    ("softplus", lambda F, x: F.softplus(x * 10, beta=2, threshold=5), (randn(3, 4),), "SoftplusBackward0"),
    ("softmax", lambda F, x: F.softmax(x, dim=1), (randn(3, 4),), "SoftmaxBackward0"),
    ("softmax_dim0", lambda F, x: F.softmax(x, dim=-3), (randn(3, 4, 2),), None),
    ("log_softmax", lambda F, x: F.log_softmax(x, dim=-1), (randn(3, 4),), "LogSoftmaxBackward0"),
]


@pytest.mark.parametrize("case,arrays,name", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_parity_float64(case, arrays, name):
    parity(case, *arrays, name=name)


@pytest.mark.parametrize("case,arrays,name", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_parity_float32(case, arrays, name):
    parity(case, *arrays, dtype="float32")


# padding_idx deliberately blocks the true gradient of its row: checked below instead
GRADCHECK = [c for c in CASES if c[0] != "embedding_pad"]


@pytest.mark.parametrize("case,arrays,name", [c[1:] for c in GRADCHECK], ids=[c[0] for c in GRADCHECK])
def test_gradcheck(case, arrays, name):
    gradcheck(case, *arrays)


def test_embedding_padding_idx_row_gets_no_gradient():
    w = et.randn(4, 3, requires_grad=True)
    EF.embedding(et.tensor([[1, 0], [3, 1]]), w, padding_idx=1).sum().backward()
    assert np.all(w.grad.numpy()[1] == 0)
    assert np.all(w.grad.numpy()[0] == 1) and np.all(w.grad.numpy()[3] == 1)


def test_double_backward_through_linear_softmax_and_cross_entropy():
    """create_graph=True: the gradient of a gradient (linear, tanh, log_softmax, nll) matches torch."""
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    x_np, w_np, b_np = randn(4, 3), randn(5, 3), randn(5)
    t_np = np.array([0, 4, 2, 1])

    def run(lib, F):
        x = lib.tensor(x_np, requires_grad=True)
        w = lib.tensor(w_np, requires_grad=True)
        loss = F.cross_entropy(F.linear(x, w, lib.tensor(b_np)).tanh(), lib.tensor(t_np), label_smoothing=0.1)
        (gw,) = lib.autograd.grad(loss, w, create_graph=True)
        (gw * gw).sum().backward()  # d/dx of the squared weight-gradient norm
        return x.grad.numpy()

    import torch.nn.functional as TF

    np.testing.assert_allclose(run(et, EF), run(torch, TF), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("act", ["elu", "gelu", "gelu_tanh", "silu", "softplus", "leaky_relu", "softmax", "log_softmax"])
def test_second_derivative_of_activations(act):
    """Hessian-vector products through each activation agree with torch (create_graph=True)."""
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    import torch.nn.functional as TF

    x_np, v_np = randn(3, 4), randn(3, 4)
    calls = {"elu": lambda F, x: F.elu(x, 0.7), "gelu": lambda F, x: F.gelu(x),
             "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"), "silu": lambda F, x: F.silu(x),
             "softplus": lambda F, x: F.softplus(x, beta=2, threshold=1), "leaky_relu": lambda F, x: F.leaky_relu(x, 0.1),
             "softmax": lambda F, x: F.softmax(x, 1), "log_softmax": lambda F, x: F.log_softmax(x, 0)}

    def hvp(lib, F):
        x = lib.tensor(x_np, requires_grad=True)
        y = (calls[act](F, x) ** 3).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (g * lib.tensor(v_np)).sum().backward()
        return x.grad.numpy()

    np.testing.assert_allclose(hvp(et, EF), hvp(torch, TF), rtol=1e-8, atol=1e-10)
