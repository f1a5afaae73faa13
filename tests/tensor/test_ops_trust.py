"""Trust, round two (issue 23): ops against PyTorch 2.13 where they used to crash or differ.

* 0-d tensors: every reduction, softmax, flip, movedim... accepts dim 0 and -1
  and gives PyTorch's value and gradient (or PyTorch's error).
"""
import itertools
import math
import warnings

import numpy as np
import pytest

import edutorch as et

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def _torch():
    return pytest.importorskip("torch", reason=TORCH_REASON)


def _observe(fn):
    """What a user sees: ``("ok", value, ...)`` or ``("raised", exception type name)``."""
    try:
        return ("ok",) + tuple(fn())
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return "raised", type(e).__name__


def _same(ours, theirs):
    """Equal observations; floats compared to 1e-12 relative, NaN equal to NaN."""
    if isinstance(ours, float) and isinstance(theirs, float):
        return math.isclose(ours, theirs, rel_tol=1e-12) or (math.isnan(ours) and math.isnan(theirs))
    if isinstance(ours, (list, tuple)) and isinstance(theirs, (list, tuple)):
        return len(ours) == len(theirs) and all(_same(a, b) for a, b in zip(ours, theirs))
    return ours == theirs


# ---------------------------------------------------------------- 0-d tensors ----
# ``op(t, lib)``: the same call with edutorch or torch (``lib``), on a 0-d float64 tensor
ZERO_DIM_OPS = {
    "F.gelu": lambda t, lib: lib.nn.functional.gelu(t),
    "F.gelu(tanh)": lambda t, lib: lib.nn.functional.gelu(t, approximate="tanh"),
    "F.softmax(0)": lambda t, lib: lib.nn.functional.softmax(t, 0),
    "F.softmax(-1)": lambda t, lib: lib.nn.functional.softmax(t, -1),
    "F.softmax(1)": lambda t, lib: lib.nn.functional.softmax(t, 1),
    "F.log_softmax(0)": lambda t, lib: lib.nn.functional.log_softmax(t, 0),
    "F.softmin(0)": lambda t, lib: lib.nn.functional.softmin(t, 0),
    "softmax(0)": lambda t, lib: t.softmax(0),
    "log_softmax(-1)": lambda t, lib: t.log_softmax(-1),
    "F.normalize(dim=0)": lambda t, lib: lib.nn.functional.normalize(t, dim=0),
    "F.normalize(dim=-1)": lambda t, lib: lib.nn.functional.normalize(t, dim=-1),
    "logsumexp(0)": lambda t, lib: t.logsumexp(0),
    "logsumexp(-1, keepdim)": lambda t, lib: t.logsumexp(-1, keepdim=True),
    "flip(0)": lambda t, lib: t.flip(0),
    "flip(1)": lambda t, lib: t.flip(1),
    "movedim(0, 0)": lambda t, lib: t.movedim(0, 0),
    "movedim(-1, 0)": lambda t, lib: t.movedim(-1, 0),
    "sum(0)": lambda t, lib: t.sum(0),
    "sum(-1, keepdim)": lambda t, lib: t.sum(-1, keepdim=True),
    "sum((0, -1))": lambda t, lib: t.sum((0, -1)),
    "sum(1)": lambda t, lib: t.sum(1),
    "mean(0)": lambda t, lib: t.mean(0),
    "mean([-1])": lambda t, lib: t.mean([-1]),
    "amax(0)": lambda t, lib: t.amax(0),
    "amin(-1)": lambda t, lib: t.amin(-1),
    "prod(0)": lambda t, lib: t.prod(0),
    "std(0)": lambda t, lib: t.std(0),
    "var(0)": lambda t, lib: t.var(0),
    "std(0, correction=0)": lambda t, lib: t.std(0, correction=0),
    "var(-1, correction=0)": lambda t, lib: t.var(-1, correction=0),
    "max(0).values": lambda t, lib: t.max(0).values,
    "max(0).indices": lambda t, lib: t.max(0).indices,
    "min(-1).values": lambda t, lib: t.min(-1).values,
    "argmax(0)": lambda t, lib: t.argmax(0),
    "argmin(-1)": lambda t, lib: t.argmin(-1),
    "cumsum(0)": lambda t, lib: t.cumsum(0),
    "cumprod(-1)": lambda t, lib: t.cumprod(-1),
    "cummax(0).values": lambda t, lib: t.cummax(0).values,
    "norm(dim=0)": lambda t, lib: t.norm(dim=0),
    "norm(1, 0)": lambda t, lib: t.norm(1, 0),
    "median(0).values": lambda t, lib: t.median(0).values,
    "median(0).indices": lambda t, lib: t.median(0).indices,
    "median()": lambda t, lib: t.median(),
    "sort(0).values": lambda t, lib: t.sort(0).values,
    "topk(1).values": lambda t, lib: t.topk(1).values,
    "kthvalue(1).values": lambda t, lib: t.kthvalue(1).values,
    "all(0)": lambda t, lib: (t > 0).all(0),
    "any(-1)": lambda t, lib: (t > 0).any(-1),
    "count_nonzero(0)": lambda t, lib: t.count_nonzero(0),
    "nansum(0)": lambda t, lib: t.nansum(0),
    "nanmean(0)": lambda t, lib: t.nanmean(0),
    "squeeze(0)": lambda t, lib: t.squeeze(0),
    "unsqueeze(-1)": lambda t, lib: t.unsqueeze(-1),
    "transpose(0, -1)": lambda t, lib: t.transpose(0, -1),
    "t()": lambda t, lib: t.t(),
    "select(0, 0)": lambda t, lib: t.select(0, 0),
    "outer": lambda t, lib: t.outer(t),
    "F.layer_norm(())": lambda t, lib: lib.nn.functional.layer_norm(t, ()),
    "F.interpolate": lambda t, lib: lib.nn.functional.interpolate(t, scale_factor=2.0),
    "F.cross_entropy": lambda t, lib: lib.nn.functional.cross_entropy(t, t * 0),
}


