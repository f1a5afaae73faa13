"""Layers check their inputs like PyTorch (CPU): dtype mismatches between input and
parameters, empty batches, integer logits, ``prune(amount=True)``.

Each case runs the same code on edutorch and on torch and compares what happens:
the output's shape and dtype (and the input gradient's shape), or the error's
type and message.
"""
import importlib
import itertools
import warnings

import pytest

import edutorch as et

torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")


def outcome(fn):
    """What ``fn()`` gives: (shape, dtype) of a tensor result, or (error type, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn()
    except Exception as e:  # noqa: BLE001 - the error is the observation
        return type(e).__name__, str(e)
    if isinstance(out, (tuple, list)):
        return [outcome(lambda o=o: o) for o in out]
    return (tuple(out.shape), str(out.dtype)) if hasattr(out, "shape") else out


def same(scenario):
    ours, theirs = outcome(lambda: scenario(et)), outcome(lambda: scenario(torch))
    assert ours == theirs
    return ours


def _t(lib, shape, dtype, seed=0):
    lib.manual_seed(seed)
    return lib.randn(*shape, dtype={"f": lib.float32, "d": lib.float64}[dtype])


# -- dtypes: input float64 vs parameters float32, and every other mix ------------------------
MIXES = ["".join(m) for m in itertools.product("fd", "fd", "fdn")]  # input, weight, bias (n: None)


def _opt(lib, shape, d):
    return None if d == "n" else _t(lib, shape, d)


@pytest.mark.parametrize("mix", MIXES)
def test_conv_dtype_mismatch_matches_torch(mix):
    i, w, b = mix
    F = lambda lib: lib.nn.functional  # noqa: E731
    same(lambda L: F(L).conv2d(_t(L, (1, 2, 5, 5), i), _t(L, (3, 2, 3, 3), w), _opt(L, (3,), b)))
    same(lambda L: F(L).conv1d(_t(L, (1, 2, 5), i), _t(L, (3, 2, 3), w), _opt(L, (3,), b)))


@pytest.mark.parametrize("mix", MIXES + ["fnd", "dnf", "dnn", "fnn"])
def test_normalization_dtype_mismatch_matches_torch(mix):
    i, w, b = mix
    F = lambda lib: lib.nn.functional  # noqa: E731
    same(lambda L: F(L).batch_norm(_t(L, (4, 3), i), None, None, _opt(L, (3,), w), _opt(L, (3,), b), True))
    same(lambda L: F(L).layer_norm(_t(L, (4, 3), i), (3,), _opt(L, (3,), w), _opt(L, (3,), b)))
    same(lambda L: F(L).group_norm(_t(L, (4, 3, 2), i), 1, _opt(L, (3,), w), _opt(L, (3,), b)))
    stats = "f" if w == "n" else w  # running statistics in eval mode, of the weight's dtype
    same(lambda L: F(L).batch_norm(_t(L, (4, 3), i), _t(L, (3,), stats).abs(), _t(L, (3,), stats).abs(),
                                   _opt(L, (3,), w), _opt(L, (3,), b), False))


@pytest.mark.parametrize("mix", MIXES)
def test_linear_dtype_mismatch_matches_torch(mix):
    i, w, b = mix
    same(lambda L: L.nn.functional.linear(_t(L, (4, 3), i), _t(L, (2, 3), w), _opt(L, (2,), b)))
    same(lambda L: L.nn.functional.linear(_t(L, (2, 4, 3), i), _t(L, (2, 3), w), _opt(L, (2,), b)))


LAYERS_F64_INPUT = {
    "Conv2d": (lambda nn: nn.Conv2d(3, 8, 3), (2, 3, 8, 8)),
    "Conv2d_nobias": (lambda nn: nn.Conv2d(3, 8, 3, bias=False), (2, 3, 8, 8)),
    "Conv1d": (lambda nn: nn.Conv1d(3, 8, 3), (2, 3, 8)),
    "BatchNorm2d": (lambda nn: nn.BatchNorm2d(3), (2, 3, 4, 4)),
    "BatchNorm2d_eval": (lambda nn: nn.BatchNorm2d(3).eval(), (2, 3, 4, 4)),
    "BatchNorm1d_noaffine": (lambda nn: nn.BatchNorm1d(3, affine=False), (4, 3)),
    "LayerNorm": (lambda nn: nn.LayerNorm(4), (2, 4)),
    "GroupNorm": (lambda nn: nn.GroupNorm(1, 3), (2, 3, 4)),
    "Linear": (lambda nn: nn.Linear(4, 2), (3, 4)),
    "Linear_nobias": (lambda nn: nn.Linear(4, 2, bias=False), (3, 4)),
    "RNN": (lambda nn: nn.RNN(4, 2), (3, 1, 4)),
    "LSTM": (lambda nn: nn.LSTM(4, 2), (3, 1, 4)),
    "GRU_float64_layer": (lambda nn: nn.GRU(4, 2).double(), (3, 1, 4)),  # float32 input this time
}


@pytest.mark.parametrize("name", list(LAYERS_F64_INPUT))
def test_layer_with_float32_weights_refuses_float64_input_like_torch(name):
    make, shape = LAYERS_F64_INPUT[name]
    dtype = "f" if name.endswith("float64_layer") else "d"
    result = same(lambda L: make(L.nn)(_t(L, shape, dtype)))
    if name != "BatchNorm1d_noaffine":  # no parameters: float64 in, float64 out
        assert isinstance(result, tuple) and result[0] in ("RuntimeError", "ValueError")


def test_bilinear_dtype_mismatch_matches_torch():
    same(lambda L: L.nn.functional.bilinear(_t(L, (2, 3), "d"), _t(L, (2, 3), "d"), _t(L, (2, 3, 3), "f")))
    same(lambda L: L.nn.Bilinear(3, 3, 2)(_t(L, (2, 3), "f"), _t(L, (2, 3), "d")))


# -- empty batches ------------------------------------------------------------------------
def _with_grad(lib, layer, shape):
    """Output shape and dtype, then the input gradient's shape, for an input of ``shape``."""
    x = lib.randn(*shape, requires_grad=True)
    out = layer(x)
    out.sum().backward()
    return out, x.grad


