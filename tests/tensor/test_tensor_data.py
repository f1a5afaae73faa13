"""``Tensor.data``: a Tensor over the same storage, outside autograd, as in PyTorch."""
import numpy as np
import pytest

import edutorch as et

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def test_data_is_a_tensor_sharing_storage_without_grad():
    x = et.ones(3, requires_grad=True)
    d = x.data
    assert type(d) is et.Tensor and d is not x
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert np.shares_memory(d.numpy(), x.detach().numpy())
    d[0] = 5.0
    assert x.tolist() == [5.0, 1.0, 1.0]


def test_parameter_data_is_a_plain_tensor():
    p = et.nn.Parameter(et.ones(2))
    assert type(p.data) is et.Tensor


def test_in_place_through_data_is_invisible_to_autograd():
    """``.data`` has its own version counter; ``detach()`` shares ``x``'s."""
    x = et.ones(3, requires_grad=True)
    y = (x * x).sum()  # saves x
    a = x.data
    a.mul_(2)
    assert a._version == 1 and x._version == 0
    y.backward()  # no error: autograd did not see the change, and uses the new values
    assert x.grad.tolist() == [4.0, 4.0, 4.0]

    x = et.ones(3, requires_grad=True)
    y = (x * x).sum()
    x.detach().mul_(2)
    assert x._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_data_setter_swaps_storage():
    x = et.ones(3, requires_grad=True)
    new = et.zeros(2, dtype=et.float64)
    x.data = new
    assert x.dtype == et.float64 and tuple(x.shape) == (2,) and x.requires_grad
    assert x.numpy(force=True) is new.numpy()
    w = et.ones(2)
    w.data = et.arange(3)  # shape and dtype may change when no gradient is required
    assert w.tolist() == [0, 1, 2] and w.dtype == et.int64


@pytest.mark.parametrize("value", [[1.0, 2.0], 3, np.ones(2), et.nn.Linear(1, 1)])
def test_data_setter_rejects_non_tensors_like_torch(value):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    with pytest.raises(TypeError) as theirs:
        torch.ones(2).data = value
    with pytest.raises(TypeError) as mine:
        et.ones(2).data = value
    assert str(mine.value) == str(theirs.value)


def test_data_setter_integer_on_requires_grad_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2, requires_grad=True).data = torch.zeros(2, dtype=torch.int64)
    with pytest.raises(RuntimeError) as mine:
        et.ones(2, requires_grad=True).data = et.zeros(2, dtype=et.int64)
    assert str(mine.value) == str(theirs.value)


def _snippets(lib):
    """Idioms from PyTorch's notes and tutorials that use ``.data``."""
    lib.manual_seed(0)
    lin = lib.nn.Linear(4, 3)
    w0 = lin.weight.detach().numpy().copy()
    fixed = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    lin.weight.data.uniform_(-0.1, 0.1)  # "Extending torch.autograd"
    in_range = bool((lin.weight.abs() <= 0.1).all())
    changed = not np.array_equal(lin.weight.detach().numpy(), w0)
    lin.weight.data.copy_(lib.tensor(fixed))
    norm = lin.weight.data.norm().item()
    lin.bias.data.add_(lib.ones(3), alpha=0.5)
    absw = lin.weight.data.abs().numpy()
    X = lib.tensor(np.arange(8.0, dtype=np.float32).reshape(2, 4))
    prod = lib.matmul(X, lin.weight.data.t()).numpy()
    return in_range, changed, norm, lin.bias.detach().numpy(), absw, prod, lin.weight.data.requires_grad


def test_data_idioms_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    mine, theirs = _snippets(et), _snippets(torch)
    assert mine[:2] == (True, True) and theirs[:2] == (True, True)
    np.testing.assert_allclose(mine[2], theirs[2], rtol=1e-6)
    # the biases start from different random streams: compare the added half
    for a, b in zip(mine[4:6], theirs[4:6]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert mine[6] is theirs[6] is False


def test_data_version_counters_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for lib in (et, torch):
        x = lib.ones(3)
        x.add_(1)
        x.add_(1)
        d = x.data
        d.add_(1)
        assert (x._version, d._version) == (2, 1), lib
