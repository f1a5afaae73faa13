"""Views and in-place ops, every kind against PyTorch (issue 23, the differential fuzzer's findings).

Every view kind, written through by every kind of in-place op, on a base in
each situation (a non-leaf, a leaf that requires grad, a plain tensor that
receives grad-requiring data): edutorch must give PyTorch's values, gradients
and ``grad_fn`` names, or raise PyTorch's error.  The regression tests below
it are the fuzzer's findings, one each; those that need no torch check the
values PyTorch gives, written out.
"""
import numpy as np
import pytest

import edutorch as et
from edutorch.autograd import gradcheck

def _torch():
    """Real PyTorch for a parity test (the other tests run without it)."""
    return pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")


def assert_like_torch(program):
    """``program(edutorch)`` gives what ``program(torch)`` gives (or raises as it does)."""
    torch = _torch()
    assert_same(outcome(et, program), outcome(torch, program))


def outcome(lib, program):
    """``program(lib)``'s result as plain data, or ``(error type, first line of the message)``."""
    try:
        return program(lib)
    except Exception as err:  # noqa: BLE001 - the error itself is what is compared
        return type(err).__name__, str(err).split("\n")[0]


def assert_same(ours, theirs):
    """Same error, or the same nested lists / numbers / names (numbers to rounding)."""
    assert type(ours) is type(theirs), (ours, theirs)
    if isinstance(theirs, dict):
        assert ours.keys() == theirs.keys()
        for key in theirs:
            assert_same(ours[key], theirs[key])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), (ours, theirs)
        for mine, their in zip(ours, theirs):
            assert_same(mine, their)
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12)
    else:
        assert ours == theirs


def node_name(t):
    """``grad_fn``'s name without PyTorch's C++ namespace (``torch::autograd::CopySlices``)."""
    return None if t.grad_fn is None else t.grad_fn.name().replace("torch::autograd::", "")


def grad_list(t):
    return None if t.grad is None else t.grad.tolist()


# -- the sweep: view kind x in-place op x base situation ------------------------------------
# Each view is taken of a (3, 4) float64 base.
VIEW_KINDS = {
    "view": lambda a: a.view(4, 3),
    "view_as": lambda a: a.view_as(a.new_zeros(2, 6)),
    "reshape_as_view": lambda a: a.reshape(12),
    "flatten": lambda a: a.flatten(),
    "transpose": lambda a: a.transpose(0, 1),
    "t": lambda a: a.t(),
    "T": lambda a: a.T,
    "mT": lambda a: a.mT,
    "permute": lambda a: a.permute(1, 0),
    "movedim": lambda a: a.movedim(0, 1),
    "narrow": lambda a: a.narrow(1, 1, 2),
    "select": lambda a: a.select(0, 1),
    "index_int": lambda a: a[2],
    "index_0d": lambda a: a[1, 2],
    "slice_steps": lambda a: a[::2, 1::2],
    "slice_of_view": lambda a: a.view(12)[3:9:2],
    "slice_then_t": lambda a: a[1:].t(),
    "ellipsis": lambda a: a[...],
    "diagonal": lambda a: a.diagonal(),
    "diagonal_offset": lambda a: a.diagonal(1),
    "diagonal_dims_swapped": lambda a: a.diagonal(-1, 1, 0),
    "diagonal_of_unsqueezed": lambda a: a.unsqueeze(0).diagonal(0, 1, 2),
    "expand_same_shape": lambda a: a.expand(3, 4),
    "expand_new_dim_of_1": lambda a: a.expand(1, 3, 4),
    "expand_broadcast": lambda a: a[:1].expand(3, 4),
    "unsqueeze": lambda a: a.unsqueeze(1),
    "unsqueeze_squeeze": lambda a: a.unsqueeze(0).squeeze(0),
    "squeeze_dim": lambda a: a[None].squeeze(0),
    "unfold": lambda a: a.unfold(1, 2, 2),
    "unflatten": lambda a: a.flatten().unflatten(0, (6, 2)),
    "split": lambda a: a.split(2)[0],
    "chunk": lambda a: a.chunk(2, 1)[1],
    "unbind": lambda a: a.unbind(1)[2],
}

