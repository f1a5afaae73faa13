"""In-place ops on views rewrite the base's graph (PyTorch's view tracking).

``a.t().mul_(2)`` changes ``a``'s values through shared memory; the gradient
of anything computed from ``a`` afterwards must see that multiplication.
Before this existed the base kept its old graph and the gradient was silently
wrong, so each case here is checked against the out-of-place computation
(no torch needed) and, when torch is installed, against PyTorch itself.
"""
import numpy as np
import pytest

import edutorch as et

WEIGHTS = np.arange(1.0, 7.0).reshape(2, 3)

# name -> how the view is made from a (2, 3) base
VIEWS = {
    "view": lambda a: a.view(3, 2),
    "reshape": lambda a: a.reshape(6),
    "flatten": lambda a: a.flatten(),
    "t": lambda a: a.t(),
    "transpose": lambda a: a.transpose(0, 1),
    "permute": lambda a: a.permute(1, 0),
    "mT": lambda a: a.mT,
    "unsqueeze": lambda a: a.unsqueeze(0),
    "unsqueeze_squeeze": lambda a: a.unsqueeze(0).squeeze(0),
    "unflatten": lambda a: a.flatten().unflatten(0, (3, 2)),
    "narrow": lambda a: a.narrow(1, 0, 2),
    "index": lambda a: a[1],
    "slice_then_t": lambda a: a[:, 1:].t(),
    "view_then_index": lambda a: a.view(3, 2)[1:],
    "diagonal": lambda a: a.diagonal(),
    "diagonal_offset": lambda a: a.diagonal(1),
    "steps": lambda a: a[::2, ::2],
    "unfold": lambda a: a.unfold(1, 1, 2),
    "expand_same_shape": lambda a: a.expand(1, 2, 3),
    "select_then_unsqueeze": lambda a: a.select(1, 2).unsqueeze(0),
}


def _run(lib, make_view, in_place=True):
    """``a = x*1``, multiply a view of ``a`` by 1..n (in place or not), return x.grad and a."""
    x = lib.tensor(WEIGHTS.copy(), requires_grad=True)
    a = x * 1
    v = make_view(a)
    factor = lib.arange(1, v.numel() + 1, dtype=lib.float64).reshape(v.shape)
    if in_place:
        v.mul_(factor)
    else:  # the same values, out of place: write the product back through indexing of a copy
        base_positions = make_view(lib.arange(a.numel()).reshape(a.shape)).reshape(-1)
        flat = a.reshape(-1)
        scale = lib.ones(a.numel(), dtype=lib.float64)
        scale[base_positions] = factor.reshape(-1)
        a = (flat * scale).reshape(a.shape)
    (a * lib.tensor(WEIGHTS)).sum().backward()
    return x.grad.numpy(), a.detach().numpy()


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_inplace_on_view_equals_out_of_place(name):
    grad, values = _run(et, VIEWS[name])
    expected_grad, expected_values = _run(et, VIEWS[name], in_place=False)
    np.testing.assert_allclose(values, expected_values)
    np.testing.assert_allclose(grad, expected_grad)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_inplace_on_view_matches_torch(name):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    grad, values = _run(et, VIEWS[name])
    t_grad, t_values = _run(torch, VIEWS[name])
    np.testing.assert_allclose(values, t_values)
    np.testing.assert_allclose(grad, t_grad)


def test_base_node_is_copyslices_and_view_is_remade():
    a = et.ones(2, 3, requires_grad=True) * 1
    v = a.t()
    v.mul_(2)
    assert a.grad_fn.name() == "CopySlices"
    assert v.grad_fn is not None and v._version == a._version == 1


def test_copy_into_a_view_of_a_plain_tensor_records_the_source():
    y = et.zeros(2, 3)
    w = et.ones(3, 2, requires_grad=True)
    y.t().copy_(w * 3)
    assert y.requires_grad and y.grad_fn.name() == "CopySlices"
    (y * et.tensor(WEIGHTS)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 3 * WEIGHTS.T)


def test_view_of_a_leaf_refuses_in_place():
    x = et.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x.t().mul_(2)


@pytest.mark.parametrize("make,name,nr", [
    (lambda a: a.split(1)[0], "Split", 0),
    (lambda a: a.chunk(3, 1)[2], "Split", 2),
    (lambda a: a.split([1, 2], 1)[1], "SplitWithSizes", 1),
    (lambda a: a.unbind(0)[1], "Unbind", 1),
])
def test_in_place_on_one_of_several_views_is_refused(make, name, nr):
    a = et.ones(2, 3, requires_grad=True) * 1
    with pytest.raises(RuntimeError) as err:
        make(a).mul_(2)
    assert str(err.value).startswith(f"Output {nr} of {name} is a view and is being modified inplace.")


def test_multi_view_message_matches_torch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    messages = []
    for lib in (et, torch):
        a = lib.ones(2, 3, requires_grad=True) * 1
        with pytest.raises(RuntimeError) as err:
            a.unbind(0)[1].mul_(2)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_in_place_on_expanded_tensor_is_refused_like_torch():
    x = et.ones(1, 3).expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        x.mul_(et.ones(2, 3))


def test_views_without_grad_stay_plain():
    a = et.ones(2, 3)
    v = a.t()
    v.mul_(2)  # no graph anywhere: a plain write through shared memory
    assert a.grad_fn is None and not a.requires_grad
    assert a.tolist() == [[2.0] * 3] * 2


