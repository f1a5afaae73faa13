"""Parity with real PyTorch: the same lambda runs on both libraries (tinygrad's
``test_ops`` idea) and values, gradients, ``grad_fn`` names, dtypes and error
messages must agree.  Skipped when PyTorch is not installed.
"""
import numpy as np
import pytest

import edutorch as et
from op_cases import sample, total

torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")


def _flat(out):
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


def _node_name(t, lib):
    if t.grad_fn is None:
        return None
    return type(t.grad_fn).__name__ if lib is torch else t.grad_fn.name()


def _run(lib, case, arrays, requires_grad):
    xs = [lib.tensor(a, requires_grad=requires_grad) for a in arrays]
    return xs, case.fn(lib, *xs)


def _assert_same_outputs(ours, theirs):
    ours, theirs = _flat(ours), _flat(theirs)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if isinstance(t, (tuple, list)):  # e.g. where(cond) returns a tuple
            _assert_same_outputs(o, t)
            continue
        assert str(o.dtype) == str(t.dtype)
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-7)
        assert _node_name(o, et) == _node_name(t, torch)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_grads_and_node_names_match_torch(op_case, dtype):
    rng = np.random.default_rng(3)
    arrays = [sample(s, op_case.domain, rng).astype(dtype) for s in op_case.shapes]
    xs_t, out_t = _run(torch, op_case, arrays, True)
    xs_e, out_e = _run(et, op_case, arrays, True)
    _assert_same_outputs(out_e, out_t)
    weights = [rng.standard_normal(tuple(o.shape)) for o in _flat(out_t)]
    total(out_t, [torch.tensor(w) for w in weights]).backward()
    total(out_e, [et.tensor(w) for w in weights]).backward()
    for x_e, x_t in zip(xs_e, xs_t):
        if x_t.grad is None:
            assert x_e.grad is None
            continue
        assert str(x_e.grad.dtype) == str(x_t.grad.dtype)
        tol = 1e-9 if dtype == "float64" else 1e-4
        np.testing.assert_allclose(x_e.grad.numpy(), x_t.grad.numpy(), rtol=tol, atol=tol)


def test_comparisons_and_logic_match_torch(compare_case):
    rng = np.random.default_rng(4)
    arrays = [sample(s, compare_case.domain, rng).astype("float32") for s in compare_case.shapes]
    _assert_same_outputs(_run(et, compare_case, arrays, False)[1], _run(torch, compare_case, arrays, False)[1])