INPLACE_OPS = {
    "mul_": lambda lib, v, c: v.mul_(c),
    "add_": lambda lib, v, c: v.add_(c, alpha=2),
    "sigmoid_": lambda lib, v, c: v.sigmoid_(),
    "copy_": lambda lib, v, c: v.copy_(c * 3),
    "zero_": lambda lib, v, c: v.zero_(),
    "setitem": lambda lib, v, c: v.__setitem__(..., c),
    "masked_setitem": lambda lib, v, c: v.__setitem__(v.detach() > 0.3, 7.0),
}

BASES = ["non_leaf", "leaf_requiring_grad", "plain_receives_grad"]


def _sweep(lib, view, op, base):
    x = lib.tensor(np.linspace(-1.0, 1.3, 12).reshape(3, 4), requires_grad=True)
    a = {"non_leaf": lambda: x * 1, "leaf_requiring_grad": lambda: x,
         "plain_receives_grad": lambda: x.detach().clone()}[base]()
    v = VIEW_KINDS[view](a)
    w = lib.tensor(np.linspace(0.5, 2.0, v.numel()).reshape(v.shape), requires_grad=True)
    INPLACE_OPS[op](lib, v, w)
    result = {"a": a.tolist(), "v": v.tolist(), "a_node": node_name(a), "v_node": node_name(v),
              "requires_grad": [a.requires_grad, v.requires_grad]}
    weights = lib.arange(1.0, 13.0, dtype=lib.float64).reshape(3, 4)
    loss = (a * weights).sum() + (v * v).sum()
    if loss.requires_grad:
        loss.backward()
    result["x_grad"], result["w_grad"] = grad_list(x), grad_list(w)
    return result


# (writing one value through an expand view that repeats elements, with no graph, fills the
# shared memory as in PyTorch: ``zero_`` and a masked write included)
SWEEP = [(view, op, base) for view in VIEW_KINDS for op in INPLACE_OPS for base in BASES]


@pytest.mark.parametrize("view,op,base", SWEEP, ids=["-".join(case) for case in SWEEP])
def test_every_view_kind_written_in_place_matches_torch(view, op, base):
    assert_like_torch(lambda lib: _sweep(lib, view, op, base))


def test_overlapping_unfold_windows_are_refused_not_memory_order():
    """PyTorch writes through overlapping windows in memory order (``arange(5).unfold(0, 3, 1).mul_(2)``
    gives ``[0, 4, 16, 12, 8]``): a result that depends on the kernel.  Refused here, with
    the error PyTorch gives for an ``expand`` view."""
    x = et.arange(5.0)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        x.unfold(0, 3, 1).mul_(2)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


# -- diagonal(): the fuzzer's first finding ----------------------------------------------------
def _diagonal_program(lib, op):
    x = lib.arange(9.0, dtype=lib.float64).reshape(3, 3).requires_grad_()
    W = lib.arange(9.0, dtype=lib.float64).reshape(3, 3) + 1
    w = lib.tensor([10.0, 20.0, 30.0], dtype=lib.float64)
    a = x * 1
    d = a.diagonal()
    getattr(d, op)(*((3,) if op == "mul_" else ()))
    ((a * W).sum() + (d * w).sum()).backward()
    return x.grad.tolist(), node_name(a), node_name(d)


def test_in_place_on_a_diagonal_view_reaches_the_base():
    grad, base_node, view_node = _diagonal_program(et, "mul_")
    assert grad[0][0] == 33.0  # 3 * W[0,0] + 3 * w[0]: the product was 31 before the fix
    assert np.diag(grad).tolist() == [33.0, 75.0, 117.0]
    assert (base_node, view_node) == ("CopySlices", "AsStridedBackward0")


