"""Lazy modules, PReLU, ConvTranspose2d, in-place functional activations, register_backward_hook."""
import copy
import warnings

import numpy as np
import pytest

import edutorch as et
import edutorch.nn as nn
import edutorch.nn.functional as F
from edutorch.autograd import gradcheck

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def _r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# -- lazy modules --------------------------------------------------------------------------
def test_lazy_linear_materializes_at_first_forward_and_becomes_linear():
    m = nn.LazyLinear(5)
    assert isinstance(m.weight, nn.UninitializedParameter) and m.has_uninitialized_params()
    assert repr(m.weight) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        m.weight.shape
    out = m(et.randn(3, 7))
    assert tuple(out.shape) == (3, 5)
    assert type(m) is nn.Linear and type(m.weight) is nn.Parameter and m.in_features == 7
    assert tuple(m.weight.shape) == (5, 7) and tuple(m.bias.shape) == (5,)
    bound = 1 / np.sqrt(7)
    assert float(m.weight.abs().max()) <= bound and float(m.bias.abs().max()) <= bound
    assert not m._forward_pre_hooks  # the initializing hook is gone


def test_lazy_modules_in_a_model_train_like_eager_ones():
    et.manual_seed(0)
    model = nn.Sequential(nn.LazyConv2d(4, 3, padding=1), nn.LazyBatchNorm2d(), nn.ReLU(), nn.Flatten(),
                          nn.LazyLinear(8), nn.LazyBatchNorm1d(), nn.Linear(8, 2))
    x = et.randn(5, 3, 6, 6)
    model(x)  # the dry run that fixes the shapes
    assert [type(m).__name__ for m in model] == ["Conv2d", "BatchNorm2d", "ReLU", "Flatten", "Linear",
                                                 "BatchNorm1d", "Linear"]
    assert tuple(model[0].weight.shape) == (4, 3, 3, 3) and model[1].num_features == 4
    assert tuple(model[4].weight.shape) == (8, 144) and tuple(model[5].running_mean.shape) == (8,)
    opt = et.optim.SGD(model.parameters(), lr=0.1)  # parameters() after the dry run, as PyTorch says
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    assert all(p.grad is not None for p in model.parameters())


def test_lazy_module_loads_a_checkpoint_by_materializing():
    eager = nn.Linear(4, 3)
    lazy = nn.LazyLinear(3)
    lazy.load_state_dict(eager.state_dict())
    assert tuple(lazy.weight.shape) == (3, 4)
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), eager.weight.detach().numpy())
    lazy(et.ones(2, 4))  # the first forward still turns it into a Linear
    assert type(lazy) is nn.Linear and lazy.in_features == 4


def test_lazy_state_dict_and_deepcopy_before_initialization():
    m = nn.LazyLinear(3)
    sd = m.state_dict()
    assert isinstance(sd["weight"], nn.UninitializedParameter)
    c = copy.deepcopy(m)
    assert isinstance(c.weight, nn.UninitializedParameter) and c.weight is not m.weight


def test_lazy_linear_matches_torch_after_materializing():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for lib in (et, torch):
        m = lib.nn.LazyLinear(2)
        assert repr(m) == "LazyLinear(in_features=0, out_features=2, bias=True)"
        m(lib.ones(1, 3))
        assert repr(m) == "Linear(in_features=3, out_features=2, bias=True)"
    e, t = et.nn.LazyBatchNorm1d(), torch.nn.LazyBatchNorm1d()
    assert repr(e) == repr(t)


