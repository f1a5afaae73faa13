"""Layer behaviour beyond one forward: errors, train/eval, running stats, dropout, checkpoints."""
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import edutorch as et
import edutorch.nn as enn
import edutorch.nn.functional as EF

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def _error(lib, fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(lib)
    except Exception as exc:  # we compare the type and the message
        return type(exc).__name__, str(exc)
    return None


ERRORS = [
    ("linear_2d", lambda lib: lib.nn.Linear(4, 5)(lib.randn(2, 3))),
    ("linear_3d", lambda lib: lib.nn.Linear(4, 5)(lib.randn(7, 2, 3))),
    ("linear_1d", lambda lib: lib.nn.Linear(4, 5)(lib.randn(3))),
    ("conv2d_channels", lambda lib: lib.nn.Conv2d(1, 8, 3)(lib.randn(64, 3, 28, 28))),
    ("conv2d_2d_input", lambda lib: lib.nn.Conv2d(1, 8, 3)(lib.randn(28, 28))),
    ("conv2d_5d_input", lambda lib: lib.nn.Conv2d(1, 8, 3)(lib.randn(1, 2, 3, 8, 8))),
    ("conv1d_1d_input", lambda lib: lib.nn.Conv1d(1, 8, 3)(lib.randn(28))),
    ("conv1d_channels", lambda lib: lib.nn.Conv1d(2, 8, 3)(lib.randn(4, 3, 28))),
    ("conv2d_kernel_too_big", lambda lib: lib.nn.Conv2d(1, 8, 5)(lib.randn(1, 1, 3, 3))),
    ("conv2d_groups_in", lambda lib: lib.nn.Conv2d(4, 8, 3, groups=3)),
    ("conv2d_groups_out", lambda lib: lib.nn.Conv2d(4, 6, 3, groups=4)),
    ("conv2d_same_strided", lambda lib: lib.nn.Conv2d(4, 8, 3, padding="same", stride=2)),
    ("bn1d_4d", lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(2, 3, 4, 5))),
    ("bn2d_3d", lambda lib: lib.nn.BatchNorm2d(3)(lib.randn(2, 3, 4))),
    ("bn1d_features", lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(2, 4))),
    ("bn1d_one_value", lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(1, 3))),
    ("layernorm_shape", lambda lib: lib.nn.LayerNorm(4)(lib.randn(2, 3))),
    ("groupnorm_groups", lambda lib: lib.nn.GroupNorm(3, 4)),
    ("dropout_p", lambda lib: lib.nn.Dropout(1.5)),
    ("dropout_f_p", lambda lib: lib.nn.functional.dropout(lib.randn(2), -0.1)),
    ("dropout2d_p", lambda lib: lib.nn.Dropout2d(-1)),
    ("embedding_index", lambda lib: lib.nn.Embedding(4, 3)(lib.tensor([5]))),
    ("embedding_padding_idx", lambda lib: lib.nn.Embedding(4, 3, padding_idx=4)),
    ("embedding_float", lambda lib: lib.nn.Embedding(4, 3)(lib.tensor([1.0]))),
    ("maxpool_1d_input", lambda lib: lib.nn.MaxPool2d(2)(lib.randn(3))),
    ("maxpool_big_pad", lambda lib: lib.nn.MaxPool2d(4, padding=3)(lib.randn(1, 1, 8, 8))),
    ("maxpool_too_small", lambda lib: lib.nn.MaxPool2d(4)(lib.randn(1, 1, 2, 2))),
    ("adaptive_1d", lambda lib: lib.nn.AdaptiveAvgPool2d(2)(lib.randn(3))),
    ("one_hot_small", lambda lib: lib.nn.functional.one_hot(lib.tensor([1, 5]), 3)),
    ("one_hot_float", lambda lib: lib.nn.functional.one_hot(lib.tensor([1.0, 5.0]))),
    ("softmax_dim", lambda lib: lib.nn.functional.softmax(lib.randn(2, 3), 2)),
    ("rnn_input_size", lambda lib: lib.nn.RNN(3, 4)(lib.randn(5, 2, 2))),
    ("rnn_nonlinearity", lambda lib: lib.nn.RNN(3, 4, nonlinearity="foo")),
    ("rnn_hidden_shape", lambda lib: lib.nn.GRU(3, 4)(lib.randn(5, 2, 3), lib.randn(1, 3, 4))),
    ("rnn_cell_input", lambda lib: lib.nn.RNNCell(3, 4)(lib.randn(2, 2))),
    ("lstm_cell_input", lambda lib: lib.nn.LSTMCell(3, 4)(lib.randn(2, 5))),
    ("unflatten_sizes", lambda lib: lib.nn.Unflatten(1, (2, 2))(lib.randn(3, 5))),
    ("bilinear_batch", lambda lib: lib.nn.Bilinear(2, 3, 4)(lib.randn(5, 2), lib.randn(4, 3))),
    ("bilinear_features", lambda lib: lib.nn.Bilinear(2, 3, 4)(lib.randn(5, 3), lib.randn(5, 3))),
]


