"""``torch.bfloat16``: a dtype backed by ``ml_dtypes``, checked against real PyTorch:
rounding, promotion, printing, ``finfo``, and the ops autocast runs in it (values,
dtypes and gradients)."""
import numpy as np
import pytest

import edutorch

DTYPES = ["bfloat16", "float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool"]


def test_the_dtype():
    bf = edutorch.bfloat16
    assert repr(bf) == "torch.bfloat16" and bf.is_floating_point and bf.itemsize == 2
    t = edutorch.ones(2, dtype=bf)
    assert t.dtype is bf and t.is_floating_point() and t.element_size() == 2
    assert t.type() == "torch.BFloat16Tensor"
    assert edutorch.zeros(3).bfloat16().dtype is bf and edutorch.zeros(3).to(bf).dtype is bf
    assert t.requires_grad_().requires_grad


def test_rounding_matches_torch(real_torch):
    values = np.random.default_rng(0).standard_normal(1000).astype(np.float32) * 1e3
    values[:4] = [1.00390625, 1.01171875, -3.3895314e38, 1e-40]  # ties to even, max, a subnormal
    got = edutorch.tensor(values).bfloat16().float().numpy()
    expected = real_torch.tensor(values).bfloat16().float().numpy()
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("b", DTYPES)
def test_promote_types_matches_torch(real_torch, a, b):
    got = edutorch.promote_types(getattr(edutorch, a), getattr(edutorch, b))
    assert repr(got) == repr(real_torch.promote_types(getattr(real_torch, a), getattr(real_torch, b)))


@pytest.mark.parametrize("make", [
    lambda L: L.ones(2, dtype=L.bfloat16) + 1.5,
    lambda L: L.ones(2, dtype=L.bfloat16) * L.ones(2, dtype=L.float16),
    lambda L: L.ones(2, dtype=L.bfloat16) + L.tensor(2.0),
    lambda L: L.arange(3) * L.tensor(0.5, dtype=L.bfloat16),
    lambda L: L.arange(3) + L.ones(3, dtype=L.bfloat16),
    lambda L: L.ones(2, dtype=L.bfloat16) / 3,
    lambda L: L.ones(2, dtype=L.bfloat16) > 0,
], ids=["python-float", "float16", "0-dim-float32", "int-times-0-dim", "int-plus", "div", "compare"])
def test_result_dtype_of_mixed_operands(real_torch, make):
    assert repr(make(edutorch)) == repr(make(real_torch))


@pytest.mark.parametrize("make", [
    lambda L: L.tensor([1.5, 2.3, 100000.0, 1e-3], dtype=L.bfloat16),
    lambda L: L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.bfloat16, requires_grad=True),
    lambda L: L.tensor([0.1, -2.5, 3.14159], dtype=L.bfloat16, requires_grad=True) * 2,
    lambda L: L.tensor(3.0, dtype=L.bfloat16),
    lambda L: L.zeros(0, dtype=L.bfloat16),
    lambda L: L.tensor([float("inf"), float("nan"), -1.0], dtype=L.bfloat16),
])
def test_printing_matches_torch(real_torch, make):
    assert repr(make(edutorch)).replace("edutorch", "torch") == repr(make(real_torch))


@pytest.mark.parametrize("name", ["bfloat16", "float16", "float32", "float64"])
def test_finfo_matches_torch(real_torch, name):
    got, expected = edutorch.finfo(getattr(edutorch, name)), real_torch.finfo(getattr(real_torch, name))
    assert repr(got) == repr(expected)
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(got, attr) == getattr(expected, attr), attr


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(real_torch, name):
    got, expected = edutorch.iinfo(getattr(edutorch, name)), real_torch.iinfo(getattr(real_torch, name))
    assert repr(got) == repr(expected)
    assert (got.bits, got.min, got.max, got.dtype) == (expected.bits, expected.min, expected.max, expected.dtype)


def test_info_errors_match_torch(real_torch):
    for lib in (edutorch, real_torch):
        with pytest.raises(TypeError, match=r"torch.finfo\(\) requires a floating point input type"):
            lib.finfo(lib.int32)
        with pytest.raises(TypeError, match=r"torch.iinfo\(\) requires an integer input type"):
            lib.iinfo(lib.float32)
        assert lib.finfo().dtype == "float32"


_A = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
_B = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
_IMG = np.random.default_rng(2).standard_normal((2, 3, 6, 6)).astype(np.float32)
_KER = np.random.default_rng(3).standard_normal((4, 3, 3, 3)).astype(np.float32)