# -- errors: same type, same message ----------------------------------------------------
ERRORS = {
    "mm shapes": lambda L: L.ones(2, 3) @ L.ones(4, 5),
    "mm method": lambda L: L.ones(2, 3).mm(L.ones(4, 5)),
    "mm dtype": lambda L: L.ones(2, 3) @ L.ones(3, 2, dtype=L.float64),
    "mm not matrix": lambda L: L.mm(L.ones(3), L.ones(3, 2)),
    "matmul 0-d": lambda L: L.tensor(1.0) @ L.ones(2),
    "dot sizes": lambda L: L.ones(3) @ L.ones(4),
    "mv sizes": lambda L: L.ones(2, 3) @ L.ones(4),
    "vm sizes": lambda L: L.ones(3) @ L.ones(4, 5),
    "3d@1d sizes": lambda L: L.ones(5, 2, 3) @ L.ones(4),
    "3d@2d sizes": lambda L: L.ones(5, 2, 3) @ L.ones(4, 6),
    "batched sizes": lambda L: L.ones(5, 2, 3) @ L.ones(5, 4, 6),
    "batch broadcast": lambda L: L.ones(5, 2, 3) @ L.ones(4, 3, 6),
    "bmm rank": lambda L: L.bmm(L.ones(2, 3), L.ones(3, 2)),
    "bmm sizes": lambda L: L.bmm(L.ones(2, 2, 3), L.ones(2, 4, 3)),
    "broadcast add": lambda L: L.ones(2, 3) + L.ones(4),
    "view": lambda L: L.ones(2, 3).view(4),
    "view infer": lambda L: L.ones(2, 3).view(-1, 4),
    "view two -1": lambda L: L.ones(2, 3).view(-1, -1),
    "view non-contiguous": lambda L: L.ones(2, 3).t().view(6),
    "reshape": lambda L: L.ones(2, 3).reshape(5),
    "expand": lambda L: L.ones(2, 3).expand(4, 3),
    "expand fewer dims": lambda L: L.ones(2, 3).expand(3),
    "dim range": lambda L: L.ones(2, 3).sum(2),
    "unsqueeze range": lambda L: L.ones(2, 3).unsqueeze(3),
    "transpose range": lambda L: L.ones(2, 3).transpose(0, 2),
    "t 3d": lambda L: L.ones(2, 3, 4).t(),
    "cat sizes": lambda L: L.cat([L.ones(2, 3), L.ones(2, 4)]),
    "cat ranks": lambda L: L.cat([L.ones(2, 3), L.ones(2, 3, 1)]),
    "cat empty": lambda L: L.cat([]),
    "cat 0-d": lambda L: L.cat([L.tensor(1.0), L.tensor(2.0)]),
    "stack sizes": lambda L: L.stack([L.ones(2, 3), L.ones(3, 2)]),
    "split sizes": lambda L: L.ones(5).split([2, 2]),
    "item": lambda L: L.ones(2).item(),
    "bool": lambda L: bool(L.ones(2)),
    "numpy grad": lambda L: L.ones(2, requires_grad=True).numpy(),
    "mean int": lambda L: L.tensor([1, 2]).mean(),
    "var int": lambda L: L.tensor([1, 2]).var(),
    "softmax int": lambda L: L.tensor([1, 2]).softmax(0),
    "log_softmax int": lambda L: L.tensor([1, 2]).log_softmax(0),
    "max empty": lambda L: L.ones(0).max(),
    "max dim empty": lambda L: L.ones(2, 0).max(1),
    "argmax empty": lambda L: L.ones(0).argmax(),
    "int negative pow": lambda L: L.tensor([1, 2]) ** -1,
    "leaf in-place": lambda L: L.ones(2, requires_grad=True).add_(1),
    "in-place cast": lambda L: L.ones(2, dtype=L.int64).add_(1.5),
    "in-place broadcast": lambda L: L.ones(3).add_(L.ones(2, 3)),
    "requires_grad int": lambda L: L.tensor([1, 2], requires_grad=True),
    "gather dtype": lambda L: L.ones(2, 2).gather(1, L.tensor([[0.0]])),
    "gather rank": lambda L: L.ones(2, 2).gather(1, L.tensor([0])),
    "masked_fill mask dtype": lambda L: L.ones(2).masked_fill(L.tensor([1, 0]), 0.0),
    "masked_fill value dims": lambda L: L.ones(2).masked_fill(L.tensor([True, False]), L.ones(2)),
    "where condition": lambda L: L.where(L.tensor([1, 0]), L.ones(2), L.zeros(2)),
    "clamp none": lambda L: L.ones(2).clamp(),
    "chunk zero": lambda L: L.ones(2).chunk(0),
    "narrow": lambda L: L.ones(4).narrow(0, 2, 3),
    "flatten args": lambda L: L.ones(2, 3, 4).flatten(2, 1),
    "repeat dims": lambda L: L.ones(2, 3).repeat(2),
    "len 0-d": lambda L: len(L.tensor(1.0)),
    "iter 0-d": lambda L: iter(L.tensor(1.0)),
    "bitwise float": lambda L: L.ones(2) & L.ones(2),
    "dot ranks": lambda L: L.dot(L.ones(2, 2), L.ones(2)),
    "requires_grad non-leaf": lambda L: setattr(L.ones(2, requires_grad=True) * 2, "requires_grad", False),
    "backward non-scalar": lambda L: (L.ones(2, requires_grad=True) * 2).backward(),
    "permute length": lambda L: L.ones(2, 3).permute(0),
    "permute duplicate": lambda L: L.ones(2, 3).permute(0, 0),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    fn = ERRORS[name]
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(Exception) as ours:
        fn(et)
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)
    assert str(ours.value) == str(theirs.value)


# -- dtype promotion --------------------------------------------------------------------
DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]
SCALARS = [True, 2, 2.5]


