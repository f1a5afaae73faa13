"""nn layers against real PyTorch: same weights in, same outputs, gradients, buffers, repr, keys.

``check_module(make, inputs)`` builds the layer with both libraries
(``make(nn)``), copies edutorch's state_dict into the torch layer (so the key
names and order must match), runs both on identical inputs, then
backpropagates the same random cotangent and compares every input and
parameter gradient (float64 tight, float32 loose).  Float64 central-difference
gradient checks need no torch.
"""
import numpy as np
import pytest

import edutorch as et
import edutorch.nn as enn

TORCH_REASON = "real PyTorch not installed: parity test skipped"
R = np.random.default_rng(0)


def randn(*shape):
    return R.standard_normal(shape)


def _flat(out):
    """Outputs as a flat list of tensors (RNNs return (output, h) or (output, (h, c)))."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _tensors(lib, arrays, dtype):
    result = []
    for a in arrays:
        if a.dtype.kind == "f":
            result.append(lib.tensor(a.astype(dtype), requires_grad=True))
        else:
            result.append(lib.tensor(a))
    return result


def check_module(make, arrays, dtype="float64", train=True, tol=None):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    tol = tol or (dict(rtol=1e-9, atol=1e-11) if dtype == "float64" else dict(rtol=2e-4, atol=2e-5))
    et.manual_seed(0)
    m_e, m_t = make(enn), make(torch.nn)
    if dtype == "float64":
        m_e, m_t = m_e.double(), m_t.double()
    assert repr(m_e) == repr(m_t)
    sd = m_e.state_dict()
    assert list(sd) == list(m_t.state_dict())
    m_t.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in sd.items()})
    m_e.train(train)
    m_t.train(train)
    x_e, x_t = _tensors(et, arrays, dtype), _tensors(torch, arrays, dtype)
    out_e, out_t = _flat(m_e(*x_e)), _flat(m_t(*x_t))
    assert len(out_e) == len(out_t)
    loss_e = loss_t = 0
    for e, t in zip(out_e, out_t):
        assert tuple(e.shape) == tuple(t.shape)
        assert repr(e.dtype) == repr(t.dtype)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **tol)
        if t.requires_grad:
            cot = R.standard_normal(tuple(t.shape)).astype(dtype)
            loss_e = loss_e + (e * et.tensor(cot)).sum()
            loss_t = loss_t + (t * torch.tensor(cot)).sum()
    if not isinstance(loss_t, int):
        loss_e.backward()
        loss_t.backward()
    for e, t in zip(x_e, x_t):
        if t.requires_grad:
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), **tol)
    grads_t = dict(m_t.named_parameters())
    for name, p in m_e.named_parameters():
        assert (p.grad is None) == (grads_t[name].grad is None), name
        if p.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), grads_t[name].grad.numpy(), err_msg=name, **tol)
    bufs_t = dict(m_t.named_buffers())
    for name, b in m_e.named_buffers():
        np.testing.assert_allclose(b.numpy(), bufs_t[name].numpy(), err_msg=name, **tol)
    return m_e, m_t


L = np.array  # integer inputs (indices) are written as plain arrays

LAYERS = [
    ("Linear", lambda nn: nn.Linear(3, 5), (randn(4, 3),)),
    ("Linear_nobias_3d", lambda nn: nn.Linear(3, 5, bias=False), (randn(2, 4, 3),)),
    ("Linear_1d", lambda nn: nn.Linear(3, 2), (randn(3),)),
    ("Bilinear", lambda nn: nn.Bilinear(2, 3, 4), (randn(5, 2), randn(5, 3))),
    ("Identity", lambda nn: nn.Identity(54, unused="x"), (randn(2, 3),)),
    ("Conv1d", lambda nn: nn.Conv1d(3, 4, 3, stride=2, padding=1), (randn(2, 3, 9),)),
    ("Conv1d_same", lambda nn: nn.Conv1d(2, 2, 4, padding="same", bias=False), (randn(2, 2, 7),)),
    ("Conv2d", lambda nn: nn.Conv2d(3, 4, 3), (randn(2, 3, 6, 5),)),
    ("Conv2d_same", lambda nn: nn.Conv2d(3, 4, 3, padding="same"), (randn(2, 3, 5, 5),)),
    ("Conv2d_groups", lambda nn: nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2),
                                           groups=2, bias=False), (randn(2, 4, 7, 8),)),
    ("Conv2d_reflect", lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), (randn(1, 2, 5, 4),)),
    ("Conv2d_circular", lambda nn: nn.Conv2d(2, 3, 3, padding=2, padding_mode="circular"), (randn(1, 2, 5, 4),)),
    ("Conv2d_replicate", lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="replicate"), (randn(1, 2, 5, 4),)),
    ("Conv2d_unbatched", lambda nn: nn.Conv2d(2, 3, 3, padding=1), (randn(2, 5, 4),)),
    ("MaxPool1d", lambda nn: nn.MaxPool1d(3, 2), (randn(2, 3, 9),)),
    ("MaxPool2d", lambda nn: nn.MaxPool2d(2), (randn(2, 3, 6, 4),)),
    ("MaxPool2d_pad", lambda nn: nn.MaxPool2d(3, 2, 1), (randn(2, 3, 7, 6),)),
    ("MaxPool2d_ceil", lambda nn: nn.MaxPool2d(2, ceil_mode=True), (randn(1, 2, 5, 7),)),
    ("MaxPool2d_indices", lambda nn: nn.MaxPool2d(3, 2, 1, return_indices=True), (randn(2, 2, 7, 6),)),
    ("AvgPool2d", lambda nn: nn.AvgPool2d(3, 2, 1), (randn(2, 3, 7, 6),)),
    ("AvgPool2d_exclude", lambda nn: nn.AvgPool2d(2, padding=1, count_include_pad=False), (randn(1, 2, 5, 4),)),
    ("AdaptiveAvgPool2d", lambda nn: nn.AdaptiveAvgPool2d((2, 3)), (randn(2, 3, 5, 7),)),
    ("AdaptiveAvgPool2d_1", lambda nn: nn.AdaptiveAvgPool2d(1), (randn(2, 3, 5, 7),)),
    ("BatchNorm1d_2d", lambda nn: nn.BatchNorm1d(3), (randn(4, 3),)),
    ("BatchNorm1d_3d", lambda nn: nn.BatchNorm1d(3, momentum=0.3), (randn(4, 3, 5),)),
    ("BatchNorm2d", lambda nn: nn.BatchNorm2d(3), (randn(4, 3, 2, 2),)),
    ("BatchNorm2d_cumulative", lambda nn: nn.BatchNorm2d(3, momentum=None), (randn(4, 3, 2, 2),)),
    ("BatchNorm2d_noaffine", lambda nn: nn.BatchNorm2d(3, affine=False, eps=1e-3), (randn(4, 3, 2, 2),)),
    ("BatchNorm2d_notrack", lambda nn: nn.BatchNorm2d(3, track_running_stats=False), (randn(4, 3, 2, 2),)),
    ("LayerNorm", lambda nn: nn.LayerNorm(4), (randn(3, 4),)),
    ("LayerNorm_2d_noaffine", lambda nn: nn.LayerNorm((3, 4), elementwise_affine=False), (randn(2, 3, 4),)),
    ("LayerNorm_nobias", lambda nn: nn.LayerNorm(4, bias=False), (randn(2, 3, 4),)),
    ("GroupNorm", lambda nn: nn.GroupNorm(2, 4), (randn(3, 4, 2, 3),)),
    ("GroupNorm_noaffine", lambda nn: nn.GroupNorm(4, 4, affine=False), (randn(3, 4, 5),)),
    ("GroupNorm_nobias", lambda nn: nn.GroupNorm(2, 4, bias=False), (randn(3, 4, 5),)),
    ("BatchNorm2d_nobias", lambda nn: nn.BatchNorm2d(3, bias=False), (randn(4, 3, 2, 2),)),
    ("ReLU", lambda nn: nn.ReLU(), (randn(3, 4),)),
    ("LeakyReLU", lambda nn: nn.LeakyReLU(0.2), (randn(3, 4),)),
    ("ELU", lambda nn: nn.ELU(0.5), (randn(3, 4),)),
    ("GELU", lambda nn: nn.GELU(), (randn(3, 4),)),
    ("GELU_tanh", lambda nn: nn.GELU("tanh"), (randn(3, 4),)),
    ("SiLU", lambda nn: nn.SiLU(), (randn(3, 4),)),
    ("Sigmoid", lambda nn: nn.Sigmoid(), (randn(3, 4),)),
    ("Tanh", lambda nn: nn.Tanh(), (randn(3, 4),)),
    ("Softplus", lambda nn: nn.Softplus(beta=2, threshold=1), (randn(3, 4),)),
    ("Softmax", lambda nn: nn.Softmax(dim=1), (randn(3, 4),)),
    ("LogSoftmax", lambda nn: nn.LogSoftmax(dim=-1), (randn(3, 4),)),
    ("Embedding", lambda nn: nn.Embedding(5, 3), (L([[1, 0], [4, 1]]),)),
    ("Embedding_padding", lambda nn: nn.Embedding(5, 3, padding_idx=1), (L([[1, 0], [4, 1]]),)),
    ("Embedding_freq", lambda nn: nn.Embedding(5, 3, scale_grad_by_freq=True), (L([[1, 0], [4, 1], [1, 1]]),)),
    ("Flatten", lambda nn: nn.Flatten(), (randn(2, 3, 2, 2),)),
    ("Unflatten", lambda nn: nn.Unflatten(1, (2, 3)), (randn(4, 6),)),
    ("Unflatten_infer", lambda nn: nn.Unflatten(-1, (2, -1)), (randn(4, 6),)),
    ("Dropout_eval", lambda nn: nn.Dropout(0.3), (randn(3, 4),)),
    ("RNNCell", lambda nn: nn.RNNCell(3, 4), (randn(2, 3), randn(2, 4))),
    ("RNNCell_relu_unbatched", lambda nn: nn.RNNCell(3, 4, nonlinearity="relu"), (randn(3),)),
    ("LSTMCell", lambda nn: nn.LSTMCell(3, 4), (randn(2, 3),)),
    ("GRUCell", lambda nn: nn.GRUCell(3, 4, bias=False), (randn(2, 3), randn(2, 4))),
    ("RNN", lambda nn: nn.RNN(3, 4), (randn(5, 2, 3),)),
    ("RNN_relu_2layers", lambda nn: nn.RNN(3, 4, 2, nonlinearity="relu", batch_first=True), (randn(2, 5, 3),)),
    ("RNN_h0", lambda nn: nn.RNN(3, 4, bias=False), (randn(5, 2, 3), randn(1, 2, 4))),
    ("LSTM", lambda nn: nn.LSTM(3, 4, num_layers=2), (randn(5, 2, 3),)),
    ("LSTM_bidir_batch_first", lambda nn: nn.LSTM(3, 4, batch_first=True, bidirectional=True), (randn(2, 5, 3),)),
    ("LSTM_unbatched", lambda nn: nn.LSTM(3, 4), (randn(5, 3),)),
    ("GRU", lambda nn: nn.GRU(3, 4, num_layers=2, bidirectional=True), (randn(4, 2, 3), randn(4, 2, 4))),
]
EVAL_ONLY = {"Dropout_eval"}  # random in training: tested statistically below


def _eval_only(make):
    return any(c[0] in EVAL_ONLY and c[1] is make for c in LAYERS)


@pytest.mark.parametrize("make,arrays", [c[1:] for c in LAYERS], ids=[c[0] for c in LAYERS])
def test_layer_parity_float64(make, arrays):
    check_module(make, arrays, train=False)
    if not _eval_only(make):
        check_module(make, arrays, train=True)


@pytest.mark.parametrize("make,arrays", [c[1:] for c in LAYERS], ids=[c[0] for c in LAYERS])
def test_layer_parity_float32(make, arrays):
    check_module(make, arrays, dtype="float32", train=not _eval_only(make))


def test_lstm_with_initial_state_parity():
    check_module(lambda nn: _LSTMWithState(nn), (randn(5, 2, 3), randn(2, 2, 4), randn(2, 2, 4)))


class _LSTMWithState:
    """Calls an LSTM with an explicit (h0, c0), to test that path like any other layer."""

    def __new__(cls, nn):
        class Wrap(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(3, 4, num_layers=2)

            def forward(self, x, h0, c0):
                return self.lstm(x, (h0, c0))

        return Wrap()


# -- numerical gradient checks (float64, no torch) ---------------------------------------
def _gradcheck_module(module, arrays, eps=1e-6):
    module = module.double()
    xs = [et.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    outs = _flat(module(*xs))
    cots = [R.standard_normal(tuple(o.shape)) for o in outs]

    def value():
        with et.no_grad():
            return sum(float((o.data * c).sum()) for o, c in zip(_flat(module(*xs)), cots))

    sum((o * et.tensor(c)).sum() for o, c in zip(outs, cots)).backward()
    targets = [x for x in xs if x.requires_grad] + list(module.parameters())
    for t in targets:
        num = np.zeros(t.shape)
        flat = t.detach().numpy().reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps
            hi = value()
            flat[i] = old - eps
            lo = value()
            flat[i] = old
            num.reshape(-1)[i] = (hi - lo) / (2 * eps)
        np.testing.assert_allclose(t.grad.numpy(), num, rtol=1e-5, atol=1e-6)


GRADCHECK = [
    ("Linear", lambda: enn.Linear(3, 2), (randn(4, 3),)),
    ("Bilinear", lambda: enn.Bilinear(2, 3, 2), (randn(3, 2), randn(3, 3))),
    ("Conv1d", lambda: enn.Conv1d(2, 3, 3, padding=1), (randn(2, 2, 5),)),
    ("Conv2d_groups_stride", lambda: enn.Conv2d(4, 2, 3, stride=2, padding=1, groups=2), (randn(2, 4, 5, 5),)),
    ("Conv2d_dilation_same", lambda: enn.Conv2d(2, 2, 2, padding="same", dilation=2), (randn(1, 2, 5, 4),)),
    ("MaxPool2d", lambda: enn.MaxPool2d(3, 2, 1), (randn(1, 2, 5, 5),)),
    ("AvgPool2d", lambda: enn.AvgPool2d(3, 2, 1, ceil_mode=True), (randn(1, 2, 6, 5),)),
    ("AdaptiveAvgPool2d", lambda: enn.AdaptiveAvgPool2d((2, 3)), (randn(1, 2, 5, 4),)),
    ("BatchNorm1d", lambda: enn.BatchNorm1d(3), (randn(4, 3),)),
    ("BatchNorm2d", lambda: enn.BatchNorm2d(2), (randn(3, 2, 2, 2),)),
    ("LayerNorm", lambda: enn.LayerNorm((2, 3)), (randn(2, 2, 3),)),
    ("GroupNorm", lambda: enn.GroupNorm(2, 4), (randn(2, 4, 3),)),
    ("Embedding", lambda: enn.Embedding(4, 2), (L([1, 3, 1]),)),
    ("ELU", lambda: enn.ELU(), (randn(3, 4),)),
    ("GELU", lambda: enn.GELU(), (randn(3, 4),)),
    ("SiLU", lambda: enn.SiLU(), (randn(3, 4),)),
    ("Softplus", lambda: enn.Softplus(), (randn(3, 4),)),
    ("LogSoftmax", lambda: enn.LogSoftmax(1), (randn(3, 4),)),
    ("RNN", lambda: enn.RNN(2, 3, num_layers=2), (randn(3, 2, 2),)),
    ("LSTM", lambda: enn.LSTM(2, 3, bidirectional=True), (randn(3, 2, 2),)),
    ("GRU", lambda: enn.GRU(2, 3), (randn(3, 2, 2), randn(1, 2, 3))),
]


@pytest.mark.parametrize("make,arrays", [c[1:] for c in GRADCHECK], ids=[c[0] for c in GRADCHECK])
def test_layer_gradcheck(make, arrays):
    module = make()
    if isinstance(module, enn.BatchNorm1d) or isinstance(module, enn.BatchNorm2d):
        module.track_running_stats = False  # the buffers must not drift between evaluations
        module.running_mean = module.running_var = None
    _gradcheck_module(module, arrays)
