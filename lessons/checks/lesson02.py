"""Checks of lesson 02 · Modules, parameters and buffers (lessons/02-modules-parameters-buffers.ipynb)."""

import numpy as np

import edutorch

from ._common import (
    _correct,
    _hint,
    _library,
    _state_arrays,
    _values,
    exercise,
)


def _names(pairs):
    return [name for name, _ in pairs]


@exercise
def exercise_2_1(affine_class):
    """``Affine(n)``: parameters ``weight`` (ones) and ``bias`` (zeros), forward ``x*w + b``."""
    try:
        module = affine_class(3)
    except Exception as error:
        return _hint(f"Affine(3) raised {type(error).__name__}: {error}")
    names = _names(module.named_parameters())
    if names != ["weight", "bias"]:
        return _hint(
            f"named_parameters() gives {names}; expected ['weight', 'bias']. Assign "
            "nn.Parameter objects to self.weight and then self.bias, after super().__init__()"
        )
    lib = _library(module)
    weight, bias = module.weight, module.bias
    if tuple(weight.shape) != (3,) or tuple(bias.shape) != (3,):
        return _hint(f"with n=3 both parameters must have shape (3,), got {tuple(weight.shape)} "
                     f"and {tuple(bias.shape)}")
    if not (np.all(_values(weight) == 1) and np.all(_values(bias) == 0)):
        return _hint("weight must start as ones and bias as zeros")
    x = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]])
    with lib.no_grad():
        weight.mul_(2.0)
        bias.add_(0.5)
    out = module(x)
    if not np.allclose(_values(out), _values(x) * 2.0 + 0.5):
        return _hint("forward must return x * self.weight + self.bias")
    out.sum().backward()
    if weight.grad is None or not np.allclose(_values(weight.grad), _values(x).sum(0)):
        return _hint("the gradient does not reach self.weight: use the parameters in forward")
    return _correct("weight and bias are registered, in order, and trained by backward")


class Block(edutorch.nn.Module):
    """The last child of exercise 2.2's model: a parameter, two buffers and a child."""

    def __init__(self):
        super().__init__()
        self.encoder = edutorch.nn.Linear(4, 2)
        self.gain = edutorch.nn.Parameter(edutorch.ones(2))
        self.register_buffer("step", edutorch.tensor(0))
        self.register_buffer("scratch", edutorch.zeros(2), persistent=False)

    def forward(self, x):
        self.step += 1
        return self.encoder(x) * self.gain

    def extra_repr(self):
        # the printed model shows only children; name the module's own tensors too,
        # so exercise 2.2 can be solved from print(model)
        return ("gain: Parameter of shape (2,), step: buffer, "
                "scratch: buffer (persistent=False)")


def exercise_2_2_model():
    """The model whose ``state_dict`` keys exercise 2.2 asks for."""
    nn = edutorch.nn
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), Block())


@exercise
def exercise_2_2(keys):
    """The keys of ``exercise_2_2_model().state_dict()``, in order."""
    expected = list(exercise_2_2_model().state_dict())
    if isinstance(keys, str) or not hasattr(keys, "__iter__") or isinstance(keys, dict):
        return _hint("pass a list of strings such as ['0.weight', ...] (or state_dict().keys())")
    keys = list(keys)
    if not keys:
        return _hint("the list is empty: write the keys of model.state_dict(), in order")
    if keys == expected:
        return _correct(f"all {len(expected)} keys, in state_dict order")
    missing = [k for k in expected if k not in keys]
    extra = [k for k in keys if k not in expected]
    if "3.scratch" in extra:
        return _hint("'3.scratch' is a non-persistent buffer: state_dict leaves it out")
    if any(k.startswith("2.") for k in extra):
        return _hint("ReLU at index 2 has no parameters or buffers, so no key starts with '2.'")
    if missing:
        return _hint(f"missing: {missing}")
    if extra:
        return _hint(f"not in the state_dict: {extra}")
    return _hint(
        "the right keys in the wrong order: each module lists its own parameters, then its "
        "persistent buffers, and only then its children (Block: gain, step, then encoder.*)"
    )


@exercise
def exercise_2_3(source, copy):
    """``copy`` holds the same state as ``source`` but shares no tensor with it."""
    if copy is None or not hasattr(copy, "state_dict"):
        return _hint("copy is not a model yet: build a new nn.Sequential and load the saved state into it")
    if source is copy:
        return _hint("pass two different models: the source and the one you loaded into")
    src, dst = _state_arrays(source), _state_arrays(copy)
    if list(src) != list(dst):
        return _hint(f"the models have different keys: {list(src)} vs {list(dst)}")
    for key in src:
        if src[key].shape != dst[key].shape or not np.array_equal(src[key], dst[key]):
            return _hint(f"{key!r} differs: did you call copy.load_state_dict(torch.load(path))?")
    for (name, a), b in zip(source.named_parameters(), copy.parameters()):
        if a is b:
            return _hint(f"both models hold the same Parameter object {name!r}: build a new model")
    lib = _library(source)
    x = lib.randn(3, source[0].in_features) if hasattr(source[0], "in_features") else None
    if x is not None:
        with lib.no_grad():
            if not np.allclose(_values(source(x)), _values(copy(x))):
                return _hint("same state_dict but different outputs: is the architecture the same?")
    return _correct(f"{len(src)} tensors restored; the two models are independent copies")


@exercise
def exercise_2_4(running_max_class):
    """``RunningMax``: persistent ``max_seen`` updated in training, non-persistent ``last``."""
    module = running_max_class()
    lib = _library(module)
    buffers = dict(module.named_buffers())
    if set(buffers) != {"max_seen", "last"}:
        return _hint(f"named_buffers() gives {sorted(buffers)}; expected 'max_seen' and 'last'")
    if list(module.state_dict()) != ["max_seen"]:
        return _hint(
            f"state_dict() keys are {list(module.state_dict())}; only 'max_seen' is persistent: "
            "register 'last' with persistent=False"
        )
    if list(module.parameters()):
        return _hint("RunningMax must have no parameters: buffers are not trained")
    if not np.isneginf(_values(module.max_seen)).all():
        return _hint("max_seen must start at -inf: torch.tensor(float('-inf'))")
    module.train()
    x = lib.tensor([0.5, 3.0, -1.0])
    out = module(x)
    if not np.array_equal(_values(out), _values(x)):
        return _hint("forward must return x unchanged")
    module(lib.tensor([1.0, 2.0]))
    if float(_values(module.max_seen)) != 3.0:
        return _hint(f"after inputs [0.5, 3, -1] and [1, 2] max_seen should be 3.0, "
                     f"got {float(_values(module.max_seen))}")
    module.eval()
    module(lib.tensor([10.0]))
    if float(_values(module.max_seen)) != 3.0:
        return _hint("in eval mode (self.training is False) max_seen must not change")
    if not np.array_equal(_values(module.last), [10.0]):
        return _hint("'last' must hold the last input, in both modes")
    if "max_seen" not in dict(module.named_buffers()):
        return _hint("max_seen is no longer a buffer: assign a tensor to self.max_seen")
    return _correct("max_seen is saved and tracks training inputs; last is a non-persistent cache")