# -- PReLU ----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,n", [((4, 3), 3), ((2, 3, 5), 3), ((2, 3, 4, 4), 1), ((5,), 1), ((), 1)])
def test_prelu_matches_torch_and_gradchecks(shape, n):
    x = _r(*shape)
    w = np.linspace(0.1, 0.4, n)
    assert gradcheck(F.prelu, (et.tensor(x, requires_grad=True), et.tensor(w, requires_grad=True)))
    x.reshape(-1)[0] = 0.0  # the kink (for parity only): PyTorch's gradient there is the slope's side
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    grads = []
    for lib in (et, torch):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        out = lib.nn.functional.prelu(xt, wt)
        (out * lib.tensor(_r(*shape, seed=1))).sum().backward()
        grads.append((out.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_prelu_module_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    e, t = nn.PReLU(3, init=0.1), torch.nn.PReLU(3, init=0.1)
    assert repr(e) == repr(t) and e.weight.tolist() == pytest.approx(t.weight.tolist())
    with pytest.raises(RuntimeError) as theirs:
        t(torch.ones(2, 4))
    with pytest.raises(RuntimeError) as mine:
        e(et.ones(2, 4))
    assert str(mine.value) == str(theirs.value)
    for shape in ((5,), ()):
        with pytest.raises(RuntimeError) as theirs:
            torch.nn.functional.prelu(torch.ones(shape), torch.ones(5))
        with pytest.raises(RuntimeError) as mine:
            F.prelu(et.ones(shape), et.ones(5))
        assert str(mine.value) == str(theirs.value)


# -- ConvTranspose2d --------------------------------------------------------------------------
CONV_T = [  # (in, out, groups, kernel, stride, padding, output_padding, dilation, H, W)
    (2, 3, 1, 3, 1, 0, 0, 1, 4, 5),
    (4, 6, 2, 3, 2, 1, 1, 1, 3, 4),
    (2, 4, 1, 2, 3, 0, 2, 1, 3, 3),
    (2, 2, 1, 3, 2, 2, 0, 2, 5, 4),
    (2, 3, 1, (2, 3), (2, 1), (1, 0), (1, 0), 1, 3, 4),
    (3, 2, 1, 3, 1, 3, 0, 1, 7, 7),
]


@pytest.mark.parametrize("case", range(len(CONV_T)))
def test_conv_transpose2d_gradcheck(case):
    cin, cout, g, k, s, p, op, d, h, w = CONV_T[case]
    ks = k if isinstance(k, tuple) else (k, k)
    args = (et.tensor(_r(2, cin, h, w), requires_grad=True),
            et.tensor(_r(cin, cout // g, *ks, seed=1), requires_grad=True),
            et.tensor(_r(cout, seed=2), requires_grad=True))
    assert gradcheck(lambda x, wt, b: F.conv_transpose2d(x, wt, b, s, p, op, g, d), args)


@pytest.mark.parametrize("case", range(len(CONV_T)))
def test_conv_transpose2d_matches_torch(case):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    cin, cout, g, k, s, p, op, d, h, w = CONV_T[case]
    ks = k if isinstance(k, tuple) else (k, k)
    arrays = (_r(2, cin, h, w), _r(cin, cout // g, *ks, seed=1), _r(cout, seed=2))
    results = []
    for lib in (et, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = lib.nn.functional.conv_transpose2d(*ts, s, p, op, g, d)
        (out * lib.tensor(_r(*out.shape, seed=3))).sum().backward()
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_conv_transpose2d_module_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    e = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)
    t = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)
    assert repr(e) == repr(t)
    assert tuple(e.weight.shape) == tuple(t.weight.shape) == (2, 3, 3, 3)
    e.load_state_dict({k: et.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = _r(1, 2, 4, 4).astype(np.float32)
    np.testing.assert_allclose(e(et.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    m_e, m_t = nn.ConvTranspose2d(2, 3, 3, stride=2), torch.nn.ConvTranspose2d(2, 3, 3, stride=2)
    assert tuple(m_e(et.ones(1, 2, 4, 4), output_size=[10, 10]).shape) == (1, 3, 10, 10)
    with pytest.raises(ValueError) as theirs:
        m_t(torch.ones(1, 2, 4, 4), output_size=[20, 20])
    with pytest.raises(ValueError) as mine:
        m_e(et.ones(1, 2, 4, 4), output_size=[20, 20])
    assert str(mine.value) == str(theirs.value)


# -- in-place functional forms ------------------------------------------------------------------
@pytest.mark.parametrize("name,args", [("relu_", ()), ("leaky_relu_", (0.2,)), ("elu_", (0.5,))])
def test_in_place_functional_activations_match_torch(name, args):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x = _r(3, 4)
    outs = []
    for lib in (et, torch):
        t = lib.tensor(x)
        out = getattr(lib.nn.functional, name)(t, *args)
        assert out is t and t._version == 1
        outs.append(t.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)


# -- register_backward_hook (deprecated) ---------------------------------------------------------
def _hook_run(lib, module):
    seen = []
    module.register_backward_hook(lambda m, gi, go: seen.append((len(gi), [tuple(g.shape) for g in go])))
    x = lib.ones(4, 3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = module(x)
    out.sum().backward()
    return seen, [(w.category, str(w.message)) for w in caught]


def test_register_backward_hook_fires_and_warns_like_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    mine, theirs = _hook_run(et, et.nn.ReLU()), _hook_run(torch, torch.nn.ReLU())
    assert mine == theirs and theirs[1] and theirs[1][0][0] is FutureWarning


def test_register_backward_hook_can_replace_grad_input():
    m = nn.ReLU()
    m.register_backward_hook(lambda mod, gi, go: tuple(g * 3 for g in gi))
    x = et.tensor([1.0, -1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        m(x).sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 3.0]


def test_mixing_backward_hook_kinds_is_torchs_error():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for first, second in (("register_backward_hook", "register_full_backward_hook"),
                          ("register_full_backward_hook", "register_backward_hook")):
        messages = []
        for lib in (torch, et):
            m = lib.nn.Linear(2, 2)
            getattr(m, first)(lambda *a: None)
            with pytest.raises(RuntimeError) as err:
                getattr(m, second)(lambda *a: None)
            messages.append(str(err.value))
        assert messages[0] == messages[1]