@pytest.mark.parametrize("fn", [c[1] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_error_parity(fn):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    theirs = _error(torch, fn)
    assert theirs is not None
    assert _error(et, fn) == theirs


def test_bad_padding_mode_message():
    # PyTorch prints a Python set here, whose order changes from run to run: compare the rest
    with pytest.raises(ValueError, match="padding_mode must be one of .* but got padding_mode='mirror'"):
        enn.Conv2d(4, 8, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="Invalid padding string 'foo', should be one of {'(same|valid)', '(same|valid)'}"):
        enn.Conv2d(4, 8, 3, padding="foo")


def test_grad_fn_names_of_layers(parity):
    def scenario(lib):
        x = lib.randn(4, 3, 8, 8, requires_grad=True)
        names = [type(lib.nn.Conv2d(3, 2, 3)(x).grad_fn).__name__,
                 type(lib.nn.MaxPool2d(2)(x).grad_fn).__name__,
                 type(lib.nn.BatchNorm2d(3)(x).grad_fn).__name__,
                 type(lib.nn.Linear(8, 2)(x[:, 0, 0]).grad_fn).__name__,
                 type(lib.nn.Linear(8, 2)(x).grad_fn).__name__,
                 type(lib.nn.CrossEntropyLoss()(x[:, :, 0, 0], lib.tensor([0, 1, 2, 0])).grad_fn).__name__]
        ce = lib.nn.functional.cross_entropy(x[:, :, 0, 0], lib.tensor([0, 1, 2, 0]))
        names.append([type(n).__name__ for n, _ in ce.grad_fn.next_functions])
        return names

    parity(scenario)


def test_batchnorm_running_stats_over_batches_and_modes(parity):
    def scenario(lib):
        lib.manual_seed(0)
        seen = []
        for momentum in (0.1, None):
            bn = lib.nn.BatchNorm1d(3, momentum=momentum).double()
            for k in range(3):
                x = lib.tensor(np.random.default_rng(k).standard_normal((6, 3)) * (k + 1) + k)
                bn(x)
            bn.eval()
            y = bn(lib.tensor(np.ones((2, 3))))  # eval: uses the running estimates, no update
            seen.append((np.round(bn.running_mean.numpy(), 10).tolist(), np.round(bn.running_var.numpy(), 10).tolist(),
                         int(bn.num_batches_tracked), np.round(y.detach().numpy(), 10).tolist()))
        return seen

    parity(scenario)


def test_batchnorm_eval_does_not_touch_buffers():
    bn = enn.BatchNorm2d(2)
    bn.eval()
    bn(et.randn(4, 2, 3, 3))
    assert np.all(bn.running_mean.numpy() == 0) and np.all(bn.running_var.numpy() == 1)
    assert int(bn.num_batches_tracked) == 0


def test_batchnorm_loads_old_checkpoint_without_num_batches_tracked():
    bn = enn.BatchNorm1d(3)
    sd = bn.state_dict()
    old = OrderedDict((k, v) for k, v in sd.items() if k != "num_batches_tracked")
    old._metadata = OrderedDict({"": {"version": 1}})  # written before num_batches_tracked existed
    assert repr(enn.BatchNorm1d(3).load_state_dict(old)) == "<All keys matched successfully>"
    new = OrderedDict(old)
    new._metadata = OrderedDict({"": {"version": 2}})
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "num_batches_tracked"'):
        enn.BatchNorm1d(3).load_state_dict(new)


def test_dropout_train_statistics_and_eval_identity():
    et.manual_seed(0)
    x = et.ones(200, 500)
    d = enn.Dropout(0.3)
    y = d(x).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(y[kept], 1 / 0.7)
    d.eval()
    assert d(x) is x
    assert np.all(enn.Dropout(1.0)(x).numpy() == 0)
    assert enn.Dropout(0.0)(x) is x


def test_dropout_gradient_uses_the_same_mask():
    x = et.randn(50, 40, requires_grad=True)
    y = EF.dropout(x, 0.5)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (y.detach().numpy() != 0) * 2.0)


def test_dropout2d_zeroes_whole_channels():
    et.manual_seed(1)
    y = enn.Dropout2d(0.5)(et.ones(8, 16, 3, 3)).numpy()
    per_channel = y.reshape(8, 16, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))
    assert 0.3 < (per_channel == 0).all(-1).mean() < 0.7


def test_dropout_inplace_modifies_input():
    x = et.ones(10, 10)
    out = EF.dropout(x, 0.5, inplace=True)
    assert out is x and set(np.unique(x.numpy())) <= {0.0, 2.0}