def _zero_dim_run(lib, op):
    """The op on ``tensor(0.7)`` (through ``* 1``, so it has a graph): shape, dtype, value and the
    gradient of its sum, or the error."""
    def run():
        x = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # var/std warn about zero degrees of freedom, both libraries
            out = op(x * 1, lib)
            grad = None
            if out.requires_grad:
                out.sum().backward()
                grad = x.grad.item()
        return tuple(out.shape), str(out.dtype), out.detach().numpy().tolist(), grad

    return _observe(run)


@pytest.mark.parametrize("name", list(ZERO_DIM_OPS))
def test_zero_dim_tensor_op_agrees_with_torch(name):
    torch = _torch()
    ours, theirs = _zero_dim_run(et, ZERO_DIM_OPS[name]), _zero_dim_run(torch, ZERO_DIM_OPS[name])
    assert _same(ours, theirs), (ours, theirs)


@pytest.mark.parametrize("dim", [1, -2])
def test_zero_dim_tensor_refuses_dims_beyond_zero_and_minus_one(dim):
    x = et.tensor(0.5)
    for op in (lambda: x.sum(dim), lambda: x.softmax(dim), lambda: x.flip(dim), lambda: x.amax(dim)):
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-1, 0\]"):
            op()


@pytest.mark.parametrize("method", ["sum", "mean", "nansum", "std", "var", "count_nonzero", "amax"])
def test_an_empty_dim_list_reduces_every_dim_as_in_torch(method):
    torch = _torch()
    data = np.arange(6.0).reshape(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = getattr(et.tensor(data), method)(())
        theirs = getattr(torch.tensor(data), method)(())
    assert tuple(ours.shape) == tuple(theirs.shape) == ()
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    assert tuple((et.tensor(data) > 2).all(()).shape) == tuple((torch.tensor(data) > 2).all(()).shape) == (2, 3)


def test_zero_dim_reductions_have_the_numerical_gradient():
    """float64 central differences, no torch needed."""
    x = et.tensor(0.3, dtype=et.float64, requires_grad=True)
    for fn in (lambda t: t.sum(0), lambda t: t.logsumexp(0), lambda t: t.norm(dim=-1), lambda t: t.prod(0),
               lambda t: et.nn.functional.gelu(t), lambda t: t.flip(0) * t, lambda t: t.cumprod(0)):
        assert et.autograd.gradcheck(fn, (x,))


# -------------------------------------------------------------------- median ----
def test_median_of_all_values_shares_the_gradient_among_ties_as_torch():
    """``median()`` returns no index: PyTorch's MedianBackward0 spreads the gradient evenly over
    the entries equal to the median (over the NaNs when the median is NaN)."""
    torch = _torch()
    for values in ([1.0, 2.0, 2.0, 2.0, 3.0], [4.0, 4.0], [1.0, float("nan"), 2.0, float("nan")], [[5.0, 1.0], [5.0, 9.0]]):
        seen = []
        for lib in (et, torch):
            x = lib.tensor(values, requires_grad=True)
            y = x.median()
            y.backward()
            seen.append((y.grad_fn.name(), y.item(), x.grad.tolist()))
        assert _same(seen[0], seen[1]), seen


@pytest.mark.parametrize("keepdim", [False, True])
def test_median_along_a_dim_sends_the_gradient_to_the_returned_index_only(keepdim):
    """Ties: which index PyTorch returns is not specified, but the gradient goes to that one
    entry (MedianBackward1), never shared."""
    x = et.tensor([[2.0, 1.0, 2.0, 2.0], [5.0, 5.0, 5.0, 0.0], [3.0, 3.0, 3.0, 3.0]], requires_grad=True)
    result = x.median(1, keepdim=keepdim)
    result.values.sum().backward()
    assert result.values.grad_fn.name() == "MedianBackward1"
    index = result.indices.reshape(-1).tolist()
    for row, i in enumerate(index):
        assert x[row, i].item() == result.values.reshape(-1)[row].item()
        expected = [0.0] * 4
        expected[i] = 1.0
        assert x.grad[row].tolist() == expected


def test_median_along_a_dim_without_ties_agrees_with_torch():
    torch = _torch()
    data = np.random.default_rng(3).permutation(24).reshape(2, 3, 4).astype(np.float64)
    for dim in (0, 1, -1):
        seen = []
        for lib in (et, torch):
            x = lib.tensor(data, requires_grad=True)
            r = x.median(dim)
            (r.values * lib.tensor(np.arange(r.values.numel(), dtype=np.float64).reshape(r.values.shape))).sum().backward()
            seen.append((r.values.tolist(), r.indices.tolist(), x.grad.tolist()))
        assert seen[0] == seen[1]


def test_median_errors_are_torch_errors():
    torch = _torch()
    cases = [lambda lib: lib.ones(0, 3).median(0), lambda lib: lib.tensor([True]).median(),
             lambda lib: lib.tensor(2.0).median(1), lambda lib: lib.ones(0, 3).median(1)]
    for case in cases:
        ours, theirs = (_observe(lambda lib=lib, case=case: (tuple(case(lib).values.shape),)) for lib in (et, torch))
        assert ours == theirs


def test_median_gradient_is_the_numerical_one():
    x = et.tensor(np.random.default_rng(4).permutation(12).reshape(3, 4).astype(np.float64), requires_grad=True)
    assert et.autograd.gradcheck(lambda t: t.median(), (x,))
    assert et.autograd.gradcheck(lambda t: t.median(1).values, (x,))


# ------------------------------------------- what a node saves: mutate an operand later ----
BINARY_OPS = {  # name: (operand shapes, op(lib, *operands))
    "add": (((3, 4), (3, 4)), lambda lib, a, b: a + b),
    "mul": (((3, 4), (4,)), lambda lib, a, b: a * b),
    "div": (((3, 4), (3, 4)), lambda lib, a, b: a / b),
    "pow": (((3, 4), (3, 4)), lambda lib, a, b: a ** b),
    "maximum": (((3, 4), (3, 4)), lambda lib, a, b: a.maximum(b)),
    "atan2": (((3, 4), (3, 4)), lambda lib, a, b: a.atan2(b)),
    "hypot": (((3, 4), (3, 4)), lambda lib, a, b: a.hypot(b)),
    "xlogy": (((3, 4), (3, 4)), lambda lib, a, b: a.xlogy(b)),
    "lerp": (((3, 4), (3, 4)), lambda lib, a, b: a.lerp(b, 0.3)),
    "where": (((3, 4), (3, 4)), lambda lib, a, b: lib.where(a > 1, a, b)),
    "mul_": (((3, 4), (3, 4)), lambda lib, a, b: (a * 1).mul_(b)),
    "div_": (((3, 4), (3, 4)), lambda lib, a, b: (a * 1).div_(b)),
    "addcmul": (((3, 4), (3, 4), (3, 4)), lambda lib, a, b, c: a.addcmul(b, c, value=0.5)),
    "addcdiv": (((3, 4), (3, 4), (3, 4)), lambda lib, a, b, c: a.addcdiv(b, c, value=0.5)),
    "addcmul_": (((3, 4), (3, 4), (3, 4)), lambda lib, a, b, c: (a * 1).addcmul_(b, c, value=0.5)),
    "addcdiv_": (((3, 4), (3, 4), (3, 4)), lambda lib, a, b, c: (a * 1).addcdiv_(b, c, value=0.5)),
    "addmm": (((3, 5), (3, 4), (4, 5)), lambda lib, a, b, c: a.addmm(b, c)),
    "linear": (((3, 4), (5, 4)), lambda lib, a, b: lib.nn.functional.linear(a, b)),
    "mse_loss": (((3, 4), (3, 4)), lambda lib, a, b: lib.nn.functional.mse_loss(a, b)),
}
MATMUL_SHAPES = [
    ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)), ((2, 3, 4), (4,)), ((4,), (2, 4, 5)),
    ((4,), (1, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((3, 4), (1, 1, 4, 5)), ((2, 3, 4), (2, 4, 5)),
    ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 5)), ((1, 3, 4), (2, 1, 4, 5)), ((2, 3, 4), (2, 1, 4, 5)),
    ((2, 3, 4), (2, 2, 4, 5)), ((2, 1, 3, 4), (2, 4, 5)), ((1, 2, 3, 4), (2, 1, 4, 5)), ((2, 2, 3, 4), (1, 2, 4, 5)),
    ((1, 1, 3, 4), (2, 2, 4, 5)), ((2, 2, 3, 4), (2, 2, 4, 5)),
]
for _a, _b in MATMUL_SHAPES:
    BINARY_OPS[f"matmul {_a}@{_b}"] = ((_a, _b), lambda lib, a, b: a @ b)