@pytest.mark.parametrize("left", DTYPES)
@pytest.mark.parametrize("right", DTYPES + ["0-d int64", "0-d float64"] + [repr(s) for s in SCALARS])
def test_binary_result_dtype_matches_torch(left, right):
    def build(lib):
        a = lib.ones(2, 2, dtype=getattr(lib, left))
        if right.startswith("0-d"):
            b = lib.tensor(1, dtype=getattr(lib, right.split()[1]))
        elif right in DTYPES:
            b = lib.ones(2, dtype=getattr(lib, right))
        else:
            b = eval(right)
        results = {}
        for op in ("add", "mul", "truediv", "sub"):
            try:
                results[op] = str(getattr(a, f"__{op}__")(b).dtype)
            except Exception as exc:  # e.g. bool - bool
                results[op] = type(exc).__name__
        results["eq"] = str((a == b).dtype)
        results["maximum"] = str(lib.maximum(a, b if not isinstance(b, (int, float)) else lib.tensor(b)).dtype)
        results["where"] = str(lib.where(a > 0, a, b).dtype)
        return results

    assert build(et) == build(torch)


@pytest.mark.parametrize("make", [
    lambda L: L.tensor([1, 2]).float(), lambda L: L.tensor([1.5]).double(), lambda L: L.tensor([1.5]).half(),
    lambda L: L.tensor([1.7, -1.7]).long(), lambda L: L.tensor([1.7]).int(), lambda L: L.tensor([0.0, 2.0]).bool(),
    lambda L: L.tensor([1, 2]).to(L.float64), lambda L: L.ones(2).to("cpu", L.int32),
    lambda L: L.ones(2).to(L.ones(1, dtype=L.float16)), lambda L: L.ones(2).type_as(L.ones(1, dtype=L.int64)),
    lambda L: L.tensor([1, 2]).sum(), lambda L: L.tensor([True, False]).sum(), lambda L: L.tensor([1, 2]).prod(),
    lambda L: L.tensor([1, 2]) / 2, lambda L: L.tensor([1, 2]) // 1 if L is None else L.tensor([3, 4]) / L.tensor([2, 2]),
    lambda L: L.tensor([1, 2]).exp(), lambda L: L.tensor([1, 2]).sqrt(), lambda L: L.tensor([1, 2]).sigmoid(),
    lambda L: L.tensor([1, 2]).abs(), lambda L: L.tensor([-1, 2]).clamp(0), lambda L: L.tensor([-1, 2]).clamp(0.5),
    lambda L: L.tensor([1, 2]) ** 2, lambda L: L.tensor([1, 2]) ** 0.5, lambda L: 2 ** L.tensor([1, 2]),
    lambda L: 2.0 ** L.tensor([1, 2]), lambda L: L.tensor([1, 2]).sign(), lambda L: L.tensor([1, 2]).sum(dtype=L.float64),
    lambda L: L.tensor([1, 2]).logsumexp(0), lambda L: L.tensor([[1, 2]]).max(1).indices,
    lambda L: L.cat([L.ones(2, dtype=L.int64), L.ones(2)]), lambda L: L.stack([L.ones(2, dtype=L.float64), L.ones(2)]),
    lambda L: L.tensor(3) * 0.5, lambda L: L.ones(2, dtype=L.float16) * L.tensor(2.0, dtype=L.float64),
])
def test_conversions_and_op_dtypes_match_torch(make):
    ours, theirs = make(et), make(torch)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.numpy().astype(float), theirs.numpy().astype(float), rtol=1e-3)


def test_max_dim_returns_named_pair_like_torch():
    data = [[1.0, 5.0], [3.0, 2.0]]
    for dim in (0, 1):
        ours, theirs = et.tensor(data).max(dim), torch.tensor(data).max(dim)
        assert repr(ours) == repr(theirs)
        assert ours.values.tolist() == theirs.values.tolist()
        assert ours.indices.tolist() == theirs.indices.tolist()
        values, indices = et.tensor(data).min(dim, keepdim=True)
        assert values.shape == torch.tensor(data).min(dim, keepdim=True).values.shape


def test_item_tolist_numpy_match_torch():
    data = [[1.5, -2.0], [0.25, 4.0]]
    ours, theirs = et.tensor(data), torch.tensor(data)
    assert ours.tolist() == theirs.tolist()
    assert ours[1, 0].item() == theirs[1, 0].item()
    assert type(et.tensor([3]).item()) is type(torch.tensor([3]).item())
    assert ours.numpy().dtype == theirs.numpy().dtype
    assert et.tensor(True).item() is torch.tensor(True).item()
    shared = ours.numpy()
    shared[0, 0] = 9.0
    assert ours[0, 0].item() == 9.0  # numpy() shares memory, as in PyTorch


