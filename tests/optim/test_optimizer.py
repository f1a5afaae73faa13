"""Optimizer base behaviour: param groups, errors, zero_grad, state_dict round trips, hooks."""
import numpy as np
import pytest

import edutorch as et
from edutorch import optim as et_optim


@pytest.fixture
def torch():
    """Real PyTorch, the oracle; tests that use it skip when it is not installed."""
    return pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


def _leaf(lib, values):
    return lib.tensor(values, requires_grad=True)


def test_bad_params_errors_match_torch(torch):
    p, tp = _leaf(et, [1.0, 2.0]), _leaf(torch, [1.0, 2.0])
    cases = [
        (lambda: et_optim.SGD(p), lambda: torch.optim.SGD(tp)),
        (lambda: et_optim.SGD([]), lambda: torch.optim.SGD([])),
        (lambda: et_optim.SGD([{"params": [p]}, {"params": [p]}]),
         lambda: torch.optim.SGD([{"params": [tp]}, {"params": [tp]}])),
        (lambda: et_optim.SGD([{"params": {p}}]), lambda: torch.optim.SGD([{"params": {tp}}])),
        (lambda: et_optim.SGD([p * 2]), lambda: torch.optim.SGD([tp * 2])),
        (lambda: et_optim.SGD([1.0]), lambda: torch.optim.SGD([1.0])),
        (lambda: et_optim.SGD([p], lr=-1), lambda: torch.optim.SGD([tp], lr=-1)),
        (lambda: et_optim.SGD([p], nesterov=True), lambda: torch.optim.SGD([tp], nesterov=True)),
        (lambda: et_optim.Adam([p], betas=(1.0, 0.9)), lambda: torch.optim.Adam([tp], betas=(1.0, 0.9))),
        (lambda: et_optim.Adam([p], eps=-1), lambda: torch.optim.Adam([tp], eps=-1)),
        (lambda: et_optim.RMSprop([p], alpha=-1), lambda: torch.optim.RMSprop([tp], alpha=-1)),
        (lambda: et_optim.Adagrad([p], lr_decay=-1), lambda: torch.optim.Adagrad([tp], lr_decay=-1)),
    ]
    for ours, theirs in cases:
        assert _error(ours) == _error(theirs)


def test_param_passed_twice_in_one_group_warns_like_torch():
    p = _leaf(et, [1.0])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        et_optim.SGD([p, p])


def test_param_groups_defaults_and_add_param_group():
    a, b, c = _leaf(et, [1.0]), _leaf(et, [2.0]), _leaf(et, [3.0])
    opt = et_optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["momentum"] == 0.9
    opt.add_param_group({"params": [c], "momentum": 0.0})
    assert opt.param_groups[2]["lr"] == 0.1 and opt.param_groups[2]["momentum"] == 0.0
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    named = et_optim.SGD([("w", a), ("b", b)])
    assert named.param_groups[0]["param_names"] == ["w", "b"]
    assert named.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]


def test_zero_grad_set_to_none_and_zero():
    p = _leaf(et, [1.0, 2.0])
    (p * p).sum().backward()
    opt = et_optim.SGD([p], lr=0.1)
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None
    opt.step()  # no grad: the parameter is skipped
    assert p.tolist() == [1.0, 2.0]


def test_step_is_in_place_bumps_version_and_records_nothing():
    p = _leaf(et, [1.0, 2.0])
    data = p.detach().numpy()
    (p * p).sum().backward()
    version = p._version
    et_optim.SGD([p], lr=0.1).step()
    assert p.detach().numpy() is data and p._version == version + 1
    assert p.grad_fn is None and p.is_leaf
    np.testing.assert_allclose(p.tolist(), [0.8, 1.6], rtol=1e-6)


def test_closure_is_evaluated_with_grad_enabled():
    p = _leaf(et, [3.0])
    opt = et_optim.SGD([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with et.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 9.0
    np.testing.assert_allclose(p.tolist(), [2.4], rtol=1e-6)


def test_step_hooks_run_in_order_and_can_be_removed():
    p = _leaf(et, [1.0])
    p.grad = et.tensor([1.0])
    opt = et_optim.SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", p.item())))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", round(p.item(), 6))))
    g = et_optim.register_optimizer_step_post_hook(lambda o, args, kwargs: calls.append("global post"))
    opt.step()
    assert calls == [("pre", 1.0), ("post", 0.9), "global post"]
    for h in (h1, h2, g):
        h.remove()
    opt.step()
    assert len(calls) == 3