def _mutate_after(lib, shapes, op, needs_grad, mutated):
    """``op`` on operands (those in ``needs_grad`` computed from leaves), then ``mutated``
    changed in place, then backward: the leaves' gradients, or the error."""
    def run():
        rng = np.random.default_rng(0)
        leaves = [lib.tensor(rng.uniform(0.5, 2.0, s), requires_grad=r) for s, r in zip(shapes, needs_grad)]
        operands = [t * 1 if t.requires_grad else t.clone() for t in leaves]
        out = op(lib, *operands)
        operands[mutated].mul_(2)
        out.sum().backward()
        return [None if t.grad is None else np.round(t.grad.numpy(), 10).tolist() for t in leaves]

    return _observe(run)


@pytest.mark.parametrize("name", list(BINARY_OPS))
def test_changing_an_operand_after_the_op_breaks_backward_only_where_torch_does(name):
    """Every mix of operands needing a gradient, each operand changed in place after the op:
    PyTorch raises exactly where its node saved that operand itself (not a copy, not nothing)."""
    torch = _torch()
    shapes, op = BINARY_OPS[name]
    for needs_grad in itertools.product([False, True], repeat=len(shapes)):
        if not any(needs_grad):
            continue
        for mutated in range(len(shapes)):
            ours = _mutate_after(et, shapes, op, needs_grad, mutated)
            theirs = _mutate_after(torch, shapes, op, needs_grad, mutated)
            assert ours == theirs, (needs_grad, mutated, ours, theirs)


