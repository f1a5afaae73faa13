"""state_dict / load_state_dict: key order, metadata, errors, assign, hooks, overrides."""
from collections import OrderedDict

import numpy as np
import pytest

import edutorch as et


def observe_error(fn, *args, **kwargs):
    """``(exception type name, message)`` raised by ``fn(*args)``, or ``None`` if it returned."""
    try:
        fn(*args, **kwargs)
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return None


def model(lib, out=2):
    """A small tree: params, persistent + non-persistent + None buffers, a reserved param."""
    nn_ = lib.nn

    class Leaf(nn_.Module):
        def __init__(self, i, o):
            super().__init__()
            self.weight = nn_.Parameter(lib.arange(float(o * i)).reshape(o, i))
            self.bias = nn_.Parameter(lib.zeros(o))
            self.register_buffer("count", lib.tensor(0))
            self.register_buffer("cache", lib.ones(o), persistent=False)
            self.register_buffer("empty", None)
            self.register_parameter("reserved", None)

        def forward(self, x):
            return x @ self.weight.t() + self.bias

    class Tree(nn_.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("step", lib.zeros(1))
            self.scale = nn_.Parameter(lib.ones(1))
            self.layers = nn_.Sequential(Leaf(4, 3), Leaf(3, out))
            self.head = Leaf(out, 1)

    return Tree()


def describe_sd(sd):
    return [(k, type(v).__name__, tuple(v.shape), str(v.dtype), v.requires_grad) for k, v in sd.items()]


def scenario_keys(lib):
    m = model(lib)
    sd = m.state_dict()
    kv = m.state_dict(keep_vars=True)
    pref = m.state_dict(prefix="model.")
    return [
        type(sd).__name__, describe_sd(sd), list(sd._metadata.items()), describe_sd(kv),
        list(pref), list(pref._metadata), sd["scale"] is m.scale, kv["scale"] is m.scale,
        np.shares_memory(np.asarray(sd["layers.0.weight"]), np.asarray(m.layers[0].weight.detach())),
        list(m.layers.state_dict()), list(m.head.state_dict()),
    ]


def scenario_load_errors(lib):
    m = model(lib)
    good = m.state_dict()
    obs = [repr(m.load_state_dict(good)), str(m.load_state_dict(good))]

    missing = OrderedDict(good)
    del missing["layers.1.bias"], missing["scale"]
    missing["layers.9.weight"] = lib.ones(1)
    missing["extra"] = lib.ones(1)
    missing["head.bogus"] = lib.ones(1)
    obs.append(observe_error(m.load_state_dict, missing))
    result = m.load_state_dict(missing, strict=False)
    obs.append((repr(result), result.missing_keys, result.unexpected_keys, type(result).__name__))

    shapes = OrderedDict(good)
    shapes["layers.1.weight"] = lib.ones(5, 3)
    shapes["scale"] = lib.ones(2)
    obs.append(observe_error(m.load_state_dict, shapes))
    obs.append(observe_error(m.load_state_dict, shapes, strict=False))

    not_tensor = OrderedDict(good)
    not_tensor["scale"] = 3.0
    obs.append(observe_error(m.load_state_dict, not_tensor))
    obs.append(observe_error(m.load_state_dict, [1, 2]))

    # a 1-element checkpoint tensor loads into a 0-dim buffer (PyTorch's 0.3 compatibility rule)
    old = OrderedDict(good)
    old["layers.0.count"] = lib.tensor([7])
    m.load_state_dict(old)
    obs.append(m.layers[0].count.tolist())
    return obs


def scenario_load_copies_values(lib):
    src, dst = model(lib), model(lib)
    with lib.no_grad():
        for p in src.parameters():
            p.mul_(-2)
        src.step.fill_(5)
    weight = dst.layers[0].weight
    version = weight._version
    out = [repr(dst.load_state_dict(src.state_dict()))]
    out.append(weight is dst.layers[0].weight)  # copied in place
    out.append(weight._version > version)
    out.append(dst.layers[0].weight.tolist() == src.layers[0].weight.tolist())
    out.append(dst.step.tolist())
    out.append(dst.layers[0].weight.requires_grad)

    # assign=True: the module takes the checkpoint's tensors
    sd = src.state_dict()
    third = model(lib)
    third.load_state_dict(sd, assign=True)
    out.append(type(third.scale).__name__)
    out.append(third.scale.requires_grad)
    out.append(np.shares_memory(np.asarray(third.scale.detach()), np.asarray(sd["scale"])))
    out.append(third.step is sd["step"])
    return out


def scenario_hooks_and_overrides(lib):
    nn_ = lib.nn
    log = []

    class Versioned(nn_.Module):
        """Renames an old key while loading, like BatchNorm handles num_batches_tracked."""

        def __init__(self):
            super().__init__()
            self.w = nn_.Parameter(lib.zeros(2))

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
            log.append(("load", prefix, local_metadata.get("version")))
            old = prefix + "old_w"
            if old in state_dict:
                state_dict[prefix + "w"] = state_dict.pop(old)
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)

    class WithExtra(nn_.Module):
        def __init__(self):
            super().__init__()
            self.note = "hello"

        def get_extra_state(self):
            return {"note": self.note}

        def set_extra_state(self, state):
            self.note = state["note"] + "!"

    outer = nn_.Sequential(Versioned(), WithExtra())
    sd = outer.state_dict()
    log.append(list(sd))
    log.append(sd["1._extra_state"])
    sd["0.old_w"] = sd.pop("0.w") + 1
    h = outer.register_load_state_dict_post_hook(lambda mod, keys: log.append(("post", list(keys.missing_keys))))
    log.append(repr(outer.load_state_dict(sd)))
    log.append((outer[0].w.tolist(), outer[1].note))
    h.remove()

    outer._register_state_dict_hook(lambda mod, dest, prefix, meta: log.append(("sd hook", prefix, list(dest))))
    outer.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("sd pre", prefix, keep_vars)))
    outer.state_dict()
    outer[0].register_state_dict_post_hook(lambda mod, dest, prefix, meta: 5)
    log.append(observe_error(outer.state_dict))
    return log


