"""Losses against real PyTorch: values, gradients, grad_fn names, errors; float64 gradchecks.

Each case builds the loss with ``make(nn)`` (the module form) and, separately,
calls the ``nn.functional`` form; inputs marked float require grad.
"""
import warnings

import numpy as np
import pytest

import edutorch as et
import edutorch.nn as enn

TORCH_REASON = "real PyTorch not installed: parity test skipped"
R = np.random.default_rng(1)


def randn(*shape):
    return R.standard_normal(shape)


def probs(*shape, dim=1):
    e = np.exp(R.standard_normal(shape))
    return e / e.sum(axis=dim, keepdims=True)


def rand(*shape):
    return R.uniform(0.05, 0.95, shape)


def _args(lib, arrays, dtype, grad_mask):
    out = []
    for a, g in zip(arrays, grad_mask):
        if a is None:
            out.append(None)
        elif a.dtype.kind == "f":
            out.append(lib.tensor(a.astype(dtype), requires_grad=g))
        else:
            out.append(lib.tensor(a))
    return out


def check_loss(call, arrays, grad_mask=None, dtype="float64", name=None):
    """``call(lib, *tensors)`` under both libraries; compare value, grads and grad_fn name."""
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    grad_mask = grad_mask or [True] + [False] * (len(arrays) - 1)
    tol = dict(rtol=1e-9, atol=1e-12) if dtype == "float64" else dict(rtol=2e-4, atol=1e-5)
    e_in, t_in = _args(et, arrays, dtype, grad_mask), _args(torch, arrays, dtype, grad_mask)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out_e, out_t = call(et, *e_in), call(torch, *t_in)
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), **tol)
    assert tuple(out_e.shape) == tuple(out_t.shape)
    if name is not None:
        assert type(out_e.grad_fn).__name__ == type(out_t.grad_fn).__name__ == name
    cot = R.standard_normal(tuple(out_t.shape)).astype(dtype)
    (out_e * et.tensor(cot)).sum().backward()
    (out_t * torch.tensor(cot)).sum().backward()
    for e, t in zip(e_in, t_in):
        if t is not None and t.requires_grad:
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), **tol)
    return out_e


L = np.array
T4 = L([0, 2, 1, 2])