def test_a_matmul_operand_saved_as_a_copy_still_gets_its_second_derivative():
    """``(3, 4) @ (2, 4, 5)`` keeps a copy of the right operand (as PyTorch): create_graph
    still differentiates through it to the operand."""
    torch = _torch()
    rng = np.random.default_rng(5)
    a_data, b_data = rng.normal(size=(3, 4)), rng.normal(size=(2, 4, 5))
    seen = []
    for lib in (et, torch):
        a, b = lib.tensor(a_data, requires_grad=True), lib.tensor(b_data, requires_grad=True)
        (ga,) = lib.autograd.grad((a @ b).pow(2).sum(), a, create_graph=True)
        ga.sum().backward()
        seen.append(b.grad.numpy())
    np.testing.assert_allclose(seen[0], seen[1], rtol=1e-10)


def test_xlogy_agrees_with_torch_and_has_the_numerical_gradient():
    torch = _torch()
    x = np.array([0.0, 0.0, 1.5, -2.0, 0.0, 3.0])
    y = np.array([0.0, 2.0, 0.5, 4.0, float("nan"), float("nan")])
    ours, theirs = et.tensor(x).xlogy(et.tensor(y)), torch.tensor(x).xlogy(torch.tensor(y))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert _same(et.xlogy(2.0, et.tensor([3.0])).tolist(), torch.xlogy(2.0, torch.tensor([3.0])).tolist())
    rng = np.random.default_rng(6)
    a = et.tensor(rng.uniform(0.5, 2, (2, 3)), requires_grad=True)
    b = et.tensor(rng.uniform(0.5, 2, (2, 3)), requires_grad=True)
    assert et.autograd.gradcheck(lambda s, t: s.xlogy(t), (a, b))
    assert et.autograd.gradgradcheck(lambda s, t: s.xlogy(t), (a, b))