@pytest.mark.parametrize("op", ["mul_", "sigmoid_"])
def test_in_place_on_a_diagonal_view_matches_torch(op):
    assert_like_torch(lambda lib: _diagonal_program(lib, op))


def test_diagonal_of_a_leaf_requiring_grad_refuses_in_place():
    x = et.ones(3, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used"):
        x.diagonal().add_(10)
    assert x.tolist() == [[1.0] * 3] * 3


def test_diagonal_of_a_plain_tensor_receives_grad():
    w = et.tensor(1.0, requires_grad=True)
    c = et.zeros(2, 2)
    c.diagonal().add_(w)
    assert c.requires_grad and node_name(c) == "CopySlices"
    c.sum().backward()
    assert w.grad.item() == 2.0


# -- retain_grad() then an in-place op --------------------------------------------------------
def _retain_program(lib):
    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    c = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
    a = x * 1
    a.retain_grad()
    a.sin_()
    (a * c).sum().backward()
    return a.grad.tolist(), x.grad.tolist(), a.retains_grad


def test_retained_grad_is_the_gradient_of_the_new_value():
    a_grad, x_grad, retains = _retain_program(et)
    assert a_grad == [1.0, 2.0, 3.0]  # d(sum(a * c))/da for the new a: c (it was c * cos(x))
    np.testing.assert_allclose(x_grad, np.cos([1.0, 2.0, 3.0]) * [1.0, 2.0, 3.0])
    assert retains


def _retain_on_view_program(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
    a = x * 1
    v = a[0]
    v.retain_grad()
    a.retain_grad()
    v.mul_(5)
    (a * a).sum().backward()
    return grad_list(a), grad_list(v), x.grad.tolist()


@pytest.mark.parametrize("program", [_retain_program, _retain_on_view_program])
def test_retain_grad_through_in_place_matches_torch(program):
    assert_like_torch(program)


def test_hook_registered_before_in_place_sees_the_old_value_gradient():
    x = et.ones(3, requires_grad=True)
    a = x * 1
    seen = []
    a.register_hook(lambda g: seen.append(g.tolist()))
    a.mul_(2)
    a.sum().backward()
    assert seen == [[2.0, 2.0, 2.0]]  # PyTorch keeps such a hook on the old node


# -- unbind() returns views ---------------------------------------------------------------------
def test_unbind_outputs_share_memory_both_ways():
    x = et.zeros(2, 3)
    rows = x.unbind(0)
    rows[0].add_(1)
    x[1, 0] = 5
    assert x.tolist() == [[1.0, 1.0, 1.0], [5.0, 0.0, 0.0]]
    assert rows[1].tolist() == [5.0, 0.0, 0.0]
    assert rows[0]._version == x._version == 2


def _unbind_program(lib):
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64, requires_grad=True)
    a = x * 1
    rows = a.unbind(0)
    names = [node_name(r) for r in rows]
    (rows[0] * rows[1]).sum().backward()
    return names, x.grad.tolist()


def _unbind_base_changed(lib):
    a = lib.ones(2, 3, dtype=lib.float64, requires_grad=True) * 1
    rows = a.unbind(0)
    a.mul_(2)
    return (rows[1] * 3).tolist()


@pytest.mark.parametrize("program", [_unbind_program, _unbind_base_changed])
def test_unbind_matches_torch(program):
    assert_like_torch(program)


# -- a view taken before its base received grad-requiring data --------------------------------
STALE_VIEWS = {
    "copy_": lambda b, w: b.copy_(w),
    "setitem": lambda b, w: b.__setitem__(0, w[0]),
    "add_": lambda b, w: b.add_(w),
}


def _stale_view(lib, how):
    w = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    b = lib.zeros(3, dtype=lib.float64)
    v = b[:2]
    STALE_VIEWS[how](b, w)
    state = [v.requires_grad, node_name(v), v.tolist()]
    (v * lib.tensor([5.0, 7.0], dtype=lib.float64)).sum().backward()
    return state, w.grad.tolist()


def test_older_view_of_a_plain_tensor_follows_its_new_graph():
    (requires_grad, name, values), grad = _stale_view(et, "copy_")
    assert requires_grad and name == "AsStridedBackward0" and values == [1.0, 2.0]
    assert grad == [5.0, 7.0, 0.0]


@pytest.mark.parametrize("how", sorted(STALE_VIEWS))
def test_older_view_of_a_plain_tensor_matches_torch(how):
    assert_like_torch(lambda lib: _stale_view(lib, how))


# -- writes whose source and target share memory -----------------------------------------------
OVERLAPS = {
    "index_put_from_itself": lambda lib: _set(lib.arange(3.0), [0, -1], slice(None, 2)),
    "index_put_whole": lambda lib: _set(lib.arange(3.0), [0, 1, 2], slice(None)),
    "mask_put_from_itself": lambda lib: _set(lib.arange(4.0), lib.tensor([True, False, True, False]), slice(0, 2)),
    "slice_from_shifted_slice": lambda lib: _set(lib.arange(4.0), slice(1, 3), slice(0, 2)),
    "copy_partial": lambda lib: (lambda t: (t[:2].copy_(t[1:3]), t.tolist())[1])(lib.arange(4.0)),
    "add_shifted": lambda lib: (lambda t: (t[1:].add_(t[:-1]), t.tolist())[1])(lib.arange(4.0)),
    "mul_shifted_no_grad": lambda lib: (lambda t: (t[1:].mul_(t[:-1]), t.tolist())[1])(lib.arange(1.0, 5.0)),
    "add_broadcast_row": lambda lib: (lambda t: (t.add_(t[0]), t.tolist())[1])(lib.arange(9.0).view(3, 3)),
    "add_transposed": lambda lib: (lambda t: (t.add_(t.t()), t.tolist())[1])(lib.arange(9.0).view(3, 3)),
    "addcmul_part": lambda lib: (lambda t: (t.addcmul_(t[:1], t), t.tolist())[1])(lib.arange(4.0)),
    "row_plus_its_element": lambda lib: (lambda t: (t[0].add_(t[0, 0]), t.tolist())[1])(lib.arange(9.0).view(3, 3)),
    # allowed: the same elements, or disjoint ones
    "same_slice": lambda lib: _set(lib.arange(3.0), slice(0, 2), slice(0, 2)),
    "copy_itself": lambda lib: (lambda t: (t.copy_(t), t.tolist())[1])(lib.arange(3.0)),
    "add_itself": lambda lib: (lambda t: (t.add_(t), t.tolist())[1])(lib.arange(3.0)),
    "disjoint_halves": lambda lib: _set(lib.arange(4.0), slice(0, 2), slice(2, 4)),
    "row_from_other_row": lambda lib: _set(lib.arange(6.0).view(2, 3), 0, 1),
    "column_from_other_column": lambda lib: _set(lib.arange(6.0).view(2, 3), (slice(None), 0), (slice(None), 1)),
    "index_put_from_a_copy": lambda lib: _set(lib.arange(3.0), [0, -1], [1, 2]),
    "copy_flipped": lambda lib: (lambda t: (t.copy_(t.flip(0)), t.tolist())[1])(lib.arange(4.0)),
}


def _set(t, target, source):
    t[target] = t[source]
    return t.tolist()


@pytest.mark.parametrize("name", sorted(OVERLAPS))
def test_overlapping_writes_match_torch(name):
    assert_like_torch(OVERLAPS[name])


def test_self_overlapping_index_put_is_refused():
    t = et.arange(3.0)
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor refer "
                                           "to a single memory location"):
        t[[0, -1]] = t
    assert t.tolist() == [0.0, 1.0, 2.0]