EMPTY = {
    "conv2d": (lambda nn: nn.Conv2d(3, 8, 3), (0, 3, 8, 8)),
    "conv2d_stride_pad": (lambda nn: nn.Conv2d(3, 8, 3, stride=2, padding=1), (0, 3, 8, 8)),
    "conv2d_groups": (lambda nn: nn.Conv2d(4, 6, 3, groups=2), (0, 4, 5, 5)),
    "conv1d": (lambda nn: nn.Conv1d(3, 8, 3, padding=1), (0, 3, 8)),
    "conv1d_same_even": (lambda nn: nn.Conv1d(2, 2, 4, padding="same"), (0, 2, 7)),
    "max_pool2d": (lambda nn: nn.MaxPool2d(2), (0, 3, 8, 8)),
    "max_pool2d_pad": (lambda nn: nn.MaxPool2d(3, 2, 1), (0, 3, 7, 7)),
    "max_pool1d": (lambda nn: nn.MaxPool1d(2), (0, 3, 8)),
    "avg_pool2d": (lambda nn: nn.AvgPool2d(2), (0, 3, 8, 8)),
    "adaptive_avg_pool2d": (lambda nn: nn.AdaptiveAvgPool2d((2, 3)), (0, 3, 5, 4)),
    "linear": (lambda nn: nn.Linear(4, 2), (0, 4)),
}


@pytest.mark.parametrize("name", list(EMPTY))
def test_empty_batch_gives_empty_output_like_torch(name):
    make, shape = EMPTY[name]
    result = same(lambda L: _with_grad(L, make(L.nn), shape))
    assert result[0][0][0] == 0 and result[1][0] == shape  # an empty batch out, an empty gradient back


def test_issue_reproducer_conv2d_on_empty_batch():
    assert tuple(et.nn.Conv2d(3, 8, 3)(et.randn(0, 3, 8, 8)).shape) == (0, 8, 6, 6)


@pytest.mark.parametrize("shape", [(2, 0, 4, 4), (2, 3, 0, 4), (0, 4, 4), (4, 4)])
def test_pooling_empty_non_batch_dims_errors_like_torch(shape):
    same(lambda L: L.nn.functional.max_pool2d(L.randn(*shape), 2))
    if len(shape) > 2:
        same(lambda L: L.nn.functional.avg_pool2d(L.randn(*shape), 2))
        same(lambda L: L.nn.functional.max_pool1d(L.randn(*shape[1:]), 2))