def _train(lib, name, kwargs, params, steps, x):
    opt = getattr(lib.optim, name)(params, **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        ((x.mm(params[0]) + params[1]).tanh() ** 2).mean().backward()
        opt.step()
    return opt


ROUND_TRIP = [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
]


def _fresh(lib, w0, b0):
    return [lib.tensor(w0, requires_grad=True), lib.tensor(b0, requires_grad=True)]


@pytest.mark.parametrize("name,kwargs", ROUND_TRIP, ids=[n for n, _ in ROUND_TRIP])
def test_state_dict_round_trip_continues_identically(name, kwargs):
    rng = np.random.default_rng(2)
    w0, b0 = rng.standard_normal((3, 2)), rng.standard_normal(2)
    x = rng.standard_normal((6, 3))
    et.optim = et_optim
    # reference: 6 uninterrupted steps
    ref = _fresh(et, w0, b0)
    _train(et, name, kwargs, ref, 6, et.tensor(x))
    # 3 steps, save, load into a fresh optimizer over a copy, 3 more steps
    first = _fresh(et, w0, b0)
    opt = _train(et, name, kwargs, first, 3, et.tensor(x))
    saved = opt.state_dict()
    second = [et.tensor(p.detach().numpy().copy(), requires_grad=True) for p in first]
    opt2 = getattr(et_optim, name)(second, **kwargs)
    opt2.load_state_dict(saved)
    assert repr(opt2) == repr(opt)
    for _ in range(3):
        opt2.zero_grad()
        ((et.tensor(x).mm(second[0]) + second[1]).tanh() ** 2).mean().backward()
        opt2.step()
    for p, q in zip(ref, second):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    # the loaded state is a copy, not shared with the saved dict
    for value in opt2.state[second[0]].values():
        assert all(value is not v for v in saved["state"][0].values())


@pytest.mark.parametrize("name,kwargs", ROUND_TRIP, ids=[n for n, _ in ROUND_TRIP])
def test_torch_state_dict_loads_into_edutorch(name, kwargs, torch):
    """A state_dict made by PyTorch (converted to edutorch tensors) continues the same run."""
    rng = np.random.default_rng(3)
    w0, b0 = rng.standard_normal((3, 2)), rng.standard_normal(2)
    x = rng.standard_normal((6, 3))
    tparams = _fresh(torch, w0, b0)
    topt = _train(torch, name, dict(kwargs, foreach=False), tparams, 3, torch.tensor(x))
    tsd = topt.state_dict()
    sd = {"state": {i: {k: et.tensor(v.numpy()) for k, v in s.items()} for i, s in tsd["state"].items()},
          "param_groups": [dict(g) for g in tsd["param_groups"]]}
    params = [et.tensor(p.detach().numpy().copy(), requires_grad=True) for p in tparams]
    opt = getattr(et_optim, name)(params, **kwargs)
    opt.load_state_dict(sd)
    for _ in range(3):
        topt.zero_grad()
        ((torch.tensor(x).mm(tparams[0]) + tparams[1]).tanh() ** 2).mean().backward()
        topt.step()
        opt.zero_grad()
        ((et.tensor(x).mm(params[0]) + params[1]).tanh() ** 2).mean().backward()
        opt.step()
    for p, tp in zip(params, tparams):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_state_dict_through_edutorch_save_and_load(tmp_path):
    if not hasattr(et, "save"):
        pytest.skip("edutorch.save/load not available yet")
    p = _leaf(et, [1.0, -2.0, 3.0])
    opt = et_optim.Adam([p], lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
    path = tmp_path / "optim.pt"
    et.save(opt.state_dict(), path)
    loaded = et.load(path)
    q = et.tensor(p.detach().numpy().copy(), requires_grad=True)
    opt2 = et_optim.Adam([q], lr=0.1)
    opt2.load_state_dict(loaded)
    for o, t in ((opt, p), (opt2, q)):
        o.zero_grad()
        (t * t).sum().backward()
        o.step()
    np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    assert opt2.state_dict()["state"][0]["step"].item() == 3.0


def test_load_state_dict_errors_match_torch(torch):
    a, b = _leaf(et, [1.0]), _leaf(et, [2.0])
    ta, tb = _leaf(torch, [1.0]), _leaf(torch, [2.0])
    sd = et_optim.SGD([a, b]).state_dict()
    tsd = torch.optim.SGD([ta, tb]).state_dict()
    assert _error(lambda: et_optim.SGD([a]).load_state_dict(sd)) == \
        _error(lambda: torch.optim.SGD([ta]).load_state_dict(tsd))
    assert _error(lambda: et_optim.SGD([{"params": [a]}, {"params": [b]}]).load_state_dict(sd)) == \
        _error(lambda: torch.optim.SGD([{"params": [ta]}, {"params": [tb]}]).load_state_dict(tsd))


def test_adagrad_state_exists_before_any_step(torch):
    p, tp = _leaf(et, [1.0, 2.0]), _leaf(torch, [1.0, 2.0])
    sd = et_optim.Adagrad([p], initial_accumulator_value=0.3).state_dict()
    tsd = torch.optim.Adagrad([tp], initial_accumulator_value=0.3).state_dict()
    assert list(sd["state"][0]) == list(tsd["state"][0]) == ["step", "sum"]
    np.testing.assert_array_equal(sd["state"][0]["sum"].numpy(), tsd["state"][0]["sum"].numpy())


@pytest.mark.slow
def test_modules_note_seed_loop_teaches_the_net_to_output_zero():
    """PyTorch's "Modules" note: SGD(lr=1e-4, weight_decay=1e-2, momentum=0.9), 10,000 steps."""
    nn = et.nn

    class MyLinear(nn.Module):
        def __init__(self, in_features, out_features):
            super().__init__()
            self.weight = nn.Parameter(et.randn(in_features, out_features))
            self.bias = nn.Parameter(et.randn(out_features))

        def forward(self, input):
            return (input @ self.weight) + self.bias

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.l0 = MyLinear(4, 3)
            self.l1 = MyLinear(3, 1)

        def forward(self, x):
            return self.l1(nn.functional.relu(self.l0(x)))

    et.manual_seed(0)
    net = Net()
    probe = et.randn(200, 4)
    with et.no_grad():
        before = net(probe).abs().mean().item()
    optimizer = et_optim.SGD(net.parameters(), lr=1e-4, weight_decay=1e-2, momentum=0.9)
    for _ in range(10000):
        input = et.randn(4)
        output = net(input)
        loss = et.abs(output)
        net.zero_grad()
        loss.backward()
        optimizer.step()
    with et.no_grad():
        after = net(probe).abs().mean().item()
    assert before > 0.3
    assert after < 0.05