def test_overlap_pytorch_leaves_to_memory_order_is_refused():
    """``m[:, 1:] = m[:, :-1]``: PyTorch does not check non-dense tensors and copies element by
    element (its result smears the first column); NumPy would copy first.  Neither is an
    answer to teach: refused, with PyTorch's error for the dense case."""
    m = et.arange(9.0).view(3, 3)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        m[:, 1:] = m[:, :-1]
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        m.mul_(m[:, :1])  # each row times its first element, which the row's first write changes
    assert m.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]


# -- a stale split/chunk output used in forward --------------------------------------------------
STALE_SPLITS = {
    "split_base_changed": lambda lib, a: (lambda p: (a.mul_(2), p[0] * 3))(a.split(2)),
    "chunk_base_changed": lambda lib, a: (lambda p: (a.add_(1), p[1].sum()))(a.chunk(2)),
    "split_sibling_changed_through_base_view": lambda lib, a: (lambda p: (a[0:1].mul_(2), p[1] * 3))(a.split(2)),
    "unbind_base_changed": lambda lib, a: (lambda p: (a.mul_(2), p[0] + 1))(a.unbind(0)),
    "split_in_place_on_output": lambda lib, a: a.split(2)[1].mul_(2),
    "split_no_grad_use_is_fine": lambda lib, a: (lambda p: (a.mul_(2), p[0].detach().tolist()))(a.split(2)),
}


