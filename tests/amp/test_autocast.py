"""``torch.autocast``: PyTorch 2.13's per-op policy, checked against real PyTorch on the CPU.

For every op below, the same inputs run inside ``autocast("cpu")`` in both
libraries: the output dtype must be PyTorch's and the values close (within
the low precision's rounding).  float64 inputs are never cast.  The CUDA
policy (a longer float32 list, float16 by default) runs on the CuPy stand-in
and is checked against the policy table.
"""
import warnings

import numpy as np
import pytest

import edutorch
from edutorch.amp import autocast_mode

F_E = edutorch.nn.functional


def _inputs(lib, dtype_name, device="cpu"):
    """The same tensors in both libraries, converted to ``dtype_name``."""
    rng = np.random.default_rng(0)
    arrays = {
        "a": rng.standard_normal((4, 4)), "b": rng.standard_normal((4, 4)), "v": rng.standard_normal(4),
        "B": rng.standard_normal((2, 4, 4)), "img": rng.standard_normal((1, 2, 5, 5)),
        "k": rng.standard_normal((3, 2, 3, 3)) * 0.3, "x1": rng.standard_normal((1, 2, 5)),
        "k1": rng.standard_normal((3, 2, 3)) * 0.3, "kt": rng.standard_normal((2, 3, 3, 3)) * 0.3,
        "p": rng.uniform(0.1, 0.9, (4, 4)), "bias": rng.standard_normal(4),
    }
    arrays["spd"] = arrays["a"] @ arrays["a"].T + 4 * np.eye(4)
    dtype = getattr(lib, dtype_name)
    out = {name: lib.tensor(arr.astype(np.float32), device=device).to(dtype) for name, arr in arrays.items()}
    out["t"] = lib.tensor([0, 1, 2, 3], device=device)
    return out


