"""Lesson 02 (modules, parameters and buffers): its sentences about PyTorch, checked under real
PyTorch 2.13."""
import datetime
import io
import pickle
from collections import OrderedDict

from _claims import error_of, real_torch

torch = real_torch()
nn = torch.nn


class TinyNet(nn.Module):
    """The lesson's model: every kind of member."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))
        self.register_buffer("cache", torch.zeros(3), persistent=False)
        self.plain = torch.zeros(2)
        self.note = "just a string"

    def forward(self, x):
        self.calls += 1
        hidden = self.fc1(x).relu()
        self.cache = hidden.detach()[0, :3]
        return self.fc2(hidden) * self.scale


def test_parameter_is_a_tensor_that_requires_grad():
    """"``nn.Parameter`` is a subclass of ``Tensor`` with ``requires_grad=True`` by default"."""
    p = nn.Parameter(torch.randn(2, 3))
    assert issubclass(nn.Parameter, torch.Tensor) and p.requires_grad


def test_setattr_files_members_into_three_registries():
    """"``Module.__setattr__`` looked at the type of each value — ``Parameter``, ``Module``, or a tensor
    that is already a registered buffer — and stored it in ``_parameters``, ``_modules`` or ``_buffers``
    instead of the instance ``__dict__``"; "The ``repr`` lists only the children"; "``register_buffer``
    ... when ``persistent=False``, its name in ``_non_persistent_buffers_set``"."""
    net = TinyNet()
    assert list(net._parameters) == ["scale"] and list(net._modules) == ["fc1", "fc2"]
    assert list(net._buffers) == ["calls", "cache"] and net._non_persistent_buffers_set == {"cache"}
    assert not {"scale", "fc1", "fc2", "calls", "cache"} & set(vars(net))
    assert "plain" in vars(net) and "note" in vars(net)
    net.calls = torch.ones((), dtype=torch.int64)
    assert "calls" in net._buffers and "calls" not in vars(net)
    assert "scale" not in repr(net) and "fc1" in repr(net)


def test_a_plain_tensor_attribute_is_invisible():
    """"A plain tensor attribute like ``plain`` is invisible to ``parameters()``, ``state_dict()`` and
    ``.to()``"."""
    net = TinyNet()
    assert all(p is not net.plain for p in net.parameters()) and "plain" not in net.state_dict()
    net.to(torch.float64)
    assert net.plain.dtype == torch.float32 and net.fc1.weight.dtype == torch.float64


def test_assigning_the_wrong_type_to_a_registered_name_is_an_error():
    """"Assigning the wrong type to a registered name is an error, with PyTorch's message"."""
    error = error_of(setattr, TinyNet(), "scale", torch.ones(1))
    assert isinstance(error, TypeError)
    assert str(error) == "cannot assign 'torch.FloatTensor' as parameter 'scale' (torch.nn.Parameter or None expected)"


def test_named_parameters_order_and_container_names():
    """"``named_parameters()`` yields a module's own parameters first, then each child's, in the order
    they were assigned"; "In ``nn.Sequential`` the names are the positions ...; in ``nn.ModuleDict``
    they are the keys. A parameter shared by two modules is listed **once**"."""
    assert [n for n, _ in TinyNet().named_parameters()] == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    heads = nn.ModuleDict({"digits": nn.Linear(3, 10), "parity": nn.Linear(3, 2)})
    assert [n for n, _ in heads.named_parameters()] == ["digits.weight", "digits.bias", "parity.weight", "parity.bias"]
    tied = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    tied[1].weight = tied[0].weight
    assert [n for n, _ in tied.named_parameters()] == ["0.weight", "0.bias", "1.bias"]


def test_a_plain_list_is_not_registered_a_module_list_is():
    """"Layers kept in a plain list are invisible to ``parameters()`` ..., to ``state_dict()`` and to
    ``.to()``"; "``nn.ModuleList`` ... its items become children named ``layers.0``, ``layers.1``"."""
    class PlainList(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(2, 2), nn.Linear(2, 2)]

    class Listed(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])

    plain = PlainList()
    assert list(plain.parameters()) == [] and list(plain.state_dict()) == []
    plain.to(torch.float64)
    assert plain.layers[0].weight.dtype == torch.float32
    assert list(Listed().state_dict()) == ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias"]