def _stale_split(lib, name):
    x = lib.ones(4, 2, dtype=lib.float64, requires_grad=True)
    a = x * 1
    out = STALE_SPLITS[name](lib, a)
    return out[1] if isinstance(out[1], list) else "no error"


@pytest.mark.parametrize("name", sorted(STALE_SPLITS))
def test_stale_split_output_matches_torch(name):
    assert_like_torch(lambda lib: _stale_split(lib, name))


def test_stale_split_output_is_refused_when_used():
    a = et.ones(4, requires_grad=True) * 1
    first = a.split(2)[0]
    a.mul_(2)
    with pytest.raises(RuntimeError, match="Output 0 of Split is a view and its base or another view of its base "
                                           "has been modified inplace"):
        first * 3


# -- a[i] = <a view of a> -------------------------------------------------------------------
SELF_WRITES = {
    "row_from_row": lambda a: a.__setitem__(0, a[1]),
    "row_from_leading_1_slice": lambda a: a.__setitem__(0, a[2:3]),
    "row_from_flipped_row": lambda a: a.__setitem__(0, a[2].flip(0)),
    "column_from_column": lambda a: a.__setitem__((slice(None), 0), a[:, 2]),
    "row_from_itself": lambda a: a.__setitem__(1, a[1]),
    "row_from_transposed": lambda a: a.__setitem__(2, a.t()[1][:2].repeat(2)[:3]),
}


def _self_write(lib, name):
    x = lib.arange(9.0, dtype=lib.float64).reshape(3, 3).requires_grad_()
    a = x * 1
    SELF_WRITES[name](a)
    (a * a).sum().backward()
    return a.tolist(), x.grad.tolist(), node_name(a)


@pytest.mark.parametrize("name", sorted(SELF_WRITES))
def test_writing_a_view_of_a_tensor_into_it_matches_torch(name):
    assert_like_torch(lambda lib: _self_write(lib, name))


def test_row_from_a_leading_1_slice_backward_runs():
    values, grad, name = _self_write(et, "row_from_leading_1_slice")  # was "CopySlices returned an invalid gradient"
    assert values[0] == values[2] == [6.0, 7.0, 8.0] and name == "CopySlices"
    assert grad == [[0.0, 0.0, 0.0], [6.0, 8.0, 10.0], [24.0, 28.0, 32.0]]