@pytest.mark.parametrize(
    "scenario", [scenario_keys, scenario_load_errors, scenario_load_copies_values, scenario_hooks_and_overrides]
)
def test_parity_with_torch(parity, scenario):
    parity(scenario)


# -- without torch ---------------------------------------------------------------------
def test_key_order_and_metadata():
    obs = scenario_keys(et)
    assert obs[0] == "OrderedDict"
    assert [k for k, *_ in obs[1]] == [
        "scale", "step", "layers.0.weight", "layers.0.bias", "layers.0.count", "layers.1.weight",
        "layers.1.bias", "layers.1.count", "head.weight", "head.bias", "head.count",
    ]
    assert all(not rg for *_, rg in obs[1])  # detached
    assert obs[2][:2] == [("", {"version": 1}), ("layers", {"version": 1})]
    assert obs[4][0] == "model.scale" and obs[5][0] == "model"
    assert obs[6:9] == [False, True, True]


def test_error_text_names_every_bad_key():
    obs = scenario_load_errors(et)
    assert obs[0] == "<All keys matched successfully>"
    assert obs[2] == (
        "RuntimeError",
        "Error(s) in loading state_dict for Tree:\n"
        '\tMissing key(s) in state_dict: "scale", "layers.1.bias". \n'
        '\tUnexpected key(s) in state_dict: "extra", "layers.9.weight", "head.bogus". ',
    )
    assert obs[3][0].startswith("_IncompatibleKeys(missing_keys=['scale', 'layers.1.bias']")
    assert obs[4] == (
        "RuntimeError",
        "Error(s) in loading state_dict for Tree:\n"
        "\tsize mismatch for scale: copying a param with shape torch.Size([2]) from checkpoint, "
        "the shape in current model is torch.Size([1]).\n"
        "\tsize mismatch for layers.1.weight: copying a param with shape torch.Size([5, 3]) from "
        "checkpoint, the shape in current model is torch.Size([2, 3]).",
    )
    assert obs[-1] == 7


def test_load_copies_in_place_or_assigns():
    assert scenario_load_copies_values(et) == [
        "<All keys matched successfully>", True, True, True, [5.0], True, "Parameter", True, True, True,
    ]


def test_load_from_state_dict_override_and_extra_state():
    log = scenario_hooks_and_overrides(et)
    assert log[0] == ["0.w", "1._extra_state"]
    assert log[1] == {"note": "hello"}
    assert ("load", "0.", 1) in log
    assert log[4] == "<All keys matched successfully>"
    assert log[5] == ([1.0, 1.0], "hello!")
    assert log[-1] == ("RuntimeError", "state_dict post-hook must return None")


def test_state_dict_round_trip_restores_outputs():
    a, b = model(et), model(et, out=2)
    with et.no_grad():
        for p in a.parameters():
            p.add_(et.randn(*p.shape))
    b.load_state_dict(a.state_dict())
    x = et.randn(5, 4)
    ya = a.head(a.layers(x))
    yb = b.head(b.layers(x))
    assert np.allclose(ya.detach().numpy(), yb.detach().numpy())
