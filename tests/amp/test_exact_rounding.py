"""Bit-exact bfloat16 numbers under CPU autocast, as PyTorch 2.13 gives them.

``nn.Linear`` with a bias runs as PyTorch's ``addmm``: the product and the bias
are added in float32 and rounded to bfloat16 ONCE (the bias cast to bfloat16 first,
like every input of the op); rounding the product first and adding the bias in
bfloat16 would differ in about a quarter of the outputs.  ``softmax`` keeps its input's dtype on the CPU, and PyTorch's kernel
computes a bfloat16 softmax in float32, rounded once.  Inputs are rounded to
bfloat16 first, so the only freedom left is the order of a float32 sum of at
most a few hundred terms: the checks use sizes where that order cannot move a
bfloat16 result (the products are exact in float32).
"""
import numpy as np
import pytest

import edutorch

SHAPES = [(16, 16, 16), (8, 32, 4), (5, 7, 3), (64, 128, 32), (3, 300, 2)]


def _arrays(seed, n, i, o):
    rng = np.random.default_rng(seed)
    x, w, b = rng.standard_normal((n, i)), rng.standard_normal((o, i)) / np.sqrt(i), rng.standard_normal(o)
    return [a.astype(np.float32) for a in (x, w, b)]


def _linear(lib, x, w, b, leading=()):
    """``nn.Linear``'s functional form under ``autocast("cpu")``, with its gradients."""
    weight, bias = lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True) if b is not None else None
    inp = lib.tensor(x.reshape(*leading, -1, x.shape[-1]) if leading else x)
    with lib.autocast("cpu"):
        y = lib.nn.functional.linear(inp, weight, bias)
    return y


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("n,i,o", SHAPES)
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_under_bfloat16_autocast_is_bit_exact(real_torch, seed, n, i, o, with_bias):
    x, w, b = _arrays(seed, n, i, o)
    b = b if with_bias else None
    got, expected = _linear(edutorch, x, w, b), _linear(real_torch, x, w, b)
    assert str(got.dtype) == str(expected.dtype) == "torch.bfloat16"
    np.testing.assert_array_equal(got.detach().float().numpy(), expected.detach().float().numpy())


@pytest.mark.parametrize("leading", [(2,), (2, 1)])
def test_linear_on_batched_and_vector_inputs_is_bit_exact(real_torch, leading):
    x, w, b = _arrays(3, 6, 24, 5)
    got, expected = _linear(edutorch, x, w, b, leading), _linear(real_torch, x, w, b, leading)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.detach().float().numpy(), expected.detach().float().numpy())
    with edutorch.autocast("cpu"):
        got = edutorch.nn.functional.linear(edutorch.tensor(x[0]), edutorch.tensor(w), edutorch.tensor(b))
    with real_torch.autocast("cpu"):
        expected = real_torch.nn.functional.linear(real_torch.tensor(x[0]), real_torch.tensor(w),
                                                   real_torch.tensor(b))
    assert got.shape == expected.shape == (5,)
    np.testing.assert_array_equal(got.float().numpy(), expected.float().numpy())


def test_bias_is_added_in_float32_and_rounded_once():
    """The rule, without torch: every input is cast to bfloat16 (the bias too), then
    round(x @ w.T + b) is computed in float32 and rounded once, not round(round(x @ w.T) + b)."""
    x, w, b = _arrays(0, 16, 16, 16)
    with edutorch.autocast("cpu"):
        y = edutorch.nn.functional.linear(edutorch.tensor(x), edutorch.tensor(w), edutorch.tensor(b))
    bf = edutorch.bfloat16
    xb, wb, bb = (edutorch.tensor(a).to(bf).float().numpy() for a in (x, w, b))
    once = edutorch.tensor(xb @ wb.T + bb).to(bf).float().numpy()
    twice = (edutorch.tensor(xb @ wb.T).to(bf) + edutorch.tensor(bb).to(bf)).float().numpy()
    np.testing.assert_array_equal(y.float().numpy(), once)
    assert (once != twice).sum() > 0  # the two roundings do differ here: the check can fail


def test_nll_loss_with_spatial_target_under_autocast_matches_torch(real_torch):
    """``nll_loss`` is on the CPU float32 list: an (N, C, d) bfloat16 input with an (N, d) target
    gives float32 values of PyTorch's shape for every reduction (and with ignore_index)."""
    rng = np.random.default_rng(4)
    x, w, b = _arrays(5, 20, 7, 3)
    target = rng.integers(0, 3, (4, 5))
    for reduction in ("mean", "sum", "none"):
        for ignore in (-100, 1):
            outs = []
            for lib in (edutorch, real_torch):
                with lib.autocast("cpu"):
                    y = lib.nn.functional.linear(lib.tensor(x), lib.tensor(w), lib.tensor(b))
                    scores = y.reshape(4, 5, 3).transpose(1, 2)
                    outs.append(lib.nn.functional.nll_loss(scores, lib.tensor(target), reduction=reduction,
                                                           ignore_index=ignore))
            got, expected = outs
            assert str(got.dtype) == str(expected.dtype) == "torch.float32"
            assert got.shape == expected.shape
            np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision_softmax_is_float32_rounded_once(real_torch, dtype):
    """softmax along the last dimension of a bfloat16/float16 tensor: float32 inside, one rounding."""
    x = (np.random.default_rng(6).standard_normal((64, 16)) * 4).astype(np.float32)
    got = edutorch.softmax(edutorch.tensor(x).to(getattr(edutorch, dtype)), -1)
    expected = real_torch.softmax(real_torch.tensor(x).to(getattr(real_torch, dtype)), -1)
    assert str(got.dtype) == str(expected.dtype)
    np.testing.assert_array_equal(got.float().numpy(), expected.float().numpy())
    wide = edutorch.softmax(edutorch.tensor(x).to(getattr(edutorch, dtype)).float(), -1)
    np.testing.assert_array_equal(got.float().numpy(), wide.to(getattr(edutorch, dtype)).float().numpy())