# -- expand() that repeats nothing can be written ----------------------------------------------
EXPANDS = {
    "same_shape": lambda lib: lib.arange(3.0).expand(3),
    "same_shape_2d": lambda lib: lib.arange(3.0).view(3, 1).expand(3, 1),
    "new_dim_of_1": lambda lib: lib.arange(3.0).expand(1, 3),
    "minus_one": lambda lib: lib.arange(3.0).view(1, 3).expand(-1, 3),
    "broadcast": lambda lib: lib.arange(3.0).expand(2, 3),
    "broadcast_size_1_dim": lambda lib: lib.arange(3.0).view(3, 1).expand(3, 2),
}


def _write_expand(lib, name):
    e = EXPANDS[name](lib)
    e.add_(1)
    e[0] = 7
    return e.tolist()


@pytest.mark.parametrize("name", sorted(EXPANDS))
def test_writes_to_expand_match_torch(name):
    assert_like_torch(lambda lib: _write_expand(lib, name))


def test_same_shape_expand_writes_its_base():
    x = et.arange(3.0)
    x.expand(3).add_(1)
    assert x.tolist() == [1.0, 2.0, 3.0]


# -- in-place shape ops and index_add ---------------------------------------------------------
SHAPE_INPLACE = {
    "unsqueeze_": lambda t: t.unsqueeze_(1),
    "unsqueeze_neg": lambda t: t.unsqueeze_(-1),
    "squeeze_": lambda t: t.unsqueeze_(0).squeeze_(),
    "squeeze_dim": lambda t: t.unsqueeze_(0).squeeze_(0),
    "squeeze_dims": lambda t: t.unsqueeze_(0).unsqueeze_(2).squeeze_((0, 2)),
    "squeeze_not_1": lambda t: t.squeeze_(0),
    "t_": lambda t: t.t_(),
    "transpose_": lambda t: t.transpose_(0, 1),
    "swapdims_": lambda t: t.swapdims_(1, 0),
    "unsqueeze_out_of_range": lambda t: t.unsqueeze_(5),
}


def _shape_inplace(lib, name, base):
    x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    t = {"non_leaf": lambda: x * 1, "leaf": lambda: x, "plain": lambda: x.detach().clone()}[base]()
    older = t[0]
    out = SHAPE_INPLACE[name](t)
    state = [out is t, list(t.shape), node_name(t), t._version, node_name(older)]
    if t.requires_grad:
        (t * lib.arange(1.0, 7.0, dtype=lib.float64).reshape(t.shape)).sum().backward()
        (older * 2).sum()
    return state, grad_list(x)


@pytest.mark.parametrize("base", ["non_leaf", "leaf", "plain"])
@pytest.mark.parametrize("name", sorted(SHAPE_INPLACE))
def test_in_place_shape_ops_match_torch(name, base):
    assert_like_torch(lambda lib: _shape_inplace(lib, name, base))


