"""clip_grad_norm_/clip_grad_value_ and parameters_to_vector/vector_to_parameters vs PyTorch."""
import math
import warnings

import numpy as np
import pytest

import edutorch as et
from edutorch.nn.utils import clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters


@pytest.fixture
def torch():
    """Real PyTorch, the oracle; tests that use it skip when it is not installed."""
    return pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")


def _pairs(torch, scale, dtype=np.float32, nan=False):
    rng = np.random.default_rng(1)
    shapes = [(3, 4), (4,), (2, 2, 2)]
    ours, theirs = [], []
    for shape in shapes:
        w = rng.standard_normal(shape).astype(dtype)
        g = (rng.standard_normal(shape) * scale).astype(dtype)
        if nan:
            g.flat[0] = np.nan
        p = et.tensor(w, requires_grad=True)
        p.grad = et.tensor(g)
        tp = torch.tensor(w, requires_grad=True)
        tp.grad = torch.tensor(g)
        ours.append(p)
        theirs.append(tp)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf", 0])
@pytest.mark.parametrize("scale,max_norm", [(10.0, 1.0), (0.01, 5.0)])
def test_clip_grad_norm_matches_torch(norm_type, scale, max_norm, torch):
    nt = float(norm_type)
    ours, theirs = _pairs(torch, scale)
    total = clip_grad_norm_(ours, max_norm, norm_type=nt)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=nt, foreach=False)
    assert total.shape == ttotal.shape == ()
    assert total.dtype == et.float32
    np.testing.assert_allclose(total.item(), ttotal.item(), rtol=1e-6)
    for p, tp in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_clip_grad_norm_single_tensor_and_no_grads():
    p = et.tensor([3.0, 4.0], requires_grad=True)
    p.grad = et.tensor([3.0, 4.0])
    assert clip_grad_norm_(p, 1.0).item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), np.array([3, 4]) / (5 + 1e-6), rtol=1e-6)
    q = et.zeros(2, requires_grad=True)
    assert repr(clip_grad_norm_([q], 1.0)) == "tensor(0.)"  # no gradients at all: PyTorch's tensor(0.)


def test_nonfinite_norm_error_matches_torch(torch):
    ours, theirs = _pairs(torch, 1.0, nan=True)
    with pytest.raises(RuntimeError) as theirs_err:
        torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as ours_err:
        clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
    assert str(ours_err.value) == str(theirs_err.value)
    assert math.isnan(clip_grad_norm_(ours, 1.0).item())  # default: no error, NaN norm returned


def test_an_infinite_norm_scales_silently_to_nan_and_zero():
    """error_if_nonfinite=False: coefficient max_norm / inf = 0, so inf * 0 = nan, 1 * 0 = 0,
    as in PyTorch, with no NumPy RuntimeWarning."""
    p = et.tensor([1.0, 2.0], requires_grad=True)
    p.grad = et.tensor([math.inf, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isinf(clip_grad_norm_([p], 1.0).item())
    assert math.isnan(p.grad[0].item()) and p.grad[1].item() == 0.0


def test_clip_grad_value_matches_torch(torch):
    ours, theirs = _pairs(torch, 3.0)
    assert clip_grad_value_(ours, 0.5) is None
    torch.nn.utils.clip_grad_value_(theirs, 0.5, foreach=False)
    for p, tp in zip(ours, theirs):
        np.testing.assert_array_equal(p.grad.numpy(), tp.grad.numpy())
        assert np.abs(p.grad.numpy()).max() <= 0.5


def test_parameters_to_vector_and_back(torch):
    ours, theirs = _pairs(torch, 1.0, dtype=np.float64)
    vec = parameters_to_vector(ours)
    tvec = torch.nn.utils.parameters_to_vector(theirs)
    np.testing.assert_array_equal(vec.detach().numpy(), tvec.detach().numpy())
    assert type(vec.grad_fn).__name__ == type(tvec.grad_fn).__name__ == "CatBackward0"
    new = et.arange(vec.numel(), dtype=et.float64)
    vector_to_parameters(new, ours)
    torch.nn.utils.vector_to_parameters(torch.arange(tvec.numel(), dtype=torch.float64), theirs)
    for p, tp in zip(ours, theirs):
        assert tuple(p.shape) == tuple(tp.shape)
        np.testing.assert_array_equal(p.detach().numpy(), tp.detach().numpy())


def test_parameters_to_vector_is_differentiable():
    w = et.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = et.tensor([5.0], requires_grad=True)
    (parameters_to_vector([w, b]) * et.tensor([1.0, 2.0, 3.0, 4.0, 5.0])).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(b.grad.numpy(), [5])


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


def test_bad_input_errors_match_torch(torch):
    p, tp = et.zeros(3, requires_grad=True), torch.zeros(3, requires_grad=True)
    assert _error(lambda: vector_to_parameters([1.0, 2.0], [p])) == \
        _error(lambda: torch.nn.utils.vector_to_parameters([1.0, 2.0], [tp]))
    assert _error(lambda: vector_to_parameters(et.zeros(2), [p])) == \
        _error(lambda: torch.nn.utils.vector_to_parameters(torch.zeros(2), [tp]))
    assert _error(lambda: parameters_to_vector([p, 1.0])) == \
        _error(lambda: torch.nn.utils.parameters_to_vector([tp, 1.0]))
    assert _error(lambda: parameters_to_vector([])) == _error(lambda: torch.nn.utils.parameters_to_vector([]))


def test_parameters_to_vector_gradcheck():
    from edutorch.autograd import gradcheck

    w = et.tensor(np.random.default_rng(0).standard_normal((2, 3)), requires_grad=True)
    b = et.tensor(np.random.default_rng(1).standard_normal(3), requires_grad=True)
    assert gradcheck(lambda w, b: parameters_to_vector([w, b]) * 1.5, (w, b))


def test_get_total_norm_and_clip_grads_with_norm_match_torch(torch):
    ours, theirs = _pairs(torch, 4.0)
    norm = et.nn.utils.get_total_norm([p.grad for p in ours], 3.0)
    tnorm = torch.nn.utils.get_total_norm([p.grad for p in theirs], 3.0, foreach=False)
    np.testing.assert_allclose(norm.item(), tnorm.item(), rtol=1e-6)
    et.nn.utils.clip_grads_with_norm_(ours, 2.0, norm)
    torch.nn.utils.clip_grads_with_norm_(theirs, 2.0, tnorm, foreach=False)
    for p, tp in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-6, atol=1e-7)