OPS = {
    "mm": lambda L, x, y: x @ y, "add_scalar": lambda L, x, y: x + 1.5, "mul": lambda L, x, y: x * x,
    "div": lambda L, x, y: x / 3, "relu": lambda L, x, y: L.relu(x), "exp": lambda L, x, y: x.exp(),
    "log": lambda L, x, y: x.abs().log(), "tanh": lambda L, x, y: x.tanh(), "sigmoid": lambda L, x, y: x.sigmoid(),
    "sum": lambda L, x, y: x.sum(1), "mean": lambda L, x, y: x.mean(), "pow": lambda L, x, y: x ** 2,
    "softmax": lambda L, x, y: L.softmax(x, 1), "log_softmax": lambda L, x, y: L.log_softmax(x, 1),
    "sqrt": lambda L, x, y: x.abs().sqrt(), "linear": lambda L, x, y: L.nn.functional.linear(x, y.t()),
    "gelu": lambda L, x, y: L.nn.functional.gelu(x), "layer_norm": lambda L, x, y: L.nn.functional.layer_norm(x, (5,)),
    "max": lambda L, x, y: x.max(1)[0], "reshape": lambda L, x, y: x.t().reshape(-1), "cat": lambda L, x, y: L.cat([x, x]),
    "mse_loss": lambda L, x, y: L.nn.functional.mse_loss(x, x.detach() * 0),
    "cross_entropy": lambda L, x, y: L.nn.functional.cross_entropy(x, L.tensor([0, 2, 1, 1])),
    "conv2d": lambda L, x, y: L.nn.functional.conv2d(L.tensor(_IMG).bfloat16(), L.tensor(_KER).bfloat16()) + x.sum(),
    "where": lambda L, x, y: L.where(x > 0, x, 0.0), "clamp": lambda L, x, y: x.clamp(-0.5, 0.5),
    "abs": lambda L, x, y: x.abs(), "var": lambda L, x, y: x.var(1), "norm": lambda L, x, y: x.norm(),
    "batch_norm": lambda L, x, y: L.nn.functional.batch_norm(x, None, None, training=True),
    "max_pool2d": lambda L, x, y: L.nn.functional.max_pool2d(x.reshape(1, 1, 4, 5), 2),
    "silu": lambda L, x, y: L.nn.functional.silu(x), "leaky_relu": lambda L, x, y: L.nn.functional.leaky_relu(x, 0.1),
    "group_norm": lambda L, x, y: L.nn.functional.group_norm(x.reshape(2, 2, 5), 1),
}