# ------------------------------------------------- allocations PyTorch refuses ----
# 2**50 elements (4 PiB and more) are beyond any address space: refused by the allocator on every machine
ALLOCATIONS = {
    "empty(2**50)": lambda lib: lib.empty(2**50),
    "zeros(2**50)": lambda lib: lib.zeros(2**50),
    "ones(2**50)": lambda lib: lib.ones(2**50),
    "full((2**50,), 1.0)": lambda lib: lib.full((2**50,), 1.0),
    "randn(2**50)": lambda lib: lib.randn(2**50),
    "rand(2**50)": lambda lib: lib.rand(2**50),
    "randint(0, 5, (2**50,))": lambda lib: lib.randint(0, 5, (2**50,)),
    "normal(size=(2**50,))": lambda lib: lib.normal(0.0, 1.0, size=(2**50,)),
    "arange(2**50)": lambda lib: lib.arange(2**50),
    "eye(2**25)": lambda lib: lib.eye(2**25),
    "new_empty(2**50)": lambda lib: lib.ones(2).new_empty(2**50),
    "randn(2**62)": lambda lib: lib.randn(2**62),
    "empty(2**40, 2**40)": lambda lib: lib.empty(2**40, 2**40),
    "zeros(2**62)": lambda lib: lib.zeros(2**62),
    "empty(-1)": lambda lib: lib.empty(-1),
    "ones(2, -3)": lambda lib: lib.ones(2, -3),
    "zeros(-1)": lambda lib: lib.zeros(-1),
    "randn(2, -3)": lambda lib: lib.randn(2, -3),
    "rand(-1)": lambda lib: lib.rand(-1),
    "full((-1,), 1.0)": lambda lib: lib.full((-1,), 1.0),
    "randint(0, 5, (-1,))": lambda lib: lib.randint(0, 5, (-1,)),
    "randperm(-1)": lambda lib: lib.randperm(-1),
    "eye(-1)": lambda lib: lib.eye(-1),
    "linspace(0, 1, -1)": lambda lib: lib.linspace(0, 1, -1),
    "nn.Linear(-1, 2)": lambda lib: lib.nn.Linear(-1, 2),
    "empty(2**63)": lambda lib: lib.empty(2**63),
}


@pytest.mark.parametrize("name", list(ALLOCATIONS))
def test_impossible_allocations_raise_torch_errors(name):
    """PyTorch's RuntimeError (not NumPy's MemoryError/ValueError), so code catching it catches ours;
    the message agrees up to the numbers PyTorch's allocator adds."""
    torch = _torch()

    def error(lib):
        try:
            ALLOCATIONS[name](lib)
        except Exception as e:  # noqa: BLE001 - the type and message are what is compared
            return type(e).__name__, str(e).splitlines()[0]
        return None

    ours, theirs = error(et), error(torch)
    assert theirs is not None and ours is not None
    assert ours[0] == theirs[0]
    if "can't allocate memory" in theirs[1]:
        assert "DefaultCPUAllocator: can't allocate memory: you tried to allocate" in ours[1]
    elif "Overflow when unpacking" in theirs[1]:  # PyTorch's line goes on with a C++ trace
        assert ours[1].startswith(theirs[1])
    else:
        assert ours[1] == theirs[1]