def test_max_pool_indices_on_empty_batch():
    same(lambda L: L.nn.functional.max_pool2d(L.randn(0, 3, 4, 4), 2, return_indices=True))


# -- integer inputs to float-only kernels ------------------------------------------------
INTEGER_INPUTS = {
    "cross_entropy": lambda L: L.nn.functional.cross_entropy(L.tensor([[1, 2], [3, 4]]), L.tensor([0, 1])),
    "cross_entropy_4d": lambda L: L.nn.functional.cross_entropy(L.tensor([[1, 2], [3, 4]]).reshape(1, 2, 2, 1),
                                                                L.zeros(1, 2, 1, dtype=L.int64)),
    "cross_entropy_probs": lambda L: L.nn.functional.cross_entropy(L.tensor([[1, 2], [3, 4]]),
                                                                   L.tensor([[0.5, 0.5], [0.2, 0.8]])),
    "log_softmax": lambda L: L.nn.functional.log_softmax(L.tensor([[1, 2], [3, 4]]), 1),
    "log_softmax_bool": lambda L: L.nn.functional.log_softmax(L.tensor([[True, False]]), 1),
    "softmax_dim0": lambda L: L.nn.functional.softmax(L.tensor([[1, 2], [3, 4]]).int(), 0),
    "tensor_softmax": lambda L: L.tensor([[1, 2], [3, 4]]).softmax(1),
    "nll_loss": lambda L: L.nn.functional.nll_loss(L.tensor([[1, 2], [3, 4]]), L.tensor([0, 1])),
    "nll_loss_weight": lambda L: L.nn.functional.nll_loss(L.tensor([[1, 2], [3, 4]]), L.tensor([0, 1]), L.ones(2)),
    "mse_loss": lambda L: L.nn.functional.mse_loss(L.tensor([1, 2]), L.tensor([0, 1])),
    "mse_loss_bool": lambda L: L.nn.functional.mse_loss(L.tensor([True]), L.tensor([False])),
    "smooth_l1_loss": lambda L: L.nn.functional.smooth_l1_loss(L.tensor([1]), L.tensor([0])),
    "huber_loss": lambda L: L.nn.functional.huber_loss(L.tensor([1]), L.tensor([0])),
    "binary_cross_entropy": lambda L: L.nn.functional.binary_cross_entropy(L.tensor([1, 0]), L.tensor([0, 1])),
}


@pytest.mark.parametrize("name", list(INTEGER_INPUTS))
def test_integer_inputs_raise_torch_error(name):
    result = same(INTEGER_INPUTS[name])
    assert result[0] == "NotImplementedError"  # PyTorch's, not NumPy's UFuncTypeError


# -- prune(amount=True) ---------------------------------------------------------------------
def _prune(lib):
    return importlib.import_module(lib.__name__ + ".nn.utils.prune")


PRUNE_TRUE = {
    "l1_unstructured": lambda L: _prune(L).l1_unstructured(L.nn.Linear(3, 2), "weight", amount=True),
    "random_unstructured": lambda L: _prune(L).random_unstructured(L.nn.Linear(3, 2), "weight", amount=True),
    "random_structured": lambda L: _prune(L).random_structured(L.nn.Linear(3, 2), "weight", amount=True, dim=0),
    "global_unstructured": lambda L: _prune(L).global_unstructured(
        [(L.nn.Linear(3, 2), "weight")], pruning_method=_prune(L).L1Unstructured, amount=True),
    # size - True is an int: PyTorch prunes one channel
    "ln_structured": lambda L: (lambda m: (_prune(L).ln_structured(m, "weight", amount=True, n=2, dim=0),
                                           int(m.weight_mask.sum()))[1])(L.nn.Linear(3, 2)),
}


@pytest.mark.parametrize("name", list(PRUNE_TRUE))
def test_prune_amount_true_like_torch(name):
    result = same(PRUNE_TRUE[name])
    if name != "ln_structured":
        assert result[0] == "TypeError"
