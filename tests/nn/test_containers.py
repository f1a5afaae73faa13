"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
from collections import OrderedDict

import numpy as np
import pytest

import edutorch as et
from edutorch import nn


def observe_error(fn, *args, **kwargs):
    """``(exception type name, message)`` raised by ``fn(*args)``, or ``None`` if it returned."""
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # class paths differ only in the package name
        return type(exc).__name__, str(exc).replace("edutorch.", "torch.")
    return None


def scale_layer(lib):
    class Scale(lib.nn.Module):
        def __init__(self, k):
            super().__init__()
            self.k = lib.nn.Parameter(lib.tensor([float(k)]))

        def forward(self, x):
            return x * self.k

        def extra_repr(self):
            return f"k={self.k.item():g}"

    return Scale


def names(module):
    return [n for n, _ in module.named_modules()]


def scenario_sequential(lib):
    Scale = scale_layer(lib)
    nn_ = lib.nn
    seq = nn_.Sequential(Scale(1), Scale(2), Scale(3))
    obs = [repr(seq), len(seq), seq(lib.ones(1)).tolist(), type(seq[0]).__name__, seq[-1].k.item()]
    obs.append(repr(seq[1:]))
    obs.append(type(seq[::2]).__name__ + str(len(seq[::2])))
    seq.append(Scale(4))
    seq.insert(0, Scale(0))
    seq.insert(-1, Scale(9))
    obs.append([m.k.item() for m in seq])
    obs.append(names(seq))
    seq.extend([Scale(5)])
    del seq[1]
    obs.append((names(seq), [m.k.item() for m in seq]))
    del seq[1:3]
    obs.append((names(seq), [m.k.item() for m in seq]))
    popped = seq.pop(0)
    obs.append((popped.k.item(), names(seq)))
    seq[0] = Scale(7)
    obs.append([m.k.item() for m in seq])
    both = seq + nn_.Sequential(Scale(8))
    obs.append((repr(both), names(both)))
    obs.append(names(nn_.Sequential(Scale(1)) * 2))
    obs.append(names(3 * nn_.Sequential(Scale(1))))
    grown = nn_.Sequential(Scale(1), Scale(2))
    same = grown
    grown *= 2
    obs.append((grown is same, names(grown), [n for n, _ in grown.named_modules(remove_duplicate=False)]))
    obs.append(observe_error(grown.__mul__, 0))
    obs.append(observe_error(grown.__imul__, 1.5))
    named = nn_.Sequential(OrderedDict([("first", Scale(1)), ("second", Scale(2))]))
    obs.append((repr(named), [n for n, _ in named.named_parameters()], named.first.k.item()))
    obs.append(repr(named[1:]))
    del named[0]  # PyTorch renumbers the remaining children
    obs.append(names(named))
    obs.append(observe_error(seq.__getitem__, 10))
    obs.append(observe_error(seq.insert, 10, Scale(1)))
    obs.append(observe_error(seq.__add__, 3))
    obs.append(observe_error(seq.insert, 0, 3))
    obs.append(repr(nn_.Sequential()))
    obs.append(nn_.Sequential()(lib.ones(2)).tolist())
    return obs


def scenario_module_list(lib):
    Scale = scale_layer(lib)
    nn_ = lib.nn
    ml = nn_.ModuleList([Scale(1), Scale(1), Scale(1), Scale(2)])
    obs = [repr(ml), len(ml), [n for n, _ in ml.named_parameters()], type(ml[1:]).__name__, len(ml[1:])]
    ml.append(Scale(3))
    ml.extend([Scale(4), Scale(5)])
    ml.insert(1, Scale(6))
    ml += [Scale(7)]
    obs.append([m.k.item() for m in ml])
    del ml[0]
    obs.append(names(ml))
    ml[-1] = Scale(10)
    obs.append(ml.pop(-1).k.item())
    obs.append([m.k.item() for m in ml + nn_.ModuleList([Scale(11)])])
    obs.append(repr(nn_.ModuleList()))
    obs.append(observe_error(ml.__getitem__, 99))
    obs.append(observe_error(ml.extend, 3))
    obs.append(observe_error(ml, lib.ones(1)))
    return obs


def scenario_module_dict(lib):
    Scale = scale_layer(lib)
    nn_ = lib.nn
    md = nn_.ModuleDict({"b": Scale(1), "a": Scale(2)})
    obs = [repr(md), list(md.keys()), [n for n, _ in md.named_parameters()], "a" in md, len(md)]
    md["c"] = Scale(3)
    md.update([("d", Scale(4))])
    md.update(OrderedDict(e=Scale(5)))
    obs.append(list(md))
    obs.append([m.k.item() for m in md.values()])
    obs.append(md.pop("b").k.item())
    del md["a"]
    obs.append([k for k, _ in md.items()])
    obs.append(observe_error(md.update, 3))
    obs.append(observe_error(md.update, [("x",)]))
    obs.append(observe_error(md.update, [3]))
    md.clear()
    obs.append(len(md))
    return obs