CASES = [
    # id, call, arrays, grad_mask, grad_fn name
    ("MSELoss", lambda lib, x, y: lib.nn.MSELoss()(x, y), (randn(4, 3), randn(4, 3)), [True, True], "MseLossBackward0"),
    ("MSELoss_sum", lambda lib, x, y: lib.nn.MSELoss(reduction="sum")(x, y), (randn(4, 3), randn(4, 3)), None, None),
    ("MSELoss_none", lambda lib, x, y: lib.nn.MSELoss(reduction="none")(x, y), (randn(4, 3), randn(4, 3)), None, None),
    ("mse_broadcast", lambda lib, x, y: lib.nn.functional.mse_loss(x, y), (randn(4, 3), randn(3)), [True, True], None),
    ("L1Loss", lambda lib, x, y: lib.nn.L1Loss()(x, y), (randn(4, 3), randn(4, 3)), [True, True], "MeanBackward0"),
    ("L1Loss_none", lambda lib, x, y: lib.nn.L1Loss(reduction="none")(x, y), (randn(4, 3), randn(4, 3)), None, None),
    ("SmoothL1Loss", lambda lib, x, y: lib.nn.SmoothL1Loss(beta=0.5)(x, y), (randn(4, 3), randn(4, 3)), [True, True],
     "SmoothL1LossBackward0"),
    ("SmoothL1Loss_beta0_sum", lambda lib, x, y: lib.nn.SmoothL1Loss(reduction="sum", beta=0.0)(x, y),
     (randn(4, 3), randn(4, 3)), None, None),
    ("HuberLoss", lambda lib, x, y: lib.nn.HuberLoss(delta=0.7)(x, y), (randn(4, 3), randn(4, 3)), [True, True],
     "HuberLossBackward0"),
    ("HuberLoss_none", lambda lib, x, y: lib.nn.HuberLoss(reduction="none")(x, y), (randn(4, 3), randn(4, 3)), None, None),
    ("CrossEntropyLoss", lambda lib, x, t: lib.nn.CrossEntropyLoss()(x, t), (randn(4, 3), T4), None, "NllLossBackward0"),
    ("CE_weight_ignore", lambda lib, x, t, w: lib.nn.CrossEntropyLoss(weight=w, ignore_index=1)(x, t),
     (randn(4, 3), T4, rand(3)), None, None),
    ("CE_sum", lambda lib, x, t: lib.nn.CrossEntropyLoss(reduction="sum")(x, t), (randn(4, 3), T4), None, None),
    ("CE_none", lambda lib, x, t: lib.nn.CrossEntropyLoss(reduction="none")(x, t), (randn(4, 3), T4), None, None),
    ("CE_smoothing", lambda lib, x, t: lib.nn.CrossEntropyLoss(label_smoothing=0.2)(x, t), (randn(4, 3), T4), None,
     "AddBackward0"),
    ("CE_smoothing_weight_ignore", lambda lib, x, t, w: lib.nn.CrossEntropyLoss(
        weight=w, ignore_index=2, label_smoothing=0.1)(x, t), (randn(4, 3), T4, rand(3)), None, None),
    ("CE_smoothing_none", lambda lib, x, t: lib.nn.CrossEntropyLoss(reduction="none", label_smoothing=0.3)(x, t),
     (randn(4, 3), T4), None, None),
    ("CE_probs", lambda lib, x, p: lib.nn.CrossEntropyLoss()(x, p), (randn(4, 3), probs(4, 3)), None, None),
    ("CE_probs_weight_smooth", lambda lib, x, p, w: lib.nn.CrossEntropyLoss(weight=w, label_smoothing=0.2)(x, p),
     (randn(4, 3), probs(4, 3), rand(3)), None, None),
    ("CE_probs_none", lambda lib, x, p: lib.nn.CrossEntropyLoss(reduction="none")(x, p), (randn(4, 3), probs(4, 3)),
     None, None),
    ("CE_spatial", lambda lib, x, t: lib.nn.CrossEntropyLoss()(x, t), (randn(2, 3, 4, 2), R.integers(0, 3, (2, 4, 2))),
     None, None),
    ("CE_spatial_none_weight", lambda lib, x, t, w: lib.nn.CrossEntropyLoss(weight=w, reduction="none")(x, t),
     (randn(2, 3, 5), R.integers(0, 3, (2, 5)), rand(3)), None, None),
    ("CE_unbatched", lambda lib, x, t: lib.nn.functional.cross_entropy(x, t), (randn(3), L(2)), None, None),
    ("NLLLoss", lambda lib, x, t: lib.nn.NLLLoss()(x, t), (randn(4, 3), T4), None, "NllLossBackward0"),
    ("NLLLoss_weight_none", lambda lib, x, t, w: lib.nn.NLLLoss(weight=w, reduction="none", ignore_index=0)(x, t),
     (randn(4, 3), T4, rand(3)), None, None),
    ("NLLLoss_weight_mean", lambda lib, x, t, w: lib.nn.NLLLoss(weight=w)(x, t), (randn(4, 3), T4, rand(3)), None, None),
    ("BCELoss", lambda lib, x, y: lib.nn.BCELoss()(x, y), (rand(4, 3), rand(4, 3)), None, "BinaryCrossEntropyBackward0"),
    ("BCELoss_weight_sum", lambda lib, x, y, w: lib.nn.BCELoss(weight=w, reduction="sum")(x, y),
     (rand(4, 3), rand(4, 3), rand(3)), None, None),
    ("BCELoss_none", lambda lib, x, y: lib.nn.BCELoss(reduction="none")(x, y), (rand(4, 3), rand(4, 3)), None, None),
    ("BCEWithLogitsLoss", lambda lib, x, y: lib.nn.BCEWithLogitsLoss()(x, y), (randn(4, 3) * 5, rand(4, 3)), None,
     "BinaryCrossEntropyWithLogitsBackward0"),
    ("BCEWithLogits_pos_weight", lambda lib, x, y, w, p: lib.nn.BCEWithLogitsLoss(weight=w, pos_weight=p)(x, y),
     (randn(4, 3) * 5, rand(4, 3), rand(3), rand(3) * 3), None, None),
    ("BCEWithLogits_none", lambda lib, x, y, p: lib.nn.BCEWithLogitsLoss(reduction="none", pos_weight=p)(x, y),
     (randn(4, 3), rand(4, 3), rand(3) * 3), None, None),
    ("KLDivLoss_batchmean", lambda lib, x, y: lib.nn.KLDivLoss(reduction="batchmean")(x, y),
     (np.log(probs(4, 3)), probs(4, 3)), None, "DivBackward0"),
    ("KLDivLoss_mean", lambda lib, x, y: lib.nn.KLDivLoss()(x, y), (np.log(probs(4, 3)), probs(4, 3)), None,
     "MeanBackward0"),
    ("KLDivLoss_sum_zero_target", lambda lib, x, y: lib.nn.KLDivLoss(reduction="sum")(x, y),
     (np.log(probs(4, 3)), L([[0.0, 0.5, 0.5]] * 4)), None, None),
    ("KLDivLoss_log_target", lambda lib, x, y: lib.nn.KLDivLoss(reduction="none", log_target=True)(x, y),
     (np.log(probs(4, 3)), np.log(probs(4, 3))), None, None),
]