def test_new_tensor_family_matches_torch():
    for lib_call in (
        lambda L, x: x.new_zeros(2, 3), lambda L, x: x.new_ones((2,)), lambda L, x: x.new_full((2,), 3),
        lambda L, x: x.new_tensor([1, 2]), lambda L, x: x.new_zeros(2, dtype=L.int64),
        lambda L, x: L.zeros_like(x), lambda L, x: L.ones_like(x, dtype=L.int32), lambda L, x: L.full_like(x, 7),
    ):
        ours = lib_call(et, et.ones(1, dtype=et.float64))
        theirs = lib_call(torch, torch.ones(1, dtype=torch.float64))
        assert str(ours.dtype) == str(theirs.dtype) and ours.tolist() == theirs.tolist()


INPLACE = {
    "abs_": lambda t: t.abs_(), "clamp_": lambda t: t.clamp_(0.3, 2.5), "relu_": lambda t: t.relu_(),
    "neg_": lambda t: t.neg_(), "exp_": lambda t: t.exp_(), "sqrt_": lambda t: t.abs_().sqrt_(),
    "log_": lambda t: t.abs_().log_(), "mul_": lambda t: t.mul_(2), "pow_": lambda t: t.pow_(2),
    "sigmoid_": lambda t: t.sigmoid_(), "tanh_": lambda t: t.tanh_(), "clamp_min_": lambda t: t.clamp_min_(0.1),
    "masked_fill_": lambda t: t.masked_fill_(t > 0.2, 0.5), "sub_": lambda t: t.sub_(1, alpha=0.5),
    "div_": lambda t: t.div_(2), "lerp_": lambda t: t.lerp_(t.detach() * 0 + 1, 0.25),
    "addcmul_": lambda t: t.addcmul_(t.detach().clone(), t.detach().clone(), value=0.5),
    "addcdiv_": lambda t: t.addcdiv_(t.detach().clone(), t.detach() ** 2 + 1, value=2), "add_": lambda t: t.add_(t.detach()), "chain": lambda t: t.mul_(3).add_(1).clamp_(max=2).abs_(),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_variants_match_torch(name):
    def run(lib):
        x = lib.tensor([[-1.5, 0.5, 2.0], [3.0, -0.25, 1.0]], requires_grad=True)
        y = x * 1
        assert INPLACE[name](y) is y
        node = type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name()
        y.backward(lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]))
        return node, y.detach().numpy().copy(), x.grad.numpy().copy(), y._version

    (n1, v1, g1, ver1), (n2, v2, g2, ver2) = run(et), run(torch)
    assert n1 == n2 and ver1 == ver2
    np.testing.assert_allclose(v1, v2, rtol=1e-5)
    np.testing.assert_allclose(g1, g2, rtol=1e-4, atol=1e-6)


def test_setitem_and_fill_node_names_match_torch():
    def run(lib):
        base = lib.ones(3, 4, requires_grad=True)
        out = []
        for op in (lambda t: t.__setitem__(0, 2.0), lambda t: t.__setitem__([0, 2], 2.0),
                   lambda t: t.__setitem__(t > 1, 0.0), lambda t: t.fill_(1.0), lambda t: t.zero_(),
                   lambda t: t.copy_(lib.zeros(4)), lambda t: t.scatter_(1, lib.tensor([[0], [1], [2]]), 3.0)):
            y = base * 1
            op(y)
            out.append(type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name())
        return out

    assert run(et) == run(torch)


def test_inplace_on_a_view_updates_the_base_graph_like_torch():
    """``y[:, 1].mul_(3)`` changes ``y``: its gradient must see it (CopySlices)."""
    def run(lib):
        out = []
        w = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            w[0].mul_(2)
        out.append(str(info.value))
        y = w * 1
        v = y[:, 1]
        v.mul_(3)
        out += [type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name(), y._version, v._version]
        (y * y).sum().backward()
        out.append(w.grad.tolist())
        b, x = lib.zeros(2, 3), lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b[0].copy_(x)  # a plain buffer becomes part of the graph
        (b * 2).sum().backward()
        out.append(x.grad.tolist())
        z = w * 1
        row = z[1]
        row[0:2].zero_()  # a view of a view
        z.sum().backward()
        out += [w.grad.tolist(), z.tolist()]
        return out

    assert run(et) == run(torch)


def test_basic_indexing_returns_views_that_write_through_like_torch():
    def run(lib):
        x = lib.zeros(2, 3)
        x[0, 1].fill_(3)  # even a single element is a view
        x[1][2] += 1
        x[1, ..., 0].add_(5)
        x[:, 0].mul_(2)
        return x.tolist(), x._version

    assert run(et) == run(torch)