# ------------------------------------------------- Python ints beyond a dtype ----
BIG_INTS = [2**63, -2**63 - 1, 2**63 - 1, -2**63, 2**64, 10**30, 256, -129, -256, 2**31, 65536, 2**15]
INT_DTYPES = [None, "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "bool"]


def _made(lib, make):
    """dtype and values of the tensor, or the error type (first line of the message)."""
    try:
        t = make(lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e).splitlines()[0]
    return str(t.dtype), t.tolist()


@pytest.mark.parametrize("value", BIG_INTS)
def test_python_ints_out_of_range_are_refused_as_torch(value):
    """``torch.tensor([2**63])`` is PyTorch's ValueError "Overflow when unpacking long long" (it built a
    uint64 array whose dtype, repr and ``+ 1`` then raised); an int that does not fit a smaller
    integer dtype is its RuntimeError; float and bool targets convert; uint8 wraps down to -255."""
    torch = _torch()
    makers = [lambda lib: lib.tensor(value), lambda lib: lib.tensor([1, value]), lambda lib: lib.tensor([[1.5], [value]])]
    for name in INT_DTYPES[1:]:
        makers.append(lambda lib, name=name: lib.tensor([value], dtype=getattr(lib, name)))
    for name in ("int64", "int8", "uint8"):
        makers.append(lambda lib, name=name: lib.full((2,), value, dtype=getattr(lib, name)))
    for make in makers:
        assert _made(et, make) == _made(torch, make)
    assert _made(et, lambda lib: lib.tensor([value])) == _made(torch, lambda lib: lib.tensor([value]))


def test_no_uint64_tensor_from_python_ints():
    for data in ([2**63], [2**64 - 1], [1, 2**63], [[2**63]]):
        with pytest.raises(ValueError, match="Overflow when unpacking long long"):
            et.tensor(data)
    assert et.tensor([2**63], dtype=et.float64).tolist() == [2.0**63]
    assert et.tensor([-129], dtype=et.uint8).tolist() == [127]


# --- smaller gaps from the fuzzer's last note (issue 23) ---
@pytest.mark.parametrize("value", [2**63, 2**64 - 1, -2**63, 2**40, 300, 2**64, -2**63 - 1])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_a_python_int_operand_wraps_to_the_tensors_bits_as_in_torch(value, dtype):
    """``ones(2, dtype=long) + 2**63`` runs in PyTorch (the int wraps to int64 bits, then to the dtype's):
    it raised OverflowError here; beyond 64 bits both raise OverflowError."""
    torch = _torch()
    for op in (lambda t, v: t + v, lambda t, v: t * v, lambda t, v: v - t):
        def make(lib, op=op):
            return op(lib.ones(2, dtype=getattr(lib, dtype)), value)
        assert _made(et, make) == _made(torch, make)


def test_a_python_int_operand_wraps_without_torch():
    assert (et.ones(2, dtype=et.int64) + 2**63).tolist() == [-2**63 + 1] * 2
    assert (et.ones(2, dtype=et.uint8) + 300).tolist() == [45, 45]
    with pytest.raises(OverflowError, match="int too big to convert"):
        et.ones(2, dtype=et.int64) + 2**64


@pytest.mark.parametrize("name, kernel", [("rand", "check_uniform_bounds"), ("randn", "normal_kernel_cpu")])
@pytest.mark.parametrize("dtype, type_name", [(et.int64, "Long"), (et.uint8, "Byte"), (et.bool, "Bool")])
def test_rand_and_randn_refuse_integer_dtypes(name, kernel, dtype, type_name):
    """PyTorch has no kernel drawing uniform or normal integers: NotImplementedError (it returned zeros)."""
    with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'{type_name}\''):
        getattr(et, name)(2, dtype=dtype)


@pytest.mark.parametrize("sizes, message", [
    ((2**40, 2**30), r"Storage size calculation overflowed with sizes=\[1099511627776, 2147483648\]"),
    ((2**62,), "IntArrayRef contains an int that cannot be represented as a SymInt: -9223372036854775808"),
    ((2**20, 2**20), "DefaultCPUAllocator: can't allocate memory: you tried to allocate 8796093022208 bytes"),
    ((-1,), r"Trying to create tensor with negative dimension -2: \[-2\]"),
])
def test_repeat_too_large_raises_runtime_error(sizes, message):
    """It raised NumPy's MemoryError/ValueError; PyTorch: RuntimeError."""
    with pytest.raises(RuntimeError, match=message):
        et.ones(2).repeat(*sizes)


def test_once_differentiable_node_is_pytorchs_error_node():
    from edutorch.autograd.function import once_differentiable

    class Square(et.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = et.tensor([1.0, 2.0], requires_grad=True)
    y = Square.apply(x)
    (g,) = et.autograd.grad((y * y).sum(), x, create_graph=True)
    assert y.grad_fn.name() == "SquareBackward" and g.grad_fn.name() == "torch::autograd::Error"
    assert repr(g.grad_fn).startswith("<Error object at ")
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with"):
        g.sum().backward()


def test_deepcopy_of_a_leaf_copies_values_grad_version_and_attributes():
    import copy

    t = et.ones(2, requires_grad=True)
    with et.no_grad():
        t.add_(1)
    t.grad, t.note = et.ones(2), [1]
    c = copy.deepcopy(t)
    assert c.tolist() == [2.0, 2.0] and c.requires_grad and c.is_leaf and c._version == 1
    assert c.grad.tolist() == [1.0, 1.0] and c.note == [1] and c.note is not t.note
    c.data.zero_()
    assert t.tolist() == [2.0, 2.0]