def scenario_parameter_list(lib):
    nn_ = lib.nn
    pl = nn_.ParameterList([nn_.Parameter(lib.ones(2)), lib.zeros(3, 2)])
    obs = [repr(pl), len(pl), [type(p).__name__ for p in pl], [n for n, _ in pl.named_parameters()]]
    pl.append(lib.ones(1, dtype=lib.float64))
    pl.extend([nn_.Parameter(lib.ones(4), requires_grad=False)])
    pl.append("a string")
    obs.append(repr(pl))
    obs.append(len(pl[1:3]))
    obs.append(pl[-2].requires_grad)
    obs.append(observe_error(pl.extend, lib.ones(2)))
    obs.append(observe_error(pl, 1))
    obs.append(list(pl.state_dict()))
    single = nn_.ParameterList([lib.ones(3)])
    obs.append(repr(single))
    return obs


def scenario_parameter_dict(lib):
    nn_ = lib.nn
    pd = nn_.ParameterDict({"b": lib.ones(2), "a": nn_.Parameter(lib.zeros(1, 3))})  # a dict is sorted
    obs = [repr(pd), list(pd), [n for n, _ in pd.named_parameters()], type(pd["b"]).__name__]
    pd["c"] = lib.ones(1, dtype=lib.float64)
    pd.update(OrderedDict([("z", lib.ones(1)), ("y", lib.ones(1))]))  # an OrderedDict keeps its order
    obs.append(list(pd.keys()))
    obs.append(pd.pop("a").shape == (1, 3))
    obs.append(pd.get("nope", 5))
    obs.append(pd.setdefault("d", lib.zeros(2)).tolist())
    obs.append(pd.popitem()[0])
    obs.append(list(reversed(pd)))
    obs.append(list(pd.copy()))
    merged = pd | nn_.ParameterDict({"q": lib.ones(1)})
    obs.append(list(merged))
    obs.append(repr(pd))
    obs.append(observe_error(pd.__getitem__, 3))
    obs.append(observe_error(pd.update, 5))
    obs.append(observe_error(pd, 1))
    obs.append(list(pd.state_dict()))
    pd.clear()
    obs.append(len(pd))
    return obs


@pytest.mark.parametrize(
    "scenario",
    [scenario_sequential, scenario_module_list, scenario_module_dict, scenario_parameter_list,
     scenario_parameter_dict],
)
def test_parity_with_torch(parity, scenario):
    parity(scenario)


def test_sequential_basics():
    obs = scenario_sequential(et)
    assert obs[0] == "Sequential(\n  (0): Scale(k=1)\n  (1): Scale(k=2)\n  (2): Scale(k=3)\n)"
    assert obs[2] == [6.0]
    assert obs[5] == "Sequential(\n  (1): Scale(k=2)\n  (2): Scale(k=3)\n)"  # a slice keeps the names
    assert obs[7] == [0.0, 1.0, 2.0, 3.0, 9.0, 4.0]
    assert obs[9] == (["", "0", "1", "2", "3", "4", "5"], [0.0, 2.0, 3.0, 9.0, 4.0, 5.0])
    assert obs[-6:-4] == [("IndexError", "index 10 is out of range"), ("IndexError", "Index out of range: 10")]


def test_sequential_forward_runs_children_in_order():
    Scale = scale_layer(et)
    seq = nn.Sequential(OrderedDict([("twice", Scale(2)), ("thrice", Scale(3))]))
    x = et.tensor([1.0, 2.0], requires_grad=True)
    y = seq(x)
    y.sum().backward()
    assert y.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [6.0, 6.0]
    assert np.isclose(seq.twice.k.grad.item(), 9.0)


def test_module_list_repr_compresses_repeats():
    obs = scenario_module_list(et)
    assert obs[0] == "ModuleList(\n  (0-2): 3 x Scale(k=1)\n  (3): Scale(k=2)\n)"
    assert obs[-1] == ("NotImplementedError", 'Module [ModuleList] is missing the required "forward" function')


def test_parameter_containers_wrap_tensors():
    obs = scenario_parameter_list(et)
    assert obs[2] == ["Parameter", "Parameter"]
    assert obs[0] == (
        "ParameterList(\n    (0): Parameter containing: [torch.float32 of size 2]\n"
        "    (1): Parameter containing: [torch.float32 of size 3x2]\n)"
    )
    pd = scenario_parameter_dict(et)
    assert pd[1] == ["a", "b"]
    assert pd[0] == (
        "ParameterDict(\n    (a): Parameter containing: [torch.FloatTensor of size 1x3]\n"
        "    (b): Parameter containing: [torch.FloatTensor of size 2]\n)"
    )