def test_embedding_max_norm_and_from_pretrained(parity):
    def scenario(lib):
        w = lib.tensor(np.arange(12, dtype=np.float64).reshape(4, 3))
        emb = lib.nn.Embedding(4, 3, max_norm=2.0, _weight=w.clone())
        out = emb(lib.tensor([1, 3, 1]))
        frozen = lib.nn.Embedding.from_pretrained(w, padding_idx=0)
        return (np.round(out.detach().numpy(), 6).tolist(), np.round(emb.weight.detach().numpy(), 6).tolist(),
                frozen.weight.requires_grad, repr(frozen), repr(lib.nn.Embedding(4, 3, max_norm=1.0, norm_type=1.0)))

    parity(scenario)


def test_one_hot_parity(parity):
    def scenario(lib):
        return (lib.nn.functional.one_hot(lib.tensor([[0, 2], [1, 1]])).tolist(),
                str(lib.nn.functional.one_hot(lib.tensor([1, 0]), 4).dtype))

    parity(scenario)


def test_layer_reprs_parity(parity):
    def scenario(lib):
        nn = lib.nn
        mods = [nn.Linear(3, 4, bias=False), nn.Bilinear(2, 3, 4), nn.Identity(),
                nn.Conv1d(2, 4, 3, stride=2, padding=1, dilation=2, groups=2, bias=False, padding_mode="circular"),
                nn.Conv2d(1, 8, 3, padding="same"), nn.Conv2d(1, 8, (3, 5), stride=(2, 1)),
                nn.MaxPool1d(3), nn.MaxPool2d(3, 2, 1, ceil_mode=True), nn.AvgPool2d((2, 3)),
                nn.AdaptiveAvgPool2d((None, 3)), nn.BatchNorm1d(4, momentum=None, affine=False),
                nn.BatchNorm2d(4, track_running_stats=False), nn.LayerNorm([2, 3], eps=1e-3), nn.GroupNorm(2, 6),
                nn.Dropout(0.2, inplace=True), nn.Dropout2d(), nn.ReLU(inplace=True), nn.LeakyReLU(0.3, True),
                nn.ELU(alpha=0.5), nn.GELU(approximate="tanh"), nn.SiLU(), nn.Sigmoid(), nn.Tanh(),
                nn.Softplus(beta=2), nn.Softmax(dim=-1), nn.LogSoftmax(1), nn.Embedding(10, 3, padding_idx=-1),
                nn.Flatten(0, 2), nn.Unflatten(1, (2, 5)), nn.RNN(3, 4, 2, nonlinearity="relu", dropout=0.5),
                nn.LSTM(3, 4, bias=False, batch_first=True, bidirectional=True), nn.GRU(3, 4),
                nn.RNNCell(3, 4, bias=False, nonlinearity="relu"), nn.LSTMCell(3, 4), nn.GRUCell(3, 4)]
        return [repr(m) for m in mods]

    parity(scenario)


def test_state_dict_keys_parity(parity):
    def scenario(lib):
        nn = lib.nn
        mods = [nn.BatchNorm2d(3), nn.BatchNorm1d(3, affine=False, track_running_stats=False),
                nn.LSTM(3, 4, num_layers=2, bidirectional=True), nn.GRUCell(2, 3), nn.LayerNorm(3, bias=False),
                nn.Conv2d(1, 2, 3, bias=False), nn.Embedding(3, 2), nn.CrossEntropyLoss(weight=lib.ones(3))]
        return [[(k, tuple(v.shape), str(v.dtype)) for k, v in m.state_dict().items()] for m in mods]

    parity(scenario)


def test_max_pool_indices_point_at_the_maxima():
    x = et.randn(2, 3, 7, 6)
    out, idx = EF.max_pool2d(x, 3, 2, 1, return_indices=True)
    flat = x.numpy().reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1), 2),
                                  out.numpy().reshape(2, 3, -1))


def test_cnn_module_trains_with_sgd():
    """Fit a tiny CNN to 8 random images: the loss must fall a lot (autograd end to end)."""
    et.manual_seed(0)
    model = enn.Sequential(enn.Conv2d(1, 4, 3, padding=1), enn.ReLU(), enn.MaxPool2d(2), enn.Flatten(),
                           enn.Linear(4 * 4 * 4, 3))
    x, y = et.randn(8, 1, 8, 8), et.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    first = None
    for _ in range(60):
        loss = EF.cross_entropy(model(x), y)
        first = first if first is not None else loss.item()
        model.zero_grad()
        loss.backward()
        with et.no_grad():
            for p in model.parameters():
                p.sub_(p.grad * 0.1)
    assert loss.item() < 0.2 * first


def test_full_backward_hooks_on_layers(parity):
    """grad_input / grad_output shapes seen by module backward hooks, in PyTorch's order."""
    def scenario(lib):
        lib.manual_seed(0)
        nn = lib.nn
        m = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(8, 3))
        seen = []
        for name, mod in m.named_children():
            mod.register_full_backward_hook(lambda mod, gi, go, name=name: seen.append(
                (name, [None if g is None else tuple(g.shape) for g in gi], [tuple(g.shape) for g in go])))
        x = lib.randn(2, 1, 4, 4, requires_grad=True)
        lib.nn.functional.cross_entropy(m(x), lib.tensor([0, 2])).backward()
        return seen

    parity(scenario)