@pytest.mark.parametrize("name", list(OPS))
def test_ops_in_bfloat16_match_torch(real_torch, name):
    """The output stays bfloat16 as in PyTorch, values and gradients agree to bfloat16's rounding."""
    results = []
    for lib in (edutorch, real_torch):
        x = lib.tensor(_A).bfloat16().requires_grad_()
        y = lib.tensor(_B).bfloat16().requires_grad_()
        out = OPS[name](lib, x, y)
        out.float().sum().backward()
        results.append((str(out.dtype), str(x.grad.dtype), out.detach().float().numpy(), x.grad.float().numpy()))
    (dt, gdt, v, g), (dt_t, gdt_t, v_t, g_t) = results
    assert (dt, gdt) == (dt_t, gdt_t) == ("torch.bfloat16", "torch.bfloat16")
    np.testing.assert_allclose(v, v_t, rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(g, g_t, rtol=2e-2, atol=2e-2)


def test_bfloat16_scalar_backward():
    x = edutorch.ones(2, 2, dtype=edutorch.bfloat16, requires_grad=True)
    (x * 2).sum().backward()
    assert x.grad.dtype == edutorch.bfloat16 and x.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_save_and_load_keep_bfloat16(tmp_path):
    """``.npy`` cannot name bfloat16: its bits are stored as uint16 and viewed back on load."""
    model = edutorch.nn.Linear(3, 2).bfloat16()
    path = tmp_path / "m.pt"
    edutorch.save(model.state_dict(), path)
    loaded = edutorch.load(path)
    assert loaded["weight"].dtype == edutorch.bfloat16
    assert edutorch.equal(loaded["weight"], model.weight.detach())


def test_module_bfloat16(real_torch):
    for lib in (edutorch, real_torch):
        m = lib.nn.Linear(3, 2).bfloat16()
        assert m.weight.dtype == lib.bfloat16 and m(lib.ones(1, 3, dtype=lib.bfloat16)).dtype == lib.bfloat16


def _op_table():
    """One case per op of the engine's op table (tests/op_cases.py; tests/ is on sys.path)."""
    import op_cases

    first = {}
    for case in op_cases.OP_CASES:
        first.setdefault(case.name, case)
    return op_cases.sample, list(first.values())


_SAMPLE, _CASES = _op_table()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", _CASES, ids=[c.name for c in _CASES])
def test_every_op_of_the_op_table_in_bfloat16(real_torch, case):
    """Each op on bfloat16 inputs: PyTorch's output dtype, values and gradients within bfloat16's rounding."""
    rng = np.random.default_rng(0)
    arrays = [_SAMPLE(s, case.domain, rng).astype(np.float32) for s in case.shapes]
    results = []
    for lib in (real_torch, edutorch):
        inputs = [lib.tensor(a).bfloat16().requires_grad_(case.grad) for a in arrays]
        try:
            out = case.fn(lib, *inputs)
        except (RuntimeError, NotImplementedError) as e:
            if lib is real_torch:
                pytest.skip(f"PyTorch has no bfloat16 kernel: {str(e).splitlines()[0][:80]}")
            raise
        first = out[0] if isinstance(out, tuple) else out
        grads = None
        if case.grad and first.dtype.is_floating_point and first.requires_grad:
            first.float().sum().backward()
            grads = [None if t.grad is None else (str(t.grad.dtype), t.grad.float().numpy()) for t in inputs]
        values = first.detach().float().numpy() if first.dtype.is_floating_point else first.detach().numpy()
        results.append((str(first.dtype), values, grads))
    (dtype_t, values_t, grads_t), (dtype_e, values_e, grads_e) = results
    assert dtype_e == dtype_t
    np.testing.assert_allclose(values_e, values_t, rtol=3e-2, atol=3e-2)
    if grads_t is not None:
        for g_e, g_t in zip(grads_e, grads_t):
            assert (g_e is None) == (g_t is None)
            if g_t is not None:
                assert g_e[0] == g_t[0]
                np.testing.assert_allclose(g_e[1], g_t[1], rtol=5e-2, atol=5e-2)


# -- reductions: float16 and bfloat16 accumulate in float32, rounded once (PyTorch's CPU kernels) --------

LOW = ["bfloat16", "float16"]
# integers 0..9: every float32 partial sum is exact, so the rounded result is defined whatever the order
_INTS = np.random.default_rng(4).integers(0, 10, (64, 300)).astype(np.float32)

EXACT_REDUCTIONS = {
    "sum": lambda x: x.sum(), "sum_dim": lambda x: x.sum(1), "sum_dims_keepdim": lambda x: x.sum((0, 1), keepdim=True),
    "nansum": lambda x: x.nansum(0), "cumsum": lambda x: x.cumsum(1), "cumsum_dim0": lambda x: x.cumsum(0),
    "sum_to_size": lambda x: x.sum_to_size(1, 300),
    "cumprod": lambda x: (1 + x / 64).cumprod(0),  # float32 running products, in the same order in both
}
ROUNDED_REDUCTIONS = {  # a float32 division or root before the one rounding: equal to within one unit
    "mean": lambda x: x.mean(), "mean_dim": lambda x: x.mean(1), "var": lambda x: x.var(1), "std": lambda x: x.std(0),
    "norm": lambda x: x.norm(), "logsumexp": lambda x: (x / 4).logsumexp(1), "nanmean": lambda x: x.nanmean(1),
}


def test_bfloat16_sum_of_ones_does_not_stall_at_256():
    ones = edutorch.ones(1000, dtype=edutorch.bfloat16)
    assert ones.sum().item() == 1000 and ones.mean().item() == 1 and ones.cumsum(0)[-1].item() == 1000
    assert ones.sum().dtype is edutorch.bfloat16 and ones.mean().dtype is edutorch.bfloat16
    assert edutorch.ones(1000).sum(dtype=edutorch.bfloat16).item() == 1000


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", list(EXACT_REDUCTIONS))
def test_low_precision_sums_match_torch_exactly(real_torch, dtype, name):
    results = [EXACT_REDUCTIONS[name](lib.tensor(_INTS).to(getattr(lib, dtype))) for lib in (edutorch, real_torch)]
    assert str(results[0].dtype) == str(results[1].dtype) == f"torch.{dtype}"
    np.testing.assert_array_equal(results[0].float().numpy(), results[1].float().numpy())


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", list(ROUNDED_REDUCTIONS))
def test_low_precision_reductions_match_torch(real_torch, dtype, name):
    results = [ROUNDED_REDUCTIONS[name](lib.tensor(_INTS).to(getattr(lib, dtype))) for lib in (edutorch, real_torch)]
    assert str(results[0].dtype) == str(results[1].dtype) == f"torch.{dtype}"
    ulp = 2.0 ** -7 if dtype == "bfloat16" else 2.0 ** -10  # a naive low-precision sum is off by far more
    np.testing.assert_allclose(results[0].float().numpy(), results[1].float().numpy(), rtol=ulp, atol=0)


@pytest.mark.parametrize("dtype", LOW)
def test_low_precision_broadcast_gradient_is_summed_in_float32(real_torch, dtype):
    """The gradient of a broadcast bias (``sum_to_size`` in backward) sums 1000 ones: 1000, not 256."""
    grads = []
    for lib in (edutorch, real_torch):
        bias = lib.zeros(4, dtype=getattr(lib, dtype), requires_grad=True)
        (lib.ones(1000, 4, dtype=getattr(lib, dtype)) + bias).sum().backward()
        grads.append(bias.grad.float().numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    assert grads[0].tolist() == [1000.0] * 4