# (name, fn(lib, F, inputs)): ops that edutorch has, as a user calls them
OPS = [
    ("mm", lambda L, F, i: L.mm(i["a"], i["b"])),
    ("bmm", lambda L, F, i: L.bmm(i["B"], i["B"])),
    ("matmul", lambda L, F, i: L.matmul(i["a"], i["b"])),
    ("matmul_batched", lambda L, F, i: i["B"] @ i["a"]),
    ("matmul_vector", lambda L, F, i: i["a"] @ i["v"]),
    ("vector_matmul", lambda L, F, i: i["v"] @ i["a"]),
    ("matmul_dot", lambda L, F, i: L.matmul(i["v"], i["v"])),
    ("addmm", lambda L, F, i: L.addmm(i["bias"], i["a"], i["b"])),
    ("baddbmm", lambda L, F, i: L.baddbmm(i["B"], i["B"], i["B"])),
    ("linear", lambda L, F, i: F.linear(i["a"], i["b"], i["bias"])),
    ("linear_no_bias", lambda L, F, i: F.linear(i["a"], i["b"])),
    ("conv1d", lambda L, F, i: F.conv1d(i["x1"], i["k1"])),
    ("conv2d", lambda L, F, i: F.conv2d(i["img"], i["k"])),
    ("conv_transpose2d", lambda L, F, i: F.conv_transpose2d(i["img"], i["kt"])),
    ("prelu", lambda L, F, i: F.prelu(i["a"], L.tensor([0.25]))),
    ("sdpa", lambda L, F, i: F.scaled_dot_product_attention(i["B"], i["B"], i["B"])),
    ("einsum", lambda L, F, i: L.einsum("ij,jk->ik", i["a"], i["b"])),
    ("tensordot", lambda L, F, i: L.tensordot(i["a"], i["b"], 1)),
    ("dot", lambda L, F, i: L.dot(i["v"], i["v"])),
    ("mv", lambda L, F, i: L.mv(i["a"], i["v"])),
    ("mse_loss", lambda L, F, i: F.mse_loss(i["a"], i["b"])),
    ("l1_loss", lambda L, F, i: F.l1_loss(i["a"], i["b"])),
    ("smooth_l1_loss", lambda L, F, i: F.smooth_l1_loss(i["a"], i["b"])),
    ("huber_loss", lambda L, F, i: F.huber_loss(i["a"], i["b"])),
    ("nll_loss", lambda L, F, i: F.nll_loss(i["a"], i["t"])),
    ("cross_entropy", lambda L, F, i: F.cross_entropy(i["a"], i["t"])),
    ("binary_cross_entropy", lambda L, F, i: F.binary_cross_entropy(i["p"], i["p"])),
    ("bce_with_logits", lambda L, F, i: F.binary_cross_entropy_with_logits(i["a"], i["p"])),
    ("kl_div", lambda L, F, i: F.kl_div(i["a"], i["p"], reduction="batchmean")),
    ("cdist", lambda L, F, i: L.cdist(i["a"], i["b"])),
    ("trace", lambda L, F, i: L.trace(i["a"])),
    ("prod", lambda L, F, i: L.prod(i["p"])),
    ("linalg_inv", lambda L, F, i: L.linalg.inv(i["spd"])),
    ("linalg_solve", lambda L, F, i: L.linalg.solve(i["spd"], i["v"])),
    ("softmax", lambda L, F, i: L.softmax(i["a"], 1)),
    ("log_softmax", lambda L, F, i: F.log_softmax(i["a"], 1)),
    ("layer_norm", lambda L, F, i: F.layer_norm(i["a"], (4,))),
    ("group_norm", lambda L, F, i: F.group_norm(i["img"], 1)),
    ("batch_norm", lambda L, F, i: F.batch_norm(i["a"], None, None, training=True)),
    ("exp", lambda L, F, i: i["a"].exp()),
    ("log", lambda L, F, i: i["p"].log()),
    ("pow", lambda L, F, i: i["a"] ** 2),
    ("sum", lambda L, F, i: i["a"].sum()),
    ("cumsum", lambda L, F, i: i["a"].cumsum(0)),
    ("norm", lambda L, F, i: i["a"].norm()),
    ("logsumexp", lambda L, F, i: i["a"].logsumexp(1)),
    ("cosine_similarity", lambda L, F, i: F.cosine_similarity(i["a"], i["b"])),
    ("relu", lambda L, F, i: i["a"].relu()),
    ("gelu", lambda L, F, i: F.gelu(i["a"])),
    ("tanh", lambda L, F, i: i["a"].tanh()),
    ("sigmoid", lambda L, F, i: i["a"].sigmoid()),
    ("max_pool2d", lambda L, F, i: F.max_pool2d(i["img"], 2)),
    ("avg_pool2d", lambda L, F, i: F.avg_pool2d(i["img"], 2)),
    ("add", lambda L, F, i: i["a"] + i["b"]),
    ("mul_scalar", lambda L, F, i: i["a"] * 0.5),
    ("cat", lambda L, F, i: L.cat([i["a"], i["b"]])),
    ("addcmul", lambda L, F, i: L.addcmul(i["a"], i["a"], i["b"])),
    ("atan2", lambda L, F, i: L.atan2(i["a"], i["b"])),
    ("mean", lambda L, F, i: i["a"].mean()),
]
IDS = [name for name, _ in OPS]


def _run(lib, fn, dtype_name, autocast_dtype):
    inputs = _inputs(lib, dtype_name)
    with lib.autocast("cpu", dtype=getattr(lib, autocast_dtype)):
        out = fn(lib, lib.nn.functional, inputs)
    return out


def _values(t):
    return t.detach().to(t.dtype if t.dtype is not None else None).float().numpy().astype(np.float64) \
        if "float" in str(t.dtype) else t.detach().numpy()