def test_t_of_a_3d_tensor_is_refused():
    with pytest.raises(RuntimeError, match=r"t_\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        et.zeros(2, 3, 4).t_()


def test_index_add_gradcheck():
    x = et.tensor(np.random.default_rng(0).standard_normal((4, 3)), requires_grad=True)
    src = et.tensor(np.random.default_rng(1).standard_normal((4, 5)), requires_grad=True)
    index = et.tensor([0, 2, 2, 1, 0])
    assert gradcheck(lambda a, s: a.index_add(1, index, s, alpha=-1.5), (x, src))
    assert gradcheck(lambda a, s: (a * 1).index_add_(1, index, s), (x, src))


def test_index_add_values():
    x = et.zeros(3, 2)
    x.index_add_(0, et.tensor([0, 2, 0]), et.ones(3, 2), alpha=2)
    assert x.tolist() == [[4.0, 4.0], [0.0, 0.0], [2.0, 2.0]]


INDEX_ADDS = {
    "rows": lambda lib, x, s: lib.index_add(x, 0, lib.tensor([0, 2, 0]), s),
    "columns_alpha": lambda lib, x, s: x.index_add(1, lib.tensor([1, 1]), s[:2].t(), alpha=3),
    "in_place": lambda lib, x, s: (x * 1).index_add_(0, lib.tensor([2, 1, 1]), s, alpha=-2),
    "negative_index": lambda lib, x, s: x.index_add(0, lib.tensor([0, -1, 0]), s),
    "index_too_large": lambda lib, x, s: x.index_add(0, lib.tensor([0, 3, 0]), s),
    "float_index": lambda lib, x, s: x.index_add(0, lib.tensor([0.0, 1.0, 0.0]), s),
    "index_2d": lambda lib, x, s: x.index_add(0, lib.tensor([[0, 1, 0]]), s),
    "count_mismatch": lambda lib, x, s: x.index_add(0, lib.tensor([0, 1]), s),
    "slice_shape_mismatch": lambda lib, x, s: x.index_add(0, lib.tensor([0, 1, 2]), s[:, :1]),
    "dtype_mismatch": lambda lib, x, s: x.index_add(0, lib.tensor([0, 1, 2]), s.float()),
    "leaf_in_place": lambda lib, x, s: x.index_add_(0, lib.tensor([0, 1, 2]), s),
}


def _index_add(lib, name):
    x = lib.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    s = lib.tensor(np.arange(1.0, 7.0).reshape(3, 2), requires_grad=True)
    out = INDEX_ADDS[name](lib, x, s)
    (out * lib.arange(1.0, out.numel() + 1, dtype=lib.float64).reshape(out.shape)).sum().backward()
    return out.tolist(), node_name(out), grad_list(x), grad_list(s)


@pytest.mark.parametrize("name", sorted(INDEX_ADDS))
def test_index_add_matches_torch(name):
    assert_like_torch(lambda lib: _index_add(lib, name))


def test_unfold_gradcheck():
    x = et.tensor(np.random.default_rng(2).standard_normal((3, 7)), requires_grad=True)
    assert gradcheck(lambda a: a.unfold(1, 3, 2), (x,))
    assert gradcheck(lambda a: a.unfold(1, 3, 1), (x,))  # overlapping windows: gradients add up


UNFOLDS = {
    "windows": lambda t: t.unfold(1, 3, 2),
    "overlapping": lambda t: t.unfold(1, 3, 1),
    "dim0": lambda t: t.unfold(0, 2, 1),
    "size_0": lambda t: t.unfold(1, 0, 1),
    "0d": lambda t: t[0, 0].unfold(0, 1, 1),
    "step_0": lambda t: t.unfold(1, 2, 0),
    "too_large": lambda t: t.unfold(1, 8, 1),
    "negative_size": lambda t: t.unfold(1, -1, 1),
}


def _unfold(lib, name):
    x = lib.tensor(np.arange(14.0).reshape(2, 7), requires_grad=True)
    out = UNFOLDS[name](x * 1)
    (out * lib.arange(1.0, out.numel() + 1, dtype=lib.float64).reshape(out.shape)).sum().backward()
    return out.tolist(), list(out.shape), node_name(out), x.grad.tolist()


@pytest.mark.parametrize("name", sorted(UNFOLDS))
def test_unfold_matches_torch(name):
    assert_like_torch(lambda lib: _unfold(lib, name))


# -- error types of bad writes and slices --------------------------------------------------------
BAD_WRITES = {
    "slice_too_short": lambda lib, t: t.__setitem__(slice(0, 3), lib.ones(2)),
    "slice_broadcast_mismatch": lambda lib, t: t.__setitem__(slice(None), lib.ones(4, 3)),
    "row_too_many_dims": lambda lib, t: t.__setitem__(0, lib.ones(2, 3)),
    "row_leading_1s": lambda lib, t: t.__setitem__(0, lib.ones(1, 1, 3)),
    "mask_count": lambda lib, t: t.__setitem__(lib.tensor([True, False, True, False]), lib.ones(3, 3)),
    "int_list_count": lambda lib, t: t.__setitem__([0, 1], lib.ones(3, 3)),
    "int_list_broadcast": lambda lib, t: t.__setitem__([0, 1], lib.ones(1, 3)),
    "list_value": lambda lib, t: t.__setitem__(0, [1.0, 2.0, 3.0]),
    "int_value_into_float": lambda lib, t: t.__setitem__(0, 2),
    "float_into_long": lambda lib, t: t.long().__setitem__(0, lib.tensor([1.7, 2.2, 3.9])),
    "copy_mismatch": lambda lib, t: t.copy_(lib.ones(3, 4)),
    "copy_more_dims": lambda lib, t: t.copy_(lib.ones(2, 4, 3)),
    "copy_broadcast": lambda lib, t: t.copy_(lib.ones(3)),
    "slice_step_0": lambda lib, t: t[::0],
    "slice_step_0_set": lambda lib, t: t.__setitem__(slice(None, None, 0), 1.0),
    "negative_step": lambda lib, t: t[::-1],
    "negative_step_set": lambda lib, t: t.__setitem__(slice(None, None, -1), 1.0),
    "negative_step_after_int": lambda lib, t: t[0, ::-1],
    "negative_step_with_list": lambda lib, t: t[[0], ::-2],
    "step_0_with_list": lambda lib, t: t[[0], ::0],
    "negative_step_after_none": lambda lib, t: t[None, ::-1],
    "arange_step_0": lambda lib, t: lib.arange(0, 3, 0),
    "narrow_negative_length": lambda lib, t: t.narrow(0, 0, -1),
}


def _bad_write(lib, name):
    t = lib.zeros(4, 3)
    out = BAD_WRITES[name](lib, t)
    return t.tolist() if out is None else (out if isinstance(out, (list, tuple)) else out.tolist())


@pytest.mark.parametrize("name", sorted(BAD_WRITES))
def test_bad_writes_and_slices_match_torch(name):
    assert_like_torch(lambda lib: _bad_write(lib, name))


def test_shape_mismatch_in_writes_is_a_runtime_error():
    t = et.zeros(3)
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(3\) must match the existing size \(2\)"):
        t[0:3] = et.ones(2)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(2\)"):
        t.copy_(et.ones(2))
    with pytest.raises(RuntimeError, match=r"value tensor of shape \[3\] cannot be broadcast to indexing result "
                                           r"of shape \[2\]"):
        t[[0, 1]] = et.ones(3)
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-1]


