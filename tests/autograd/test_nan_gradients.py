"""NaN and inf inputs: the values and gradients PyTorch gives.

PyTorch's kernels decide with comparisons (``x <= 0 ? 0 : grad``), and a
comparison with NaN is False; NumPy formulas written as "multiply by a mask"
turn ``NaN * 0`` or ``inf * 0`` into NaN instead.  A NaN appearing in training
is exactly when a student needs the gradients to be PyTorch's, so each op
that picks or masks is checked here on inputs full of NaN and inf.
"""
import numpy as np
import pytest

import edutorch as et

NAN, INF = float("nan"), float("inf")
X = np.array([[1.0, NAN, 3.0, NAN], [2.0, 5.0, 5.0, 0.0], [NAN, 1.0, 1.0, -INF]])
Y = np.array([[1.0, 2.0, NAN, NAN], [2.0, 1.0, 6.0, 0.0], [0.0, 1.0, NAN, INF]])


def F(lib):
    return lib.nn.functional


OPS = {
    "relu": lambda lib, x, y: lib.relu(x),
    "elu": lambda lib, x, y: F(lib).elu(x),
    "abs": lambda lib, x, y: x.abs(),
    "sign_times_x": lambda lib, x, y: x.sign() * x,
    "round_times_x": lambda lib, x, y: x.round() * x,
    "maximum": lambda lib, x, y: lib.maximum(x, y),
    "minimum": lambda lib, x, y: lib.minimum(x, y),
    "max_all": lambda lib, x, y: x.max(),
    "min_all": lambda lib, x, y: x.min(),
    "clamp_tensor_min": lambda lib, x, y: x.clamp(min=y),
    "clamp_tensor_max": lambda lib, x, y: x.clamp(max=y),
    "clamp_tensor_both": lambda lib, x, y: x.clamp(min=y, max=y * 2 + 1),
    "clamp_numbers": lambda lib, x, y: x.clamp(0, 2),
    "l1_loss": lambda lib, x, y: F(lib).l1_loss(x, y),
    "smooth_l1_loss": lambda lib, x, y: F(lib).smooth_l1_loss(x, y, beta=0.5, reduction="sum"),
    "huber_loss": lambda lib, x, y: F(lib).huber_loss(x, y, delta=2.0),
}


def _run(lib, name):
    x = lib.tensor(X.copy(), requires_grad=True)
    y = lib.tensor(Y.copy(), requires_grad=True)
    OPS[name](lib, x, y).sum().backward()
    return x, y


# Ops whose torch gradient at a NaN input depends on the CPU: torch's vectorised
# ELU backward takes the "x <= 0" branch for NaN lanes (NaN gradient) while its
# scalar loop takes "x > 0" (gradient passes), and which lanes go through which
# loop depends on the machine's vector width (NaN on an AMD AVX2 machine, 1 on an
# Intel AVX-512 one).  torch is compared on the other entries only; the NaN
# entries are checked against the kernel's scalar rule below.
NAN_GRADIENT_LEFT_TO_THE_CPU = {"elu"}


@pytest.mark.parametrize("name", sorted(OPS))
def test_matches_torch_on_nan_and_inf(name):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    (x, y), (tx, ty) = _run(et, name), _run(torch, name)
    defined = ~np.isnan(X) if name in NAN_GRADIENT_LEFT_TO_THE_CPU else np.ones(X.shape, bool)
    np.testing.assert_allclose(x.grad.numpy()[defined], tx.grad.numpy()[defined], equal_nan=True)
    if ty.grad is None:
        assert y.grad is None
    else:
        np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), equal_nan=True)


def test_elu_passes_the_gradient_of_a_nan_like_torchs_scalar_kernel():
    """elu_backward is ``x <= 0 ? grad * alpha * exp(x) : grad``: NaN <= 0 is False."""
    x = et.tensor([NAN, -1.0, 2.0, -INF], requires_grad=True)
    et.nn.functional.elu(x).backward(et.ones(4))
    np.testing.assert_allclose(x.grad.numpy(), [1.0, np.exp(-1.0), 1.0, 0.0])


def test_sign_of_nan_is_zero():
    assert et.tensor([NAN, -2.0, 0.0, 3.0]).sign().tolist() == [0.0, -1.0, 0.0, 1.0]


def test_relu_passes_the_gradient_of_a_nan_and_blocks_an_infinite_one():
    x = et.tensor([NAN, -1.0, 2.0], requires_grad=True)
    et.relu(x).backward(et.tensor([1.0, INF, 1.0]))
    assert x.grad.tolist() == [1.0, 0.0, 1.0]


def test_maximum_with_a_nan_gives_both_inputs_the_gradient():
    a = et.tensor([NAN, 1.0, 2.0], requires_grad=True)
    b = et.tensor([0.0, 1.0, NAN], requires_grad=True)
    et.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 0.5, 1.0] and b.grad.tolist() == [1.0, 0.5, 1.0]


def test_max_of_a_tensor_with_nans_shares_the_gradient_among_the_nans():
    x = et.tensor([1.0, NAN, 3.0, NAN], requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.0, 0.5]


# -- every op of the table, on inputs holding a NaN and an inf ------------------------
def _with_nan_and_inf(op_case, seed=0):
    from op_cases import sample

    rng = np.random.default_rng(seed)
    arrays = [sample(shape, op_case.domain, rng) for shape in op_case.shapes]
    for a in arrays:
        if a.size >= 3:
            flat = a.reshape(-1)
            flat[0], flat[-1] = NAN, INF
    return arrays


def _values_and_grads(lib, op_case, arrays):
    from op_cases import total

    tensors = [lib.tensor(a.copy(), requires_grad=op_case.grad) for a in arrays]
    out = op_case.fn(lib, *tensors)
    outs = out if isinstance(out, tuple) else (out,)
    values = [None if o is None else o.detach().numpy() for o in outs]
    grads = None
    if op_case.grad:
        loss = total(outs, [None if o is None else lib.ones_like(o) for o in outs])
        if loss is not None and loss.requires_grad:
            grads = [None if g is None else g.numpy() for g in lib.autograd.grad(loss, tensors, allow_unused=True)]
    return values, grads


def _same(mine, theirs):
    if mine is None or theirs is None:
        return mine is None and theirs is None
    if mine.dtype == bool or theirs.dtype == bool:
        return np.array_equal(mine, theirs)
    return mine.shape == theirs.shape and np.allclose(mine, theirs, rtol=1e-6, atol=1e-9, equal_nan=True)


def test_every_op_matches_torch_on_nan_and_inf(op_case):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    arrays = _with_nan_and_inf(op_case)
    with np.errstate(all="ignore"):
        (v1, g1), (v2, g2) = _values_and_grads(et, op_case, arrays), _values_and_grads(torch, op_case, arrays)
    assert all(_same(a, b) for a, b in zip(v1, v2)), "values differ"
    assert (g1 is None) == (g2 is None)
    if g1 is not None:
        assert all(_same(a, b) for a, b in zip(g1, g2)), "gradients differ"


def test_relu_blocked_gradient_is_positive_zero_like_torch():
    """``y <= 0 ? 0 : grad`` selects: a negative upstream gradient does not leave a -0.0 behind."""
    x = et.tensor([-1.0, 2.0, -3.0], requires_grad=True)
    et.relu(x).backward(et.tensor([-5.0, 1.0, -INF]))
    assert x.grad.tolist() == [0.0, 1.0, 0.0]
    assert not np.signbit(x.grad.numpy()).any()
    assert str(x.grad) == "tensor([0., 1., 0.])"
