"""nn.Module core: registration, attribute access, iteration, bulk changes, repr.

Each ``scenario_*`` runs with edutorch or real torch (``lib``) and returns its
observations; parity tests compare them, plain tests check the essentials
without torch.
"""
import copy

import numpy as np
import pytest

import edutorch as et
from edutorch import nn



def observe_error(fn, *args, **kwargs):
    """``(exception type name, message)`` raised by ``fn(*args)``, or ``None`` if it returned."""
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # the type and text are what we compare
        return type(exc).__name__, str(exc)
    return None


def layers(lib):
    """Small layers written against ``lib``'s public API (same code for both libraries)."""

    class Affine(lib.nn.Module):
        def __init__(self, i, o):
            super().__init__()
            self.weight = lib.nn.Parameter(lib.ones(o, i))
            self.bias = lib.nn.Parameter(lib.zeros(o))

        def forward(self, x):
            return x @ self.weight.t() + self.bias

        def extra_repr(self):
            return f"in={self.weight.shape[1]}, out={self.weight.shape[0]}"

    class Norm(lib.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.scale = lib.nn.Parameter(lib.ones(n))
            self.register_buffer("running", lib.zeros(n))
            self.register_buffer("steps", lib.tensor(0))
            self.register_buffer("scratch", lib.zeros(n), persistent=False)

        def forward(self, x):
            return x * self.scale

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = lib.nn.Sequential(Affine(3, 4), Norm(4))
            self.head = Affine(4, 2)
            self.register_parameter("temperature", None)
            self.register_buffer("unused", None)

        def forward(self, x):
            return self.head(self.body(x))

    return Affine, Norm, Net


# -- parity scenarios -------------------------------------------------------------
def scenario_iteration(lib):
    _, _, Net = layers(lib)
    net = Net()
    out = {
        "named_parameters": [n for n, _ in net.named_parameters()],
        "named_parameters_prefix": [n for n, _ in net.named_parameters(prefix="model")],
        "named_parameters_norecurse": [n for n, _ in net.named_parameters(recurse=False)],
        "named_buffers": [n for n, _ in net.named_buffers()],
        "named_children": [n for n, _ in net.named_children()],
        "named_modules": [n for n, _ in net.named_modules()],
        "named_modules_prefix": [n for n, _ in net.named_modules(prefix="m")],
        "n_params": len(list(net.parameters())),
        "n_buffers": len(list(net.buffers())),
        "modules": [type(m).__name__ for m in net.modules()],
        "children": [type(m).__name__ for m in net.children()],
        "repr": repr(net),
        "dir": [k for k in dir(net) if k in ("body", "head", "temperature", "unused", "forward", "training")],
        "training": net.training,
    }
    net.head.weight = net.body[0].weight if net.body[0].weight.shape == net.head.weight.shape else net.head.weight
    shared = lib.nn.Sequential(net.head, net.head)
    out["shared_modules"] = [n for n, _ in shared.named_modules()]
    out["shared_modules_dup"] = [n for n, _ in shared.named_modules(remove_duplicate=False)]
    out["shared_params"] = [n for n, _ in shared.named_parameters()]
    out["shared_params_dup"] = [n for n, _ in shared.named_parameters(remove_duplicate=False)]
    out["shared_children"] = [n for n, _ in shared.named_children()]
    return out


def scenario_registration_errors(lib):
    Affine, _, _ = layers(lib)
    m = Affine(2, 2)
    nn_ = lib.nn
    obs = [
        observe_error(setattr, m, "weight", lib.ones(2, 2)),
        observe_error(setattr, m, "weight", 3),
        observe_error(m.register_parameter, "a.b", None),
        observe_error(m.register_parameter, "", None),
        observe_error(m.register_parameter, 3, None),
        observe_error(m.register_parameter, "forward", None),
        observe_error(m.register_parameter, "p", lib.ones(2)),
        observe_error(m.register_parameter, "p", nn_.Parameter(lib.ones(2)) * 2),
        observe_error(m.register_buffer, "a.b", None),
        observe_error(m.register_buffer, "", None),
        observe_error(m.register_buffer, "weight", lib.ones(1)),
        observe_error(m.register_buffer, "b", 3),
        observe_error(m.register_buffer, 1, None),
        observe_error(m.add_module, "x", 3),
        observe_error(m.add_module, "a.b", None),
        observe_error(m.add_module, "", None),
        observe_error(m.add_module, 7, None),
        observe_error(m.add_module, "weight", nn_.Module()),
        observe_error(getattr, m, "foo"),
        observe_error(delattr, m, "foo"),
        observe_error(nn_.Module, 3),
        observe_error(nn_.Module, foo=3),
        observe_error(nn_.Module()),
        observe_error(m.train, 1),
        observe_error(m.to, lib.int64),
        observe_error(m.get_submodule, "nope"),
        observe_error(m.get_submodule, "weight"),
        observe_error(m.get_parameter, "nope"),
        observe_error(m.get_buffer, "weight"),
    ]
    m.register_buffer("buf", lib.zeros(2))
    obs.append(observe_error(setattr, m, "buf", 5))
    m.add_module("child", nn_.Module())
    obs.append(observe_error(setattr, m, "child", 5))

    class Early(nn_.Module):
        def __init__(self, kind):
            if kind == "param":
                self.p = nn_.Parameter(lib.ones(1))
            elif kind == "module":
                self.m = nn_.Module()
            else:
                self.register_buffer("b", lib.ones(1))

    for kind in ("param", "module", "buffer"):
        obs.append(observe_error(Early, kind))
    return obs


def scenario_assignment(lib):
    """Reassigning a name moves it between registries, as ``__setattr__`` decides."""
    nn_ = lib.nn
    m = nn_.Module()
    log = []
    m.x = nn_.Parameter(lib.ones(1))
    log.append((list(m._parameters), list(m._buffers), list(m._modules)))
    m.x = None  # stays a (reserved) parameter
    log.append((list(m._parameters), list(m._buffers), list(m._modules), m.x))
    del m.x
    m.x = nn_.Module()
    log.append((list(m._parameters), list(m._buffers), list(m._modules)))
    m.x = None  # a reserved child slot
    log.append((list(m._parameters), list(m._buffers), list(m._modules), m.x))
    del m.x
    m.register_buffer("x", lib.ones(1), persistent=False)
    m.x = lib.zeros(2)  # stays a non-persistent buffer
    log.append((list(m._buffers), sorted(m._non_persistent_buffers_set), list(m.state_dict())))
    m.x = nn_.Parameter(lib.ones(1))  # a Parameter takes the name over
    log.append((list(m._parameters), list(m._buffers), sorted(m._non_persistent_buffers_set)))
    m.y = lib.ones(1)  # a plain tensor is a plain attribute
    log.append(("y" in m.__dict__, list(m._buffers)))
    m.z = nn_.Buffer(lib.ones(1), persistent=False)
    log.append((list(m._buffers), sorted(m._non_persistent_buffers_set), list(m.state_dict())))
    m.plain = 3
    del m.plain
    log.append(hasattr(m, "plain"))
    log.append(m.get_parameter("x").shape == (1,))
    log.append([n for n, _ in m.named_buffers()])
    return log


def scenario_to_and_modes(lib):
    _, Norm, Net = layers(lib)
    net = Net()
    weight = net.head.weight
    net.head.weight.grad = lib.ones(2, 4)
    out = [net.double() is net, weight is net.head.weight, str(weight.dtype), str(weight.grad.dtype)]
    out += [str(b.dtype) for b in net.buffers()]
    net.to(lib.float32)
    out += [str(p.dtype) for p in net.parameters()] + [str(b.dtype) for b in net.buffers()]
    net.to(lib.zeros(1, dtype=lib.float64))
    out += [str(p.dtype) for p in net.parameters()]
    net.to("cpu", lib.float16)
    out += [str(weight.dtype), weight.device.type]
    net.to(device="cpu", dtype=lib.float32)
    net.to("cpu", lib.float64, True)  # non_blocking, positionally
    net.to(lib.device("cpu"), non_blocking=True)
    out += [str(p.dtype) for p in net.parameters()]
    net.to(lib.float32)
    net.half().float()
    net.type(lib.float64)
    out += [str(p.dtype) for p in net.parameters()]
    out.append(net.train(False) is net)
    out.append([m.training for m in net.modules()])
    net.train()
    net.body.eval()
    out.append([m.training for m in net.modules()])
    out.append(net.requires_grad_(False) is net)
    out.append([p.requires_grad for p in net.parameters()])
    net.body.requires_grad_()
    out.append([p.requires_grad for p in net.parameters()])
    visited = []
    out.append(net.apply(lambda m: visited.append(type(m).__name__)) is net)
    out.append(visited)
    return out


def scenario_zero_grad(lib):
    Affine, _, _ = layers(lib)
    m = Affine(2, 3)
    m(lib.ones(4, 2)).sum().backward()
    grads = [p.grad.tolist() for p in m.parameters()]
    g = m.weight.grad
    m.zero_grad(set_to_none=False)
    kept = [m.weight.grad is g, m.weight.grad.tolist(), m.bias.grad.tolist()]
    m.zero_grad()
    return grads, kept, [p.grad for p in m.parameters()]


def scenario_repr(lib):
    Affine, Norm, Net = layers(lib)
    nn_ = lib.nn

    class Empty(nn_.Module):
        def forward(self, x):
            return x

    class Multi(nn_.Module):
        def __init__(self):
            super().__init__()
            self.a = Affine(1, 1)

        def extra_repr(self):
            return "line one\nline two"

    outer = nn_.Sequential(Net(), Empty(), Multi())
    outer.add_module("none", None)
    return [repr(outer), repr(Empty()), repr(Multi()), repr(nn_.Module()), str(Affine(2, 2))]


def scenario_parameter(lib):
    nn_ = lib.nn
    base = lib.ones(2, 2)
    p = nn_.Parameter(base)
    frozen = nn_.Parameter(lib.zeros(3), requires_grad=False)
    empty = nn_.Parameter()
    clone = copy.deepcopy(p)
    with lib.no_grad():
        base.add_(1)  # shares storage
    return [
        repr(p), repr(frozen), repr(empty), type(p).__name__, isinstance(p, lib.Tensor), p.is_leaf,
        p.requires_grad, frozen.requires_grad, p.tolist(), type(clone).__name__, clone.tolist(),
        clone.requires_grad, repr(p * 2), type(p * 2).__name__, type(p.detach()).__name__,
    ]


@pytest.mark.parametrize(
    "scenario",
    [scenario_iteration, scenario_registration_errors, scenario_assignment, scenario_to_and_modes,
     scenario_zero_grad, scenario_repr, scenario_parameter],
)
def test_parity_with_torch(parity, scenario):
    parity(scenario)


# -- the same behaviour, checked without torch -------------------------------------
def test_names_and_order():
    obs = scenario_iteration(et)
    assert obs["named_parameters"] == [
        "body.0.weight", "body.0.bias", "body.1.scale", "head.weight", "head.bias",
    ]
    assert obs["named_parameters_prefix"][0] == "model.body.0.weight"
    assert obs["named_parameters_norecurse"] == []
    assert obs["named_buffers"] == ["body.1.running", "body.1.steps", "body.1.scratch"]
    assert obs["named_modules"] == ["", "body", "body.0", "body.1", "head"]
    assert obs["named_modules_prefix"][:2] == ["m", "m.body"]
    assert obs["shared_modules"] == ["", "0"]
    assert obs["shared_modules_dup"] == ["", "0", "1"]
    assert obs["shared_params"] == ["0.weight", "0.bias"]
    assert obs["shared_params_dup"] == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert obs["shared_children"] == ["0"]


def test_repr_layout():
    text = scenario_repr(et)[0]
    assert text.splitlines()[:4] == ["Sequential(", "  (0): Net(", "    (body): Sequential(",
                                     "      (0): Affine(in=3, out=4)"]
    assert "  (2): Multi(\n    line one\n    line two\n    (a): Affine(in=1, out=1)\n  )" in text
    assert text.endswith("  (none): None\n)")


def test_registration_errors_match_pytorch_text():
    errors = scenario_registration_errors(et)
    assert errors[0] == ("TypeError", "cannot assign 'torch.FloatTensor' as parameter 'weight' "
                         "(torch.nn.Parameter or None expected)")
    assert errors[18] == ("AttributeError", "'Affine' object has no attribute 'foo'")
    assert errors[22] == ("NotImplementedError", 'Module [Module] is missing the required "forward" function')
    assert errors[-2] == ("AttributeError", "cannot assign module before Module.__init__() call")


def test_to_keeps_parameter_identity_and_skips_integer_buffers():
    out = scenario_to_and_modes(et)
    assert out[:4] == [True, True, "torch.float64", "torch.float64"]
    assert out[4:7] == ["torch.float64", "torch.int64", "torch.float64"]


def test_parameter_shares_storage_and_deepcopies():
    obs = scenario_parameter(et)
    assert obs[0] == "Parameter containing:\ntensor([[2., 2.],\n        [2., 2.]], requires_grad=True)"
    assert obs[8] == [[2.0, 2.0], [2.0, 2.0]]  # the base tensor's in-place add shows through
    assert obs[10] == [[1.0, 1.0], [1.0, 1.0]]  # the deep copy does not share
    assert obs[13] == "Tensor"


def test_module_deepcopy_is_independent():
    Affine, _, Net = layers(et)
    net = Net()
    twin = copy.deepcopy(net)
    assert [n for n, _ in twin.named_parameters()] == [n for n, _ in net.named_parameters()]
    with et.no_grad():
        twin.head.weight.fill_(5.0)
    assert net.head.weight.tolist()[0][0] == 1.0
    assert isinstance(twin.head.weight, nn.Parameter)
    x = et.ones(1, 3)
    assert np.allclose(twin(x).detach().numpy(), twin(x).detach().numpy())


def test_parameter_gradients_flow_through_module():
    Affine, _, _ = layers(et)
    m = Affine(3, 2)
    x = et.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    m(x).sum().backward()
    assert np.allclose(m.weight.grad.numpy(), np.tile(x.numpy().sum(0), (2, 1)))
    assert np.allclose(m.bias.grad.numpy(), [2.0, 2.0])