# -- a view made BEFORE an in-place op on its base (or on a sibling view) -----------
# PyTorch regenerates such a view's grad_fn: its values changed, so must its graph.
LATER_USES = {
    "base_then_old_view": lambda lib, a: (lambda v: (a.mul_(2), v)[1])(a.t()),
    "index_view_then_base": lambda lib, a: (lambda v: (a.mul_(3), v)[1])(a[0]),
    "sibling_views": lambda lib, a: (lambda v1, v2: (v1.mul_(2), v2)[1])(a.view(6), a.t()),
    "view_of_view": lambda lib, a: (lambda w: (a.mul_(2), w)[1])(a.t()[0]),
    "index_siblings": lambda lib, a: (lambda v, v2: (v.mul_(4), v2)[1])(a[0], a[1]),
    "view_then_base_twice": lambda lib, a: (lambda v: (v.mul_(2), a.add_(1), v)[2])(a.t()),
}


def _later_use(lib, name):
    x = lib.tensor(WEIGHTS.copy(), requires_grad=True)
    a = x * 1
    view = LATER_USES[name](lib, a)
    ((view * view).sum() + a.sum()).backward()
    return x.grad.numpy()


@pytest.mark.parametrize("name", sorted(LATER_USES))
def test_older_view_follows_its_base_like_torch(name):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    np.testing.assert_allclose(_later_use(et, name), _later_use(torch, name))


def test_older_view_sees_the_base_multiplication():
    x = et.ones(2, 3, requires_grad=True)
    a = x * 1
    v = a.t()
    a.mul_(2)  # v's values doubled through shared memory: its gradient must double too
    v.sum().backward()
    assert x.grad.tolist() == [[2.0] * 3] * 2


def test_split_output_after_its_base_changed_is_refused():
    x = et.ones(2, 3, requires_grad=True)
    a = x * 1
    piece = a.split(1)[1]
    a.mul_(5)
    with pytest.raises(RuntimeError, match="Output 1 of Split is a view and its base or another view of its base "
                                           "has been modified inplace"):
        piece.sum().backward()


# -- random programs of views, in-place ops and ordinary ops, against torch -----------
# Each program starts from ``a = x * 1.5`` and, step by step, takes a view of an
# earlier tensor, changes one in place, or computes from one; the loss sums them
# all.  edutorch must give torch's gradient, torch's values, and raise exactly
# when torch raises (e.g. a saved result of ``relu_`` changed again in place).
_FUZZ_VIEWS = [
    lambda t: t.t() if t.dim() == 2 else t.unsqueeze(0),
    lambda t: t.reshape(-1),
    lambda t: t[0] if t.dim() and t.shape[0] > 1 else t,
    lambda t: t[1:] if t.dim() and t.shape[0] > 1 else t,
    lambda t: t.unsqueeze(0),
    lambda t: t.permute(*reversed(range(t.dim()))),
    lambda t: t.narrow(0, 0, 1) if t.dim() > 0 else t,
]
_FUZZ_INPLACE = [
    lambda t, c: t.mul_(c),
    lambda t, c: t.add_(c),
    lambda t, c: t.relu_(),
    lambda t, c: t.copy_(c * t.detach() + 1),
    lambda t, c: t.neg_(),
    lambda t, c: t.clamp_(-0.5, 0.5),
]


def _fuzz_program(seed):
    rng = np.random.default_rng(seed)
    return [(rng.choice(["view", "view", "inplace", "op"]), int(rng.integers(6)), int(rng.integers(12)))
            for _ in range(int(rng.integers(2, 7)))]


def _fuzz_run(lib, program, x0):
    x = lib.tensor(x0, requires_grad=True)
    tensors = [x * 1.5]
    for kind, i, j in program:
        t = tensors[i % len(tensors)]
        if kind == "view":
            tensors.append(_FUZZ_VIEWS[j % len(_FUZZ_VIEWS)](t))
        elif kind == "inplace":
            _FUZZ_INPLACE[j % len(_FUZZ_INPLACE)](t, 0.7 + 0.1 * (j % 3))
        else:
            tensors.append((t * t).exp() if j % 2 else t * 2 + 1)
    sum((u * (k + 1)).sum() for k, u in enumerate(tensors)).backward()
    return x.grad.numpy(), [u.detach().numpy() for u in tensors]


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # exp of large values: NumPy warns
@pytest.mark.parametrize("block", range(4))
def test_random_view_and_inplace_programs_match_torch(block):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    for seed in range(block * 100, block * 100 + 100):
        program, x0 = _fuzz_program(seed), np.random.default_rng(seed).standard_normal((2, 3))
        outcomes = []
        for lib in (torch, et):
            try:
                outcomes.append(_fuzz_run(lib, program, x0))
            except RuntimeError as err:
                outcomes.append(str(err).split(":")[0])  # the error's first words
        theirs, mine = outcomes
        assert type(mine) is type(theirs), (seed, program, mine if isinstance(mine, str) else theirs)
        if isinstance(mine, str):
            assert mine == theirs, (seed, program)
            continue
        np.testing.assert_allclose(mine[0], theirs[0], atol=1e-9, err_msg=str((seed, program)))
        for a, b in zip(mine[1], theirs[1]):
            np.testing.assert_allclose(a, b, atol=1e-9, err_msg=str((seed, program)))


def test_double_backward_through_in_place_on_views():
    """CopySlices and AsStridedBackward0 are built from differentiable ops: their gradients
    can be differentiated again (checked numerically, float64)."""
    x = et.tensor(np.random.default_rng(3).standard_normal((3, 3)), requires_grad=True)

    def program(t):
        a = t * 1
        older = a[:, 1]
        a.diagonal().mul_(t.diagonal())
        a.t()[0].sigmoid_()
        return (a * a).sum() + (older * older).sum()

    assert et.autograd.gradcheck(program, (x,))
    assert et.autograd.gradgradcheck(program, (x,))