@pytest.mark.parametrize("autocast_dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("input_dtype", ["float32", "bfloat16", "float64"])
@pytest.mark.parametrize("name,fn", OPS, ids=IDS)
def test_cpu_policy_matches_torch(real_torch, name, fn, input_dtype, autocast_dtype):
    """Each op's output dtype under ``autocast("cpu")`` is PyTorch's; values agree to the rounding."""
    try:
        expected = _run(real_torch, fn, input_dtype, autocast_dtype)
    except (RuntimeError, NotImplementedError) as e:  # e.g. no bfloat16 kernel in PyTorch for this op
        pytest.skip(f"PyTorch itself refuses: {str(e).splitlines()[0]}")
    got = _run(edutorch, fn, input_dtype, autocast_dtype)
    assert str(got.dtype) == str(expected.dtype), name
    low = "float64" not in (input_dtype, str(expected.dtype).split(".")[-1])
    tol = 6e-2 if low else 1e-9
    np.testing.assert_allclose(got.detach().float().numpy() if low else got.detach().numpy(),
                               expected.detach().float().numpy() if low else expected.detach().numpy(),
                               rtol=tol, atol=tol)


def test_float64_and_integers_never_cast():
    a = edutorch.randn(3, 3, dtype=edutorch.float64)
    n = edutorch.arange(9).reshape(3, 3)
    with edutorch.autocast("cpu"):
        assert (a @ a).dtype == edutorch.float64
        assert (n @ n).dtype == edutorch.int64
        assert edutorch.nn.functional.mse_loss(a, a).dtype == edutorch.float64
    with edutorch.autocast("cpu", dtype=edutorch.bfloat16):
        f = edutorch.randn(3, 3)
        assert (f @ a.float()).dtype == edutorch.bfloat16


def test_state_functions_and_defaults(real_torch):
    for lib in (edutorch, real_torch):
        assert lib.get_autocast_dtype("cpu") == lib.bfloat16
        assert lib.get_autocast_dtype("cuda") == lib.float16
        assert not lib.is_autocast_enabled("cpu")
        with lib.autocast(device_type="cpu"):
            assert lib.is_autocast_enabled("cpu") and not lib.is_autocast_enabled("cuda")
            with lib.autocast("cpu", enabled=False):
                assert not lib.is_autocast_enabled("cpu")
                assert lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype == lib.float32
            with lib.autocast("cpu", dtype=lib.float16):
                assert lib.get_autocast_dtype("cpu") == lib.float16
                assert lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype == lib.float16
            assert lib.get_autocast_dtype("cpu") == lib.bfloat16
            assert lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype == lib.bfloat16
        assert not lib.is_autocast_enabled("cpu")


def test_decorator_and_amp_namespace(real_torch):
    for lib in (edutorch, real_torch):
        @lib.autocast("cpu")
        def f(x):
            return x @ x

        @lib.amp.autocast("cpu", enabled=False)
        def g(x):
            return x @ x

        x = lib.ones(2, 2)
        assert f(x).dtype == lib.bfloat16 and g(x).dtype == lib.float32
        assert lib.amp.autocast is lib.autocast


@pytest.mark.parametrize("make,message", [
    (lambda lib: lib.autocast(lib.float16), "Expected `device_type` of type `str`, got: `<class 'torch.dtype'>`"),
    (lambda lib: lib.autocast("cpu")(3), "autocast()(func) requires a callable, but got int."),
])
def test_errors_match_torch(real_torch, make, message):
    for lib in (edutorch, real_torch):
        with pytest.raises((ValueError, RuntimeError, TypeError)) as info:
            make(lib)
        assert message.replace("torch.dtype", "torch.dtype" if lib is real_torch else "edutorch._dtype.dtype") \
            in str(info.value)


def test_devices_other_than_cpu_and_cuda_are_refused():
    with pytest.raises(RuntimeError, match="User specified an unsupported autocast device_type 'mps'"):
        edutorch.autocast("mps")


def test_unsupported_dtype_warns_and_disables(real_torch):
    for lib in (edutorch, real_torch):
        with pytest.warns(UserWarning) as record:
            region = lib.autocast("cpu", dtype=lib.float32)
        assert str(record[0].message) == (
            "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
            "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.")
        with region:
            assert not lib.is_autocast_enabled("cpu")


def _cast_node(y, w):
    """The ``ToCopyBackward0`` node that cast leaf ``w`` on the way to ``y``."""
    seen, stack = set(), [y.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for nxt, _ in node.next_functions:
            if nxt is not None and getattr(nxt, "variable", None) is w and node.name() == "ToCopyBackward0":
                return node
            stack.append(nxt)
    return None


@pytest.mark.parametrize("cache_enabled", [True, False])
def test_cast_cache_shared_within_a_region(real_torch, cache_enabled):
    """A weight used twice in one region is cast once (cache on); a new region casts again."""
    for lib in (edutorch, real_torch):
        w = lib.ones(3, 3, requires_grad=True)
        x = lib.ones(2, 3)
        with lib.autocast("cpu", cache_enabled=cache_enabled):
            y1, y2 = lib.nn.functional.linear(x, w), lib.nn.functional.linear(x, w)
        with lib.autocast("cpu", cache_enabled=cache_enabled):
            y3 = lib.nn.functional.linear(x, w)
        n1, n2, n3 = _cast_node(y1, w), _cast_node(y2, w), _cast_node(y3, w)
        assert n1 is not None and n3 is not None
        assert (n1 is n2) == cache_enabled
        assert n1 is not n3
        (y1.float().sum() + y2.float().sum()).backward()
        assert w.grad.dtype == lib.float32
        np.testing.assert_allclose(w.grad.numpy(), np.full((3, 3), 4.0))


def test_training_step_gradients_match_torch(real_torch):
    """A linear → relu → linear → loss step under autocast: same loss and float32 gradients."""
    rng = np.random.default_rng(1)
    w1, w2 = rng.standard_normal((8, 5)).astype(np.float32), rng.standard_normal((3, 8)).astype(np.float32)
    x, t = rng.standard_normal((6, 5)).astype(np.float32), np.array([0, 1, 2, 0, 1, 2])
    results = []
    for lib in (edutorch, real_torch):
        p1 = lib.tensor(w1, requires_grad=True)
        p2 = lib.tensor(w2, requires_grad=True)
        with lib.autocast("cpu"):
            h = lib.nn.functional.linear(lib.tensor(x), p1).relu()
            out = lib.nn.functional.linear(h, p2)
            loss = lib.nn.functional.cross_entropy(out, lib.tensor(t))
        assert (h.dtype, out.dtype, loss.dtype) == (lib.bfloat16, lib.bfloat16, lib.float32)
        loss.backward()
        results.append((loss.item(), p1.grad.numpy(), p2.grad.numpy()))
    (l_e, g1_e, g2_e), (l_t, g1_t, g2_t) = results
    assert l_e == pytest.approx(l_t, rel=2e-2)
    np.testing.assert_allclose(g1_e, g1_t, rtol=5e-2, atol=5e-2)
    np.testing.assert_allclose(g2_e, g2_t, rtol=5e-2, atol=5e-2)


def test_deprecated_spellings_warn_like_torch(real_torch):
    cases = [
        (lambda lib: lib.cpu.amp.autocast(),
         "`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', args...)` instead."),
        (lambda lib: lib.cpu.amp.GradScaler(),
         "`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cpu', args...)` instead."),
        (lambda lib: lib.cuda.amp.autocast(),
         "`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead."),
        (lambda lib: lib.cuda.amp.GradScaler(),
         "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead."),
    ]
    for make, message in cases:
        for lib in (edutorch, real_torch):
            with warnings.catch_warnings(record=True) as record:
                warnings.simplefilter("always")
                obj = make(lib)
            future = [w for w in record if issubclass(w.category, FutureWarning)]
            assert [str(w.message) for w in future] == [message]
            assert future[0].filename == __file__  # points at the caller's line
            assert type(obj).__name__ in ("autocast", "GradScaler")
    with warnings.catch_warnings(record=True) as record:  # no GPU here: CUDA's region is disabled
        warnings.simplefilter("always")
        region = edutorch.cuda.amp.autocast()
    assert "CUDA is not available or torch_xla is imported. Disabling autocast." in [str(w.message) for w in record]
    assert not region._enabled


def test_custom_fwd_casts_inputs_and_custom_bwd_restores_state():
    seen = {}

    class Square(edutorch.autograd.Function):
        @staticmethod
        @edutorch.amp.custom_fwd(device_type="cpu", cast_inputs=edutorch.float32)
        def forward(ctx, x):
            seen["fwd"] = (x.dtype, edutorch.is_autocast_enabled("cpu"))
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @edutorch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd"] = edutorch.is_autocast_enabled("cpu")
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = edutorch.ones(3, dtype=edutorch.bfloat16, requires_grad=True)
    with edutorch.autocast("cpu"):
        y = Square.apply(x)
    y.sum().backward()
    assert seen == {"fwd": (edutorch.float32, False), "bwd": False}
    assert y.dtype == edutorch.float32 and x.grad.dtype == edutorch.bfloat16


# -- the CUDA policy, on the CuPy stand-in ------------------------------------------------------
CUDA_EXPECTED = [  # (op, input dtype, expected output dtype) inside autocast("cuda") (float16)
    ("mm", "float32", "float16"), ("linear", "float32", "float16"), ("conv2d", "float32", "float16"),
    ("einsum", "float32", "float16"), ("mv", "float32", "float16"), ("bmm", "float32", "float16"),
    ("addmm", "float32", "float16"), ("matmul_batched", "float32", "float16"),
    ("exp", "float16", "float32"), ("log", "float16", "float32"), ("pow", "float16", "float32"),
    ("layer_norm", "float16", "float32"), ("group_norm", "float16", "float32"), ("mse_loss", "float16", "float32"),
    ("softmax", "float16", "float32"), ("log_softmax", "float16", "float32"), ("sum", "float16", "float32"),
    ("cumsum", "float16", "float32"), ("norm", "float16", "float32"), ("logsumexp", "float16", "float32"),
    ("cosine_similarity", "float16", "float32"), ("cdist", "float16", "float32"),
    ("relu", "float16", "float16"), ("tanh", "float16", "float16"), ("add", "float16", "float16"),
    ("mm", "float64", "float64"), ("exp", "float64", "float64"),
]


@pytest.mark.parametrize("name,input_dtype,expected", CUDA_EXPECTED)
def test_cuda_policy_on_the_cupy_standin(fake_cuda, name, input_dtype, expected):
    fn = dict(OPS)[name]
    inputs = _inputs(edutorch, input_dtype, device="cuda")
    with edutorch.autocast("cuda"):
        out = fn(edutorch, F_E, inputs)
    assert out.device.type == "cuda"
    assert str(out.dtype) == f"torch.{expected}"
    # the values are those of the same op run outside autocast on cast inputs (here: the CPU's)
    cpu = _inputs(edutorch, input_dtype)
    ref = fn(edutorch, F_E, cpu)
    np.testing.assert_allclose(out.detach().cpu().float().numpy(), ref.detach().float().numpy(), rtol=2e-2, atol=2e-2)


def test_cuda_promote_and_banned_ops(fake_cuda):
    a16 = edutorch.ones(4, device="cuda", dtype=edutorch.float16)
    a32 = edutorch.ones(4, device="cuda")
    with edutorch.autocast("cuda"):
        assert edutorch.dot(a16, a32).dtype == edutorch.float32  # promote: both to float32
        assert edutorch.cat([a16, a32]).dtype == edutorch.float32
        p = edutorch.full((4,), 0.5, device="cuda")
        with pytest.raises(RuntimeError, match="binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast"):
            edutorch.nn.functional.binary_cross_entropy(p, p)
    # on the CPU, autocast("cuda") changes nothing
    with edutorch.autocast("cuda"):
        assert edutorch.mm(edutorch.ones(2, 2), edutorch.ones(2, 2)).dtype == edutorch.float32


def test_policy_tables_name_only_known_policies():
    for device, table in autocast_mode.POLICIES.items():
        assert set(table.values()) <= {autocast_mode.LOWER, autocast_mode.FP32, autocast_mode.PROMOTE,
                                       autocast_mode.FP32_SET_OPT_DTYPE, autocast_mode.BANNED}, device


def test_autocast_off_leaves_apply_untouched():
    from edutorch.autograd import function

    def registered():
        return [fn for _, fn in function.apply_interceptors.active if fn is autocast_mode._autocast_interceptor]

    assert registered() == []
    with edutorch.autocast("cpu"):
        assert len(registered()) == 1
        with edutorch.autocast("cpu", enabled=False):
            assert registered() == []
    assert registered() == []


@pytest.mark.parametrize("call", [
    lambda lib: lib.get_autocast_cpu_dtype(), lambda lib: lib.get_autocast_gpu_dtype(),
    lambda lib: lib.is_autocast_cpu_enabled(), lambda lib: lib.set_autocast_cpu_enabled(False),
    lambda lib: lib.set_autocast_cpu_dtype(lib.bfloat16), lambda lib: lib.set_autocast_gpu_dtype(lib.float16),
])
def test_deprecated_per_device_functions(real_torch, call):
    results = []
    for lib in (edutorch, real_torch):
        with pytest.warns(DeprecationWarning) as record:
            value = call(lib)
        results.append((repr(value), str(record[0].message).split(" (Triggered internally")[0]))
    assert results[0] == results[1]
    assert edutorch.GradScaler is edutorch.amp.GradScaler


def test_deprecated_cuda_custom_fwd_and_bwd(real_torch):
    for lib in (edutorch, real_torch):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            lib.cuda.amp.custom_fwd(lambda ctx, x: x)
            lib.cuda.amp.custom_bwd(lambda ctx, g: g)
        assert [str(w.message) for w in record if issubclass(w.category, FutureWarning)] == [
            "`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
            "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
            "`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
            "`torch.amp.custom_bwd(args..., device_type='cuda')` instead."]
