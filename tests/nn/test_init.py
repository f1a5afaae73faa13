"""``nn.init``: distributions (moments and bounds), in-place + no history, PyTorch's gains and errors."""
import math
import warnings

import numpy as np
import pytest

import edutorch as et
import edutorch.nn as enn
from edutorch.nn import init

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def _weight(*shape):
    return enn.Parameter(et.empty(*shape, dtype=et.float64))


@pytest.mark.parametrize("nonlinearity,param", [
    ("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
    ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None), ("conv_transpose2d", None),
])
def test_calculate_gain_parity(nonlinearity, param):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    assert init.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(nonlinearity, param)


def test_init_runs_without_history_and_returns_the_tensor():
    w = _weight(50, 40)
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.xavier_normal_, init.kaiming_uniform_,
               init.kaiming_normal_, init.orthogonal_, init.trunc_normal_, init.ones_, init.zeros_, init.eye_):
        version = w._version
        assert fn(w) is w
        assert w.grad_fn is None and w.is_leaf and w.requires_grad
        assert w._version > version  # an in-place change, seen by autograd's version checks
    assert init.constant_(w, 0.3) is w and np.all(w.detach().numpy() == 0.3)


def test_uniform_and_normal_moments():
    et.manual_seed(0)
    w = _weight(200, 300)
    a = init.uniform_(w, -2.0, 3.0).detach().numpy()
    assert a.min() >= -2 and a.max() < 3 and abs(a.mean() - 0.5) < 0.02
    b = init.normal_(w, 1.0, 2.0).detach().numpy()
    assert abs(b.mean() - 1) < 0.02 and abs(b.std() - 2) < 0.02


def test_xavier_and_kaiming_scales():
    et.manual_seed(0)
    w = _weight(256, 64, 3, 3)  # fan_in = 576, fan_out = 2304
    fan_in, fan_out = 64 * 9, 256 * 9
    bound = math.sqrt(6 / (fan_in + fan_out))
    x = init.xavier_uniform_(w).detach().numpy()
    assert x.max() <= bound and x.min() >= -bound and x.max() > 0.99 * bound
    x = init.xavier_normal_(w, gain=2.0).detach().numpy()
    assert abs(x.std() - 2 * math.sqrt(2 / (fan_in + fan_out))) < 0.01 * x.std()
    x = init.kaiming_uniform_(w, a=math.sqrt(5)).detach().numpy()  # nn.Linear/Conv default: 1/sqrt(fan_in)
    assert x.max() <= 1 / math.sqrt(fan_in) and x.max() > 0.99 / math.sqrt(fan_in)
    x = init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu").detach().numpy()
    assert abs(x.std() - math.sqrt(2 / fan_out)) < 0.01 * x.std()


def test_trunc_normal_stays_in_bounds():
    et.manual_seed(0)
    x = init.trunc_normal_(_weight(100, 100), mean=0.5, std=1.0, a=-0.5, b=1.0).detach().numpy()
    assert x.min() >= -0.5 and x.max() <= 1.0 and abs(x.mean() - 0.27) < 0.02  # truncated mean ≈ 0.2739


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 3)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    w = init.orthogonal_(_weight(*shape), gain=2.0).detach().numpy().reshape(shape[0], -1)
    small = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
    np.testing.assert_allclose(small, 4 * np.eye(small.shape[0]), atol=1e-12)


def test_eye_and_dirac():
    np.testing.assert_array_equal(init.eye_(_weight(2, 3)).detach().numpy(), np.eye(2, 3))
    conv = enn.Conv2d(3, 3, 3, padding=1, bias=False).double()
    init.dirac_(conv.weight)
    x = et.randn(2, 3, 5, 5, dtype=et.float64)
    np.testing.assert_allclose(conv(x).detach().numpy(), x.numpy())


def test_default_layer_init_bounds():
    lin = enn.Linear(100, 30)
    bound = 1 / math.sqrt(100)
    for p in (lin.weight, lin.bias):
        a = p.detach().numpy()
        assert a.min() >= -bound and a.max() <= bound and a.max() > 0.8 * bound
    conv = enn.Conv2d(4, 8, 3)
    assert np.abs(conv.weight.detach().numpy()).max() <= 1 / math.sqrt(36)
    emb = enn.Embedding(1000, 20, padding_idx=3)
    assert abs(emb.weight.detach().numpy().std() - 1) < 0.05
    assert np.all(emb.weight.detach().numpy()[3] == 0)


def _error(lib, fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(lib)
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return None


ERRORS = [
    ("fan_1d", lambda lib: lib.nn.init.xavier_uniform_(lib.empty(3))),
    ("mode", lambda lib: lib.nn.init.kaiming_uniform_(lib.empty(3, 4), mode="fan_middle")),
    ("nonlinearity", lambda lib: lib.nn.init.kaiming_normal_(lib.empty(3, 4), nonlinearity="swish")),
    ("gain_param", lambda lib: lib.nn.init.calculate_gain("leaky_relu", "x")),
    ("eye_3d", lambda lib: lib.nn.init.eye_(lib.empty(2, 3, 4))),
    ("dirac_2d", lambda lib: lib.nn.init.dirac_(lib.empty(2, 3))),
    ("orthogonal_1d", lambda lib: lib.nn.init.orthogonal_(lib.empty(3))),
]


@pytest.mark.parametrize("fn", [c[1] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_init_error_parity(fn):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    theirs = _error(torch, fn)
    assert theirs is not None
    assert _error(et, fn) == theirs


def test_zero_element_warning():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(et.empty(0, 3))


@pytest.mark.parametrize("shape,sparsity", [((10, 7), 0.3), ((5, 4), 0.0), ((6, 3), 1.0), ((9, 20), 0.25)])
def test_sparse_zeros_per_column_and_std(shape, sparsity):
    """Every column has exactly ceil(sparsity * rows) zeros; the rest are N(0, std**2)."""
    et.manual_seed(0)
    w = _weight(*shape)
    assert init.sparse_(w, sparsity, std=0.5) is w and w.grad_fn is None
    values = w.detach().numpy()
    zeros_per_column = (values == 0).sum(axis=0)
    assert np.all(zeros_per_column == math.ceil(sparsity * shape[0]))
    big = init.sparse_(_weight(400, 300), 0.1, std=0.5).detach().numpy()
    assert abs(big[big != 0].std() - 0.5) < 0.01


def test_sparse_default_std_and_parity():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    import inspect

    ours = inspect.signature(init.sparse_).parameters
    theirs = inspect.signature(torch.nn.init.sparse_).parameters
    assert list(ours) == list(theirs)
    assert ours["std"].default == theirs["std"].default == 0.01
    et.manual_seed(0)
    torch.manual_seed(0)
    a = init.sparse_(_weight(300, 200), 0.2).detach().numpy()
    b = torch.nn.init.sparse_(torch.empty(300, 200, dtype=torch.float64), 0.2).numpy()
    assert np.array_equal((a == 0).sum(0), (b == 0).sum(0))  # 60 zeros in each column, both
    assert abs(a[a != 0].std() - b[b != 0].std()) < 0.001


def test_sparse_error_parity():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    assert _error(et, lambda lib: lib.nn.init.sparse_(lib.empty(3), 0.5)) == \
        _error(torch, lambda lib: lib.nn.init.sparse_(lib.empty(3), 0.5))