def test_buffers_follow_to_but_not_parameters_and_non_persistent_ones_are_not_saved():
    """"Buffers follow the model in ``.to()`` and ``state_dict()``; ``parameters()`` ignores them. A
    **non-persistent** buffer (``persistent=False``) also follows ``.to()``, but is left out of
    ``state_dict()``"."""
    net = TinyNet()
    assert all(p is not b for p in net.parameters() for b in net.buffers())
    net.to(torch.float64)
    assert net.cache.dtype == torch.float64 and net.calls.dtype == torch.int64
    assert "cache" not in net.state_dict() and "calls" in net.state_dict()


def test_state_dict_is_ordered_parameters_then_buffers_then_children():
    """"``state_dict()`` ... returns an ``OrderedDict`` ...: each module's parameters, then its
    persistent buffers, then its children"."""
    state = TinyNet().state_dict()
    assert isinstance(state, OrderedDict)
    assert list(state) == ["scale", "calls", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]


def test_load_state_dict_reports_and_refuses_mismatches():
    """"It returns the keys that did not match; with ``strict=True`` (the default) any mismatch is an
    error that names every bad key"; "A shape mismatch is an error too"."""
    state = TinyNet().state_dict()
    fresh = TinyNet()
    assert str(fresh.load_state_dict(state)) == "<All keys matched successfully>"
    error = error_of(fresh.load_state_dict, {"scale": state["scale"], "extra": torch.zeros(1)})
    assert isinstance(error, RuntimeError)
    for key in ("calls", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "extra"):
        assert f'"{key}"' in str(error)
    result = fresh.load_state_dict({"scale": state["scale"]}, strict=False)
    assert result.missing_keys == ["calls", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    error = error_of(nn.Linear(4, 2).load_state_dict, nn.Linear(4, 3).state_dict())
    assert isinstance(error, RuntimeError) and "size mismatch for weight" in str(error)


def test_torch_load_is_weights_only_by_default():
    """"Since PyTorch 2.6, ``torch.load`` defaults to ``weights_only=True``: it unpickles only tensors,
    dicts, lists and plain numbers and refuses anything else (``UnpicklingError: Weights only load
    failed``); ``weights_only=False`` loads arbitrary objects"; "``torch.save`` writes a zip"."""
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2), "steps": [1, 2.5], "thing": datetime.date(2025, 1, 1)}, buffer)
    assert buffer.getvalue()[:2] == b"PK"
    buffer.seek(0)
    error = error_of(torch.load, buffer)
    assert isinstance(error, pickle.UnpicklingError) and "Weights only load failed" in str(error)
    buffer.seek(0)
    assert torch.load(buffer, weights_only=False)["thing"] == datetime.date(2025, 1, 1)
    plain = io.BytesIO()
    torch.save({"w": torch.ones(2), "steps": [1, 2.5]}, plain)
    plain.seek(0)
    assert torch.load(plain)["steps"] == [1, 2.5]


def test_train_and_eval_reach_all_descendants():
    """"``model.train()`` and ``model.eval()`` set it on the module **and all its descendants**"."""
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(), nn.BatchNorm1d(2)))
    model.eval()
    assert not any(m.training for m in model.modules())


def test_to_dtype_keeps_the_parameter_objects():
    """"``model.to(torch.float64)`` converts every floating-point parameter and buffer in place — the
    ``Parameter`` objects stay the same, so an optimizer built before still holds them"."""
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    first = model[0].weight
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.to(torch.float64)
    assert model[0].weight is first and first.dtype == torch.float64
    assert optimizer.param_groups[0]["params"][0] is first


def test_load_state_dict_copies_the_tensors():
    """"``load_state_dict`` copies the tensors into a model with the same names and shapes" (exercise 2.3:
    the two models "compute the same thing but do not share their tensors")."""
    source, target = nn.Linear(3, 2), nn.Linear(3, 2)
    target.load_state_dict(source.state_dict())
    assert torch.equal(target.weight, source.weight)
    with torch.no_grad():
        source.weight.add_(1)
    assert not torch.equal(target.weight, source.weight)