@pytest.mark.parametrize("call,arrays,mask,name", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_loss_parity_float64(call, arrays, mask, name):
    check_loss(call, arrays, mask, name=name)


@pytest.mark.parametrize("call,arrays,mask,name", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_loss_parity_float32(call, arrays, mask, name):
    check_loss(call, arrays, mask, dtype="float32")


@pytest.mark.parametrize("call,arrays,mask,name", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_loss_gradcheck(call, arrays, mask, name):
    """Central differences (float64) for the input that requires grad; no torch needed."""
    mask = mask or [True] + [False] * (len(arrays) - 1)
    xs = _args(et, arrays, "float64", mask)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = call(et, *xs)
        cot = R.standard_normal(tuple(out.shape))
        (out * et.tensor(cot)).sum().backward()
        for x, g in zip(xs, mask):
            if not g:
                continue
            num = np.zeros(x.shape)
            flat = x.detach().numpy().reshape(-1)
            for i in range(flat.size):
                old = flat[i]
                flat[i] = old + 1e-6
                hi = float((call(et, *xs).data * cot).sum())
                flat[i] = old - 1e-6
                lo = float((call(et, *xs).data * cot).sum())
                flat[i] = old
                num.reshape(-1)[i] = (hi - lo) / 2e-6
            np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-5, atol=1e-6)


def test_loss_reprs_and_buffers(parity):
    def scenario(lib):
        w = lib.tensor([1.0, 2.0])
        mods = [lib.nn.MSELoss(), lib.nn.CrossEntropyLoss(weight=w, label_smoothing=0.1),
                lib.nn.BCEWithLogitsLoss(pos_weight=w), lib.nn.KLDivLoss(reduction="batchmean"),
                lib.nn.HuberLoss(delta=2.0), lib.nn.NLLLoss()]
        return [(repr(m), list(m.state_dict()), getattr(m, "reduction", None)) for m in mods]

    parity(scenario)


def _error(lib, fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(lib)
    except Exception as exc:  # the type and message are what we compare
        return type(exc).__name__, str(exc)
    return None


ERRORS = [
    ("ce_batch", lambda lib: lib.nn.CrossEntropyLoss()(lib.randn(4, 3), lib.tensor([0, 1, 2]))),
    ("ce_target_oob", lambda lib: lib.nn.CrossEntropyLoss()(lib.randn(4, 3), lib.tensor([0, 1, 2, 5]))),
    ("ce_target_negative", lambda lib: lib.nn.CrossEntropyLoss()(lib.randn(4, 3), lib.tensor([0, 1, 2, -2]))),
    ("ce_float_target_wrong_shape", lambda lib: lib.nn.CrossEntropyLoss()(lib.randn(4, 3), lib.randn(4, 2))),
    ("ce_spatial_target", lambda lib: lib.nn.CrossEntropyLoss()(lib.randn(4, 3, 5), lib.tensor([0, 1, 2, 1]))),
    ("ce_2d_target", lambda lib: lib.nn.CrossEntropyLoss()(lib.randn(4, 3), lib.zeros(4, 2, dtype=lib.long))),
    ("ce_int32_target", lambda lib: lib.nn.CrossEntropyLoss()(lib.randn(4, 3), lib.zeros(4, dtype=lib.int32))),
    ("nll_size_mismatch", lambda lib: lib.nn.NLLLoss()(lib.randn(4, 3, 2, 2), lib.zeros(4, 2, 3, dtype=lib.long))),
    ("mse_broadcast_error", lambda lib: lib.nn.MSELoss()(lib.randn(4, 3), lib.randn(4, 2))),
    ("bce_size", lambda lib: lib.nn.BCELoss()(lib.rand(4), lib.rand(3))),
    ("bce_range", lambda lib: lib.nn.BCELoss()(lib.rand(4) + 1.5, lib.rand(4))),
    ("bce_logits_size", lambda lib: lib.nn.BCEWithLogitsLoss()(lib.rand(4), lib.rand(3))),
    ("bad_reduction", lambda lib: lib.nn.MSELoss(reduction="foo")(lib.rand(4), lib.rand(4))),
    ("smooth_l1_negative_beta", lambda lib: lib.nn.SmoothL1Loss(beta=-1.0)(lib.rand(4), lib.rand(4))),
]


@pytest.mark.parametrize("fn", [c[1] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_loss_error_parity(fn):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    ours, theirs = _error(et, fn), _error(torch, fn)
    assert theirs is not None
    assert ours == theirs


def test_mse_warns_on_broadcast_like_pytorch():
    with pytest.warns(UserWarning, match="Using a target size"):
        enn.MSELoss()(et.randn(4, 3), et.randn(3))


def test_kl_div_mean_warns():
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        enn.KLDivLoss()(et.randn(2, 3), et.rand(2, 3))


def test_cross_entropy_trains_a_classifier_to_zero_loss():
    """A behaviour check without torch: CE + autograd can separate three points."""
    et.manual_seed(0)
    x = et.randn(3, 4)
    t = et.tensor([0, 1, 2])
    w = et.zeros(4, 3, requires_grad=True)
    for _ in range(200):
        loss = enn.functional.cross_entropy(x @ w, t)
        w.grad = None
        loss.backward()
        with et.no_grad():
            w.sub_(w.grad * 1.0)
    assert loss.item() < 0.05


@pytest.mark.parametrize("loss", ["mse", "smooth_l1", "huber", "bce", "bce_logits", "ce", "nll", "kl"])
def test_loss_second_derivative_parity(loss):
    """Hessian-vector products of each loss (create_graph=True) agree with torch."""
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x_np, v_np, y_np, p_np = rand(4, 3), randn(4, 3), rand(4, 3), probs(4, 3)
    calls = {
        "mse": lambda F, x, lib: F.mse_loss(x * 3, lib.tensor(y_np)),
        "smooth_l1": lambda F, x, lib: F.smooth_l1_loss(x * 3, lib.tensor(y_np), beta=0.5),
        "huber": lambda F, x, lib: F.huber_loss(x * 3, lib.tensor(y_np), delta=0.5),
        "bce": lambda F, x, lib: F.binary_cross_entropy(x, lib.tensor(y_np)),
        "bce_logits": lambda F, x, lib: F.binary_cross_entropy_with_logits(x * 3, lib.tensor(y_np),
                                                                            pos_weight=lib.tensor([1.0, 2.0, 0.5])),
        "ce": lambda F, x, lib: F.cross_entropy(x * 3, lib.tensor(T4), label_smoothing=0.1),
        "nll": lambda F, x, lib: F.nll_loss(F.log_softmax(x * 3, 1), lib.tensor(T4)),
        "kl": lambda F, x, lib: F.kl_div(F.log_softmax(x * 3, 1), lib.tensor(p_np), reduction="batchmean"),
    }

    def hvp(lib):
        x = lib.tensor(x_np, requires_grad=True)
        (g,) = lib.autograd.grad(calls[loss](lib.nn.functional, x, lib), x, create_graph=True)
        (g * lib.tensor(v_np)).sum().backward()
        return x.grad.numpy()

    np.testing.assert_allclose(hvp(et), hvp(torch), rtol=1e-8, atol=1e-10)
