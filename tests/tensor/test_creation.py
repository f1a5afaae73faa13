"""Tensor factories and random numbers: dtypes, shapes, values and memory sharing."""
import numpy as np
import pytest

import edutorch as et

FACTORIES = {
    "tensor floats": lambda L: L.tensor([1.0, 2.5]),
    "tensor ints": lambda L: L.tensor([[1, 2], [3, 4]]),
    "tensor bools": lambda L: L.tensor([True, False]),
    "tensor mixed int float": lambda L: L.tensor([1, 2.5]),
    "tensor scalar": lambda L: L.tensor(3),
    "tensor dtype": lambda L: L.tensor([1, 2], dtype=L.float64),
    "tensor of 0-d tensors": lambda L: L.tensor([L.tensor(1.5), L.tensor(2.0)]),
    "tensor numpy float64": lambda L: L.tensor(np.array([1.0, 2.0])),
    "tensor numpy int32": lambda L: L.tensor(np.array([1, 2], dtype=np.int32)),
    "tensor numpy scalar": lambda L: L.tensor(np.float64(2.5)),
    "as_tensor list": lambda L: L.as_tensor([1, 2]),
    "as_tensor dtype": lambda L: L.as_tensor(np.array([1, 2]), dtype=L.float32),
    "from_numpy": lambda L: L.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3)),
    "zeros": lambda L: L.zeros(2, 3),
    "zeros tuple": lambda L: L.zeros((2, 3), dtype=L.int64),
    "zeros scalar": lambda L: L.zeros(()),
    "ones": lambda L: L.ones(4, dtype=L.bool),
    "ones list": lambda L: L.ones([2, 2]),
    "full float": lambda L: L.full((2, 2), 1.5),
    "full int": lambda L: L.full((2,), 7),
    "full bool": lambda L: L.full((2,), True),
    "full dtype": lambda L: L.full((2,), 7, dtype=L.float64),
    "zeros_like": lambda L: L.zeros_like(L.ones(2, 3, dtype=L.int32)),
    "ones_like dtype": lambda L: L.ones_like(L.ones(2), dtype=L.float64),
    "full_like": lambda L: L.full_like(L.ones(2, dtype=L.int64), 3),
    "empty_like shape": lambda L: L.empty_like(L.ones(2, 3)).zero_(),
    "empty shape": lambda L: L.empty(2, 3).fill_(1.0),
    "arange int": lambda L: L.arange(5),
    "arange start": lambda L: L.arange(2, 9, 3),
    "arange float": lambda L: L.arange(0, 1, 0.25),
    "arange float end": lambda L: L.arange(2.5),
    "arange negative step": lambda L: L.arange(5, 0, -2),
    "arange dtype": lambda L: L.arange(4, dtype=L.float64),
    "linspace": lambda L: L.linspace(0, 1, 5),
    "linspace one": lambda L: L.linspace(-1, 1, 1),
    "linspace dtype": lambda L: L.linspace(0, 10, 3, dtype=L.float64),
    "eye": lambda L: L.eye(3),
    "eye rect": lambda L: L.eye(2, 4, dtype=L.int64),
    "requires_grad": lambda L: L.ones(2, requires_grad=True),
    "tensor requires_grad": lambda L: L.tensor([1.0], requires_grad=True),
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_factories_match_torch(name):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    ours, theirs = FACTORIES[name](et), FACTORIES[name](torch)
    assert isinstance(ours, et.Tensor)
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.requires_grad == theirs.requires_grad and ours.is_leaf
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)


def test_tensor_copies_but_from_numpy_and_as_tensor_share_memory():
    a = np.zeros(3, dtype=np.float32)
    copied, shared, viewed = et.tensor(a), et.from_numpy(a), et.as_tensor(a)
    a[0] = 5.0
    assert copied[0].item() == 0.0
    assert shared[0].item() == 5.0 and viewed[0].item() == 5.0
    t = et.ones(2)
    assert et.as_tensor(t) is t


def test_tensor_from_tensor_warns_like_torch():
    with pytest.warns(UserWarning, match="sourceTensor.clone\\(\\).detach\\(\\)"):
        et.tensor(et.ones(2))


def test_factory_errors():
    with pytest.raises(TypeError, match="expected np.ndarray"):
        et.from_numpy([1, 2])
    with pytest.raises(TypeError, match="can't convert np.ndarray of type"):
        et.from_numpy(np.array(["a"]))
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        et.zeros(2, dtype=et.int64, requires_grad=True)


def test_manual_seed_reproduces_every_sampler():
    def draw():
        et.manual_seed(123)
        return [et.rand(3), et.randn(2, 2), et.randint(0, 10, (4,)), et.randperm(5),
                et.normal(0.0, 1.0, (3,)), et.empty(3).uniform_(-1, 1), et.empty(3).normal_(2, 0.5)]

    first, second = draw(), draw()
    for a, b in zip(first, second):
        assert a.tolist() == b.tolist()
    assert first[0].tolist() != et.rand(3).tolist()


def test_random_dtypes_ranges_and_shapes():
    et.manual_seed(0)
    assert et.rand(2, 3).dtype == et.float32 and et.rand(2, 3).shape == (2, 3)
    assert et.randn((4,), dtype=et.float64).dtype == et.float64
    r = et.randint(3, 7, (1000,))
    assert r.dtype == et.int64 and r.min().item() >= 3 and r.max().item() <= 6
    assert sorted(et.randperm(6).tolist()) == list(range(6))
    u = et.rand(10000)
    assert 0.0 <= u.min().item() and u.max().item() < 1.0 and abs(u.mean().item() - 0.5) < 0.02
    n = et.randn(10000)
    assert abs(n.mean().item()) < 0.05 and abs(n.std().item() - 1) < 0.05
    m = et.normal(et.tensor([0.0, 100.0]), et.tensor([1.0, 0.001]))
    assert m.shape == (2,) and abs(m[1].item() - 100) < 0.1


def test_generator_is_independent_of_the_global_stream():
    g1, g2 = et.Generator().manual_seed(7), et.Generator().manual_seed(7)
    et.manual_seed(0)
    a = et.rand(3, generator=g1)
    et.rand(5)  # advancing the default generator does not touch g2
    assert et.rand(3, generator=g2).tolist() == a.tolist()
    state = et.get_rng_state()
    x = et.rand(2)
    et.set_rng_state(state)
    assert et.rand(2).tolist() == x.tolist()


def test_inplace_initialisers_bump_version_and_refuse_leaves_requiring_grad():
    t = et.zeros(3)
    v = t._version
    t.uniform_()
    t.normal_()
    t.fill_(2.0)
    t.zero_()
    t.copy_(et.ones(3))
    assert t._version == v + 5 and t.tolist() == [1.0, 1.0, 1.0]
    w = et.zeros(3, requires_grad=True)
    for init in (lambda: w.uniform_(), lambda: w.normal_(), lambda: w.fill_(1.0), lambda: w.zero_()):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
            init()
    with et.no_grad():  # how nn.init does it
        w.uniform_(-1, 1)
        w.fill_(0.5)
    assert w.tolist() == [0.5, 0.5, 0.5] and w.grad_fn is None