# -- a view made under no_grad, written (or its base written) with grad mode on -------------------
def _no_grad_view(lib, name):
    x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
    a = x * 1 if "plain" not in name else lib.zeros(2, 3, dtype=lib.float64)
    with lib.no_grad():
        v = a[0] if "index" in name else a.t()
    if name.endswith("write_view"):
        v.mul_(x[0] if "plain" in name else 2)
    elif name.endswith("write_base_then_use"):
        a.mul_(2) if "plain" not in name else a.copy_(x)
        return (v * 2).tolist()
    elif name.endswith("write_in_no_grad"):
        with lib.no_grad():
            v.mul_(2)
        return a._version, a.tolist()
    return a.tolist()


NO_GRAD_VIEWS = ["index_write_view", "t_write_view", "plain_index_write_view", "index_write_base_then_use",
                 "plain_t_write_base_then_use", "index_write_in_no_grad"]


@pytest.mark.parametrize("name", NO_GRAD_VIEWS)
def test_views_made_under_no_grad_match_torch(name):
    assert_like_torch(lambda lib: _no_grad_view(lib, name))


def test_view_made_under_no_grad_is_refused_in_place_with_grad():
    a = et.ones(2, 3, requires_grad=True) * 1
    with et.no_grad():
        row = a[0]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace with "
                                           "grad mode enabled"):
        row.mul_(2)
    assert a.tolist() == [[1.0] * 3] * 2
