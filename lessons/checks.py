"""Automatic checks for the lesson exercises.

Each exercise is followed by a graded cell such as ``checks.exercise_1_1(x)``.
The check recomputes the right answer itself (nothing is hard-coded) and
compares:

* a right answer returns a :class:`Result`, which Jupyter shows as one line,
  ``✓ correct: ...``;
* a wrong answer prints ``✗ not yet: <a hint>`` and raises :class:`NotYet`
  (an ``AssertionError``), so the cell fails. nbgrader scores a graded cell
  that raises as 0 and one that runs as full marks: the same call is the
  student's self-check and the autograder's test.

``checks.exercise_1_1.check(x)`` runs the same check without raising and
returns the :class:`Result` (``bool(result)`` says whether it passed): use it
in scripts and tests.

The checks accept edutorch objects and real PyTorch objects alike: a check
builds its own test inputs with the library the answer comes from.
"""
from __future__ import annotations

import copy
import functools
import math
import sys
import warnings

import numpy as np

import edutorch


class Result:
    """The outcome of one check: ``ok`` plus a message for the student."""

    def __init__(self, ok, message):
        self.ok = bool(ok)
        self.message = message

    def __bool__(self):
        return self.ok

    def __repr__(self):
        mark = "✓ correct" if self.ok else "✗ not yet"
        return f"{mark}: {self.message}"


class NotYet(AssertionError):
    """A graded check failed: the message is the hint (nbgrader records the cell as failed)."""


def exercise(check):
    """Turn a check returning a :class:`Result` into a graded check.

    The graded function returns the Result when it is right, and otherwise
    prints it and raises :class:`NotYet`. A check that crashes on an
    unexpected answer (``None``, a wrong type) is reported as a hint, never
    as an error inside this module. ``graded.check`` returns the Result only.
    """

    @functools.wraps(check)
    def result_of(*args, **kwargs):
        try:
            return check(*args, **kwargs)
        except NotYet:
            raise
        except Exception as error:  # the answer is not something the check can use
            return _hint(f"the check could not use your answer: {type(error).__name__}: {error}")

    @functools.wraps(check)
    def graded(*args, **kwargs):
        __tracebackhide__ = True  # IPython and pytest: show the hint, not this frame
        result = result_of(*args, **kwargs)
        if not result:
            print(repr(result))
            raise NotYet(result.message)
        return result

    graded.check = result_of
    return graded


def _correct(message):
    return Result(True, message)


def _hint(message):
    return Result(False, message)


def _values(tensor):
    """A float64 NumPy copy of an edutorch or torch tensor (or a plain number/list)."""
    if hasattr(tensor, "detach"):
        tensor = tensor.detach()
    if hasattr(tensor, "cpu"):
        tensor = tensor.cpu()
    if hasattr(tensor, "numpy"):
        return np.asarray(tensor.numpy(), dtype=np.float64)
    return np.asarray(tensor, dtype=np.float64)


def _is_tensor(obj):
    return hasattr(obj, "requires_grad") and hasattr(obj, "grad_fn")


def _library(obj):
    """``torch`` if ``obj`` (an object or a class) comes from real PyTorch, else ``edutorch``.

    A student's own ``nn.Module`` or ``autograd.Function`` subclass is recognised
    by its base classes, so the check can build its inputs with the same library.
    """
    klass = obj if isinstance(obj, type) else type(obj)
    for base in klass.__mro__:
        if base.__module__.split(".")[0] == "torch" and "torch" in sys.modules:
            return sys.modules["torch"]
    return edutorch


def _linear_layers(net):
    """``(name, module)`` for every ``nn.Linear`` of ``net``, in the library ``net`` comes from."""
    linear = _library(net).nn.Linear
    return [(name, m) for name, m in net.named_modules() if isinstance(m, linear)]


def _node_name(node):
    """``MulBackward0``, ``AccumulateGrad``, ``MyFnBackward``: the class name of a graph node."""
    return type(node).__name__


# --- lesson 01: tensors and autograd ----------------------------------------------------


@exercise
def exercise_1_1(x):
    """``x`` is a leaf with ``x.grad`` = d/dx (x**3 - 3*x), computed by ``backward()``."""
    if x is None:
        return _hint("x is None: create the leaf x = 2.0 with requires_grad=True, build f from it "
                     "and call f.backward()")
    if not _is_tensor(x):
        return _hint("pass the tensor x itself, e.g. checks.exercise_1_1(x)")
    if not x.requires_grad:
        if x.grad_fn is None and x.grad is None:
            return _hint("this tensor does not require grad. Pass x itself (not x.grad), and create "
                         "it with requires_grad=True, otherwise autograd does not track it")
        return _hint("create x with requires_grad=True, otherwise autograd does not track it")
    if not x.is_leaf:
        return _hint("x must be a leaf: create it with torch.tensor(..., requires_grad=True)")
    if x.grad is None:
        return _hint("x.grad is None: build f from x, then call f.backward()")
    value = _values(x)
    expected = 3 * value**2 - 3
    got = _values(x.grad)
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
        times = _multiple(got, expected)
        if times is not None:
            return _hint(
                f"x.grad is {got}, {times}× the derivative {expected}: gradients ACCUMULATE, "
                f"so backward ran {times} times. Set x.grad = None (or build a new x) and call "
                "backward once."
            )
        return _hint(f"x.grad is {got} but d/dx (x**3 - 3*x) at x={value} is {expected}")
    return _correct(f"x.grad = 3·x² − 3 = {got.tolist()} at x = {value.tolist()}")


def _multiple(got, expected):
    """``k`` when ``got`` is ``k`` times ``expected`` for an integer ``k`` >= 2, else None."""
    if got.shape != expected.shape or not np.any(expected):
        return None
    k = float(np.sum(got * expected) / np.sum(expected * expected))
    if round(k) >= 2 and np.allclose(got, round(k) * expected, rtol=1e-5, atol=1e-6):
        return round(k)
    return None


def graph_path(loss):
    """Node names from ``loss.grad_fn`` along the FIRST edge until a node has no edges."""
    names = []
    node = loss.grad_fn
    while node is not None:
        names.append(_node_name(node))
        edges = [edge for edge in node.next_functions if edge[0] is not None]
        node = edges[0][0] if edges else None
    return names


@exercise
def exercise_1_2(names):
    """The node names met walking ``((a * b) + c).exp().sum()`` along first edges."""
    a = edutorch.tensor([1.0, 2.0], requires_grad=True)
    b = edutorch.tensor([3.0, 4.0], requires_grad=True)
    c = edutorch.tensor([0.5, 0.5], requires_grad=True)
    expected = graph_path(((a * b) + c).exp().sum())
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        return _hint("pass a list of names, e.g. ['SumBackward0', ...]")
    names = list(names)
    if names == expected:
        return _correct(" → ".join(expected))
    if names == expected[:-1]:
        return _hint("almost: the walk ends at the leaf a, whose node is an 'AccumulateGrad'")
    if names and names[0] != expected[0]:
        return _hint(f"start at loss.grad_fn: its name is {expected[0]!r}")
    for i, (got, want) in enumerate(zip(names, expected)):
        if got != want:
            return _hint(f"step {i} should be {want!r}, not {got!r} (look at .next_functions[0][0])")
    return _hint(f"the walk has {len(expected)} nodes; you gave {len(names)}")


@exercise
def exercise_1_3(w):
    """``w.grad`` holds the gradient of ``(w ** 2).sum()`` exactly once (no accumulation)."""
    if not _is_tensor(w) or w.grad is None:
        return _hint("w.grad is None: call backward() on (w ** 2).sum() after resetting w.grad")
    expected = 2 * _values(w)
    got = _values(w.grad)
    if np.allclose(got, expected):
        return _correct(f"w.grad = 2·w = {got.tolist()}, computed once")
    times = _multiple(got, expected)
    if times is not None:
        return _hint(
            f"w.grad is {times}× the gradient: the old gradients are still there. "
            "Set w.grad = None (or w.grad.zero_()) BEFORE calling backward."
        )
    return _hint(f"w.grad is {got.tolist()} but the gradient of (w**2).sum() is {expected.tolist()}")


@exercise
def exercise_1_4(function_class):
    """A custom ``autograd.Function`` computing the sigmoid, with a correct backward."""
    if not (isinstance(function_class, type) and hasattr(function_class, "apply")):
        return _hint("pass the class itself (e.g. MySigmoid), not MySigmoid.apply or an instance")
    lib = _library(function_class)
    x = lib.tensor([-2.0, -0.5, 0.0, 0.7, 3.0], dtype=lib.float64, requires_grad=True)
    try:
        y = function_class.apply(x)
    except Exception as error:
        return _hint(f"forward raised {type(error).__name__}: {error}")
    if not _is_tensor(y):
        return _hint("forward must return a tensor")
    if y.shape != x.shape or not np.allclose(_values(y), 1 / (1 + np.exp(-_values(x)))):
        return _hint("forward does not compute the sigmoid 1 / (1 + exp(-x))")
    if y.grad_fn is None:
        return _hint("the output has no grad_fn: call the Function through .apply(x)")
    expected_name = function_class.__name__ + "Backward"
    if _node_name(y.grad_fn) != expected_name:
        return _hint(f"the output's grad_fn should be a {expected_name}")
    try:
        ok = lib.autograd.gradcheck(function_class.apply, (x,), raise_exception=False)
    except Exception as error:  # a backward that crashes is a hint too
        return _hint(f"backward raised {type(error).__name__}: {error}")
    if not ok:
        return _hint(
            "gradcheck failed: backward must return grad_output * y * (1 - y) "
            "(save y in forward with ctx.save_for_backward)"
        )
    return _correct(f"{expected_name} passes gradcheck in float64")


# --- lesson 02: modules, parameters and buffers --------------------------------------------


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


def _state_arrays(module):
    return {key: _values(value) for key, value in module.state_dict().items()}


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


# --- lesson 03: hooks --------------------------------------------------------------------------


def record_hook_order(model, x):
    """``"<name> <kind>"`` for every hook call of one forward+backward pass of ``model``.

    Hooks of all four kinds go on every child of ``model``; they are removed afterwards.
    """
    events, handles = [], []
    for name, module in model.named_children():
        handles += [
            module.register_forward_pre_hook(lambda m, args, n=name: events.append(f"{n} forward_pre")),
            module.register_forward_hook(lambda m, args, out, n=name: events.append(f"{n} forward")),
            module.register_full_backward_pre_hook(
                lambda m, grad_out, n=name: events.append(f"{n} backward_pre")),
            module.register_full_backward_hook(
                lambda m, grad_in, grad_out, n=name: events.append(f"{n} backward")),
        ]
    try:
        with warnings.catch_warnings():  # x needs no grad: module 0's hook sees grad_output only
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return events


@exercise
def exercise_3_1(order):
    """The hook calls of ``Sequential(Linear, Tanh)`` for one forward and backward pass."""
    nn = edutorch.nn
    expected = record_hook_order(nn.Sequential(nn.Linear(3, 2), nn.Tanh()), edutorch.randn(4, 3))
    if isinstance(order, str) or not isinstance(order, (list, tuple)):
        return _hint("pass a list of strings such as ['0 forward_pre', ...]")
    if not order:
        return _hint("the list is empty: write one '<module name> <hook kind>' string per hook call")
    order = [" ".join(str(item).split()) for item in order]
    if order == expected:
        return _correct(f"{len(expected)} calls: forward first to last, backward last to first")
    if sorted(order) == sorted(expected):
        if order[:4] != expected[:4]:
            return _hint("forward: each layer runs pre-hook, forward, forward hook before the next layer starts")
        return _hint("backward goes from the LAST layer to the first, and a layer's backward_pre "
                     "fires before its backward hook")
    return _hint(f"expected {len(expected)} calls, two hooks per layer in each direction; "
                 f"names are the child names '0' and '1'")


@exercise
def exercise_3_2(net, inputs, activations):
    """``activations`` maps each ``nn.Linear``'s name to its output; no hook is left behind."""
    lib = _library(net)
    linear_names = [name for name, _ in _linear_layers(net)]
    if not isinstance(activations, dict) or not activations:
        return _hint("activations is empty: did the hooks run? Call net(inputs) after registering them")
    if sorted(activations) != sorted(linear_names):
        return _hint(f"activations has keys {sorted(activations)}; expected the Linear layers "
                     f"{linear_names} (names from named_modules())")
    leftover = [name for name, m in net.named_modules() if m._forward_hooks]
    if leftover:
        return _hint(f"hooks are still registered on {leftover}: call handle.remove() on each handle")
    expected, h = {}, inputs
    with lib.no_grad():
        for name, module in net.named_children():
            h = module(h)
            if name in linear_names:
                expected[name] = _values(h)
    for name in linear_names:
        got = activations[name]
        if _is_tensor(got) and got.requires_grad:
            return _hint(f"activations[{name!r}] is still part of the graph: store output.detach()")
        got = _values(got)
        if got.shape != expected[name].shape or not np.allclose(got, expected[name], atol=1e-6):
            return _hint(f"activations[{name!r}] is not the output of layer {name!r}")
    return _correct(f"captured {len(linear_names)} activations and removed every hook")


@exercise
def exercise_3_3(hook):
    """A full backward hook that clamps every ``grad_input`` to [-0.1, 0.1]."""
    nn = edutorch.nn
    layer = nn.Linear(4, 3)
    with edutorch.no_grad():
        layer.weight.mul_(4.0)  # gradients large enough to need clipping
    x_values = edutorch.randn(5, 4).numpy()
    x_plain = edutorch.tensor(x_values, requires_grad=True)
    layer(x_plain).pow(2).sum().backward()
    expected = np.clip(_values(x_plain.grad), -0.1, 0.1)
    if np.array_equal(expected, _values(x_plain.grad)):
        raise AssertionError("check setup: the gradient should need clipping")
    x = edutorch.tensor(x_values, requires_grad=True)
    handle = layer.register_full_backward_hook(hook)
    try:
        layer(x).pow(2).sum().backward()
    except Exception as error:
        return _hint(f"backward raised {type(error).__name__}: {error}")
    finally:
        handle.remove()
    if x.grad is None:
        return _hint("x.grad is None: return a tuple with one entry per grad_input")
    got = _values(x.grad)
    if np.allclose(got, _values(x_plain.grad), atol=1e-6):
        return _hint("x.grad is unchanged: the hook must RETURN the new grad_input")
    if not np.allclose(got, expected, atol=1e-6):
        return _hint("x.grad is not grad_input clamped to [-0.1, 0.1]")
    # an input that needs no gradient: grad_input is (None,), and None must stay None
    data = edutorch.tensor(x_values)  # requires_grad=False
    handle = layer.register_full_backward_hook(hook)
    try:
        with warnings.catch_warnings():  # the input needs no grad: PyTorch's warning, expected here
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            layer(data).pow(2).sum().backward()
    except Exception as error:
        return _hint(f"with an input that needs no gradient, grad_input is (None,) and the hook "
                     f"raised {type(error).__name__}: {error}. Keep None entries as None")
    finally:
        handle.remove()
    return _correct("earlier layers receive the clamped gradient, and None entries stay None")


@exercise
def exercise_3_4(hook):
    """A forward pre-hook that clamps the first input to [-1, 1]."""
    layer = edutorch.nn.Linear(3, 2)
    x = edutorch.tensor([[-3.0, 0.5, 2.0], [0.2, -0.9, 5.0]])
    handle = layer.register_forward_pre_hook(hook)
    try:
        got = layer(x)
    except Exception as error:
        return _hint(f"the call raised {type(error).__name__}: {error}")
    finally:
        handle.remove()
    with edutorch.no_grad():
        expected = _values(layer(x.clamp(-1.0, 1.0)))
        unchanged = _values(layer(x))
    got = _values(got)
    if np.allclose(got, expected, atol=1e-6):
        return _correct("forward saw the clamped input")
    if np.allclose(got, unchanged, atol=1e-6):
        return _hint("the output did not change: the pre-hook must RETURN the new args")
    return _hint("the output is not layer(x.clamp(-1, 1)): clamp only the first input, to [-1, 1]")


# --- lesson 04: pruning ----------------------------------------------------------------------------


def _prune(net=None):
    """The ``prune`` module of the library ``net`` comes from (edutorch's by default)."""
    lib = _library(net) if net is not None else edutorch
    import importlib

    return importlib.import_module(lib.__name__ + ".nn.utils.prune")


def _sparsity(tensor):
    values = _values(tensor)
    return float(np.count_nonzero(values == 0) / values.size)


@exercise
def exercise_4_1(layer):
    """Half of ``layer``'s rows, those of smallest L2 norm, pruned by ``ln_structured``."""
    if not hasattr(layer, "weight_mask") or not hasattr(layer, "weight_orig"):
        return _hint("layer.weight is not pruned yet: call a function of the prune module on it")
    mask = _values(layer.weight_mask)
    rows_pruned = np.all(mask == 0, axis=1)
    rows_kept = np.all(mask == 1, axis=1)
    if not np.all(rows_pruned | rows_kept):
        return _hint("some rows are only partly pruned: use a STRUCTURED method along dim=0")
    n_rows = mask.shape[0]
    if rows_pruned.sum() != round(0.5 * n_rows):
        return _hint(f"{rows_pruned.sum()} of {n_rows} rows are pruned; prune half (amount=0.5)")
    norms = np.linalg.norm(_values(layer.weight_orig), axis=1)
    smallest = np.argsort(norms, kind="stable")[: round(0.5 * n_rows)]
    if not np.all(rows_pruned[smallest]):
        if np.array_equal(np.sort(np.argsort(np.abs(_values(layer.weight_orig)).sum(1))[: len(smallest)]),
                          np.flatnonzero(rows_pruned)):
            return _hint("these are the rows of smallest L1 norm: use n=2 for the L2 norm")
        return _hint("the pruned rows are not those of smallest L2 norm: ln_structured(..., n=2, dim=0)")
    return _correct(f"{len(smallest)} rows of smallest L2 norm pruned; the other rows untouched")


@exercise
def exercise_4_2(sparsity):
    """The sparsity after l1 0.5, then l1 0.4, then random 0.2 (each of what is left)."""
    prune = _prune()
    layer = edutorch.nn.Linear(40, 25)
    prune.l1_unstructured(layer, "weight", amount=0.5)
    prune.l1_unstructured(layer, "weight", amount=0.4)
    prune.random_unstructured(layer, "weight", amount=0.2)
    expected = _sparsity(layer.weight_mask)
    try:
        value = float(sparsity)
    except (TypeError, ValueError):
        return _hint("pass a number between 0 and 1")
    if not 0 <= value <= 1:
        return _hint(f"{value} is not a fraction: sparsity is between 0 and 1. The amounts do not "
                     "add up: the second method prunes 40 % of the REMAINING weights")
    if math.isclose(value, expected, abs_tol=1e-3):
        return _correct(f"sparsity {expected:.2f}: each amount is a fraction of what is still unpruned")
    if math.isclose(value, 0.5 + 0.4 + 0.2, abs_tol=1e-3) or math.isclose(value, 1.0, abs_tol=1e-3):
        return _hint("the amounts do not add up: the second method prunes 40 % of the REMAINING weights")
    return _hint("after the first step 50 % remain; the second prunes 40 % of those, the third 20 % "
                 "of what is left then")


@exercise
def exercise_4_3(net):
    """70 % of all Linear weights of ``net`` pruned together by L1 magnitude."""
    layers = [m for _, m in _linear_layers(net)]
    if not layers:
        return _hint("net has no nn.Linear layers: pass the network you pruned")
    unpruned = [i for i, m in enumerate(layers) if not hasattr(m, "weight_mask")]
    if unpruned:
        return _hint("every Linear layer's weight must be pruned: pass all (module, 'weight') pairs")
    masks = [_values(m.weight_mask) for m in layers]
    total = sum(m.size for m in masks)
    zeros = sum(int(np.count_nonzero(m == 0)) for m in masks)
    per_layer = [float(np.mean(m == 0)) for m in masks]
    # per-layer pruning first: its total can be off by one from round(0.7 * total)
    if len(masks) > 1 and all(np.count_nonzero(m == 0) == round(0.7 * m.size) for m in masks):
        return _hint("every layer is 70 % sparse: that is per-layer pruning. Use "
                     "prune.global_unstructured with pruning_method=prune.L1Unstructured")
    if zeros != round(0.7 * total):
        return _hint(f"{zeros} of the {total} weights are pruned ({zeros / total:.1%}); "
                     f"70 % of the network is {round(0.7 * total)}")
    magnitudes = np.concatenate([np.abs(_values(m.weight_orig)).ravel() for m in layers])
    kept = np.concatenate([m.ravel() for m in masks]) == 1
    if magnitudes[~kept].max() > magnitudes[kept].min():
        return _hint("some pruned weights are larger than some kept weights: prune by L1 magnitude")
    return _correct("70 % of the network pruned; layer sparsities "
                    + ", ".join(f"{s:.0%}" for s in per_layer))


@exercise
def exercise_4_4(net):
    """Pruning of ``net`` made permanent in every layer."""
    prune = _prune(net)
    keys = list(net.state_dict())
    leftovers = [k for k in keys if k.endswith("_orig") or k.endswith("_mask")]
    if leftovers:
        return _hint(f"still reparametrised: {leftovers}. Call prune.remove(module, 'weight') "
                     "on each pruned layer")
    if prune.is_pruned(net) or any(len(m._forward_pre_hooks) for m in net.modules()):
        return _hint("a pruning forward pre-hook is still registered")
    lib = _library(net)
    layers = [m for _, m in _linear_layers(net)]
    if not layers:
        return _hint("net has no nn.Linear layers: pass the network from exercise 4.3")
    if not all(isinstance(m.weight, lib.nn.Parameter) for m in layers):
        return _hint("each weight must be a Parameter again")
    overall = sum(int(np.count_nonzero(_values(m.weight) == 0)) for m in layers) / sum(
        m.weight.numel() for m in layers)
    if overall < 0.5:
        return _hint("the zeros are gone: prune.remove keeps the pruned values, do not re-create the layers")
    return _correct(f"plain Parameters again, {overall:.0%} of the weights are zero, no hooks left")


# --- lesson 00: the template of a new lesson (lessons/_template.ipynb) -----------------------------
# `./dev new-lesson NN-topic` copies this section, renamed to exercise_N_1 / exercise_N_2, to the
# end of this file: replace the two checks with your lesson's own (keep the pattern: recompute
# the right answer from the API, name the likely mistake in the hint).


@exercise
def exercise_0_1(layer):
    """An ``nn.Linear`` from 4 inputs to 2 outputs whose bias is all zeros."""
    lib = _library(layer)
    if not isinstance(layer, lib.nn.Linear):
        return _hint(f"layer is a {type(layer).__name__}; build it with nn.Linear(4, 2)")
    if (layer.in_features, layer.out_features) != (4, 2):
        return _hint(f"layer maps {layer.in_features} → {layer.out_features} features; "
                     "nn.Linear(in_features, out_features) takes the inputs first: 4, then 2")
    if layer.bias is None:
        return _hint("the layer has no bias (bias=False): keep the bias and set it to zero")
    if np.any(_values(layer.bias) != 0):
        return _hint("the bias is not zero yet: nn.init.zeros_(layer.bias), or layer.bias.zero_() "
                     "inside torch.no_grad()")
    return _correct("a 4 → 2 Linear layer with a zero bias")


@exercise
def exercise_0_2(count):
    """The number of trainable numbers of ``exercise_0_2_model()``."""
    model = exercise_0_2_model()
    expected = sum(p.numel() for p in model.parameters() if p.requires_grad)
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)):
        return _hint("pass a whole number, e.g. the sum of p.numel() over model.parameters()")
    if count == expected:
        return _correct(f"{expected} trainable numbers")
    weights = sum(p.numel() for name, p in model.named_parameters() if name.endswith("weight"))
    if count == weights:
        return _hint("you counted the weights only: the biases are parameters too")
    return _hint(f"{count} is not it: add p.numel() for every p in model.parameters()")


def exercise_0_2_model():
    """The model whose parameters exercise 0.2 counts."""
    nn = edutorch.nn
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
# --- end of lesson 00 ----------------------------------------------------------------------------


# --- lesson 05: the training loop and optimizers --------------------------------------------


def _function_library(function):
    """``torch`` if ``function``'s code uses a name bound to real PyTorch, else ``edutorch``."""
    code = getattr(function, "__code__", None)
    used = [getattr(function, "__globals__", {}).get(name) for name in getattr(code, "co_names", ())]
    used += [cell.cell_contents for cell in getattr(function, "__closure__", None) or ()
             if cell.cell_contents is not None]
    for module in used:
        if getattr(module, "__name__", None) == "torch" and "torch" in sys.modules:
            return sys.modules["torch"]
    return edutorch


def _net_5(lib, seed=0):
    """A 3 → 4 → 2 network with fixed weights (the same in edutorch and torch)."""
    rng = np.random.default_rng(seed)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.normal(size=tuple(p.shape)), dtype=p.dtype))
    return net


def _train_5_1(lib, order, steps=3):
    """Train ``_net_5`` for ``steps`` iterations whose lines run in ``order``; the parameters."""
    rng = np.random.default_rng(1)
    net = _net_5(lib)
    optimizer = lib.optim.SGD(net.parameters(), lr=0.1)
    loss_fn = lib.nn.MSELoss()
    for _ in range(steps):
        x = lib.tensor(rng.normal(size=(8, 3)), dtype=lib.float32)
        y = lib.tensor(rng.normal(size=(8, 2)), dtype=lib.float32)
        order(net, optimizer, loss_fn, x, y)
    return [_values(p) for p in net.parameters()]


def _right_order(model, optimizer, loss_fn, x, y):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def _no_zero_grad(model, optimizer, loss_fn, x, y):
    loss_fn(model(x), y).backward()
    optimizer.step()


def _same_params(a, b):
    return all(np.allclose(p, q, rtol=1e-5, atol=1e-6) for p, q in zip(a, b))


@exercise
def exercise_5_1(train_step):
    """``train_step(model, optimizer, loss_fn, x, y)``: one whole iteration, returning the loss."""
    if not callable(train_step):
        return _hint("pass your function train_step itself (not its result)")
    lib = _function_library(train_step)
    start = _train_5_1(lib, lambda *args: None, steps=1)
    losses = []
    got = _train_5_1(lib, lambda *args: losses.append(train_step(*args)))
    if _same_params(got, _train_5_1(lib, _right_order)):
        if not losses or not _is_tensor(losses[0]) or losses[0].numel() != 1:
            return _hint("the parameters are right; now return the loss tensor as well")
        return _correct("zero_grad → forward → loss → backward → step, the loss returned")
    if _same_params(got, start):
        return _hint("the parameters never move: step() found no gradient. Call optimizer.step() "
                     "AFTER loss.backward(), and zero_grad() first, not between backward and step")
    if _same_params(got, _train_5_1(lib, _no_zero_grad)):
        return _hint("the gradients accumulate from one call to the next: call optimizer.zero_grad() "
                     "at the start of each iteration")
    return _hint("the parameters differ from those of zero_grad → forward → loss → backward → step; "
                 "use the model, optimizer and loss_fn you are given, once each per call")


_SGD_SETTINGS = [  # (momentum, dampening, weight_decay, nesterov): each adds one term to the formula
    (0.0, 0.0, 0.0, False),
    (0.9, 0.0, 0.0, False),
    (0.9, 0.5, 0.0, False),
    (0.9, 0.0, 0.1, False),
    (0.9, 0.0, 0.0, True),
]


def _sgd_by_hand_matches(sgd_update, lib, momentum, dampening, weight_decay, nesterov, steps=3):
    """Three steps of ``sgd_update`` against ``lib.optim.SGD`` with the same settings."""
    rng = np.random.default_rng(5)
    start = rng.normal(size=4)
    grads = [rng.normal(size=4) for _ in range(steps)]
    param = lib.nn.Parameter(lib.tensor(start, dtype=lib.float64))
    optimizer = lib.optim.SGD([param], lr=0.1, momentum=momentum, dampening=dampening,
                              weight_decay=weight_decay, nesterov=nesterov)
    p, buf = lib.tensor(start, dtype=lib.float64), None
    for g in grads:
        param.grad = lib.tensor(g, dtype=lib.float64)
        optimizer.step()
        p, buf = sgd_update(p, lib.tensor(g, dtype=lib.float64), buf, 0.1, momentum, dampening,
                            weight_decay, nesterov)
        if not np.allclose(_values(p), _values(param), rtol=1e-9, atol=1e-12):
            return False
    return True


@exercise
def exercise_5_2(sgd_update):
    """``sgd_update(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov) -> (p, buf)``."""
    if not callable(sgd_update):
        return _hint("pass your function sgd_update itself")
    lib = _function_library(sgd_update)
    result = sgd_update(lib.ones(2), lib.ones(2), None, 0.1, 0.9, 0.0, 0.0, False)
    if not (isinstance(result, tuple) and len(result) == 2):
        return _hint(f"sgd_update returned {type(result).__name__}: return the pair (new_p, new_buf)")
    failed = [s for s in _SGD_SETTINGS if not _sgd_by_hand_matches(sgd_update, lib, *s)]
    if not failed:
        return _correct("plain, momentum, dampening, weight decay and Nesterov all match optim.SGD")
    momentum, dampening, weight_decay, nesterov = failed[0]
    if momentum == 0:
        return _hint("plain SGD is p - lr * grad: start there (buf is not used without momentum)")
    if not dampening and not weight_decay and not nesterov:
        return _hint("momentum: on the FIRST step (buf is None) buf = grad; afterwards "
                     "buf = momentum * buf + (1 - dampening) * grad, and p - lr * buf")
    if dampening:
        return _hint("dampening scales the new gradient by (1 - dampening), but not on the first "
                     "step: there the buffer is the gradient itself")
    if weight_decay:
        return _hint("weight decay comes first: grad = grad + weight_decay * p, and that grad is "
                     "what goes into the buffer")
    return _hint("Nesterov: after updating buf, step along grad + momentum * buf (not along buf)")


def exercise_5_3_model(lib=edutorch):
    """The network whose optimizer exercise 5.3 builds."""
    return _net_5(lib, seed=3)


@exercise
def exercise_5_3(optimizer, net):
    """AdamW, lr 1e-3, weight decay 0.05 on the weight matrices and 0 on the biases of ``net``."""
    if optimizer is None or not hasattr(optimizer, "param_groups"):
        return _hint("build an optimizer: torch.optim.AdamW([...param groups...], lr=1e-3)")
    lib = _library(optimizer)
    if not isinstance(optimizer, lib.optim.Adam):  # AdamW is Adam(decoupled_weight_decay=True)
        return _hint(f"this is {type(optimizer).__name__}: use AdamW")
    if not all(g.get("decoupled_weight_decay") for g in optimizer.param_groups):
        return _hint("Adam's weight_decay adds weight_decay * p to the gradient (L2), which Adam "
                     "then rescales; use AdamW, whose decay is decoupled from the gradient")
    decay = {id(p): g["weight_decay"] for g in optimizer.param_groups for p in g["params"]}
    lrs = {g["lr"] for g in optimizer.param_groups}
    params = list(net.parameters())
    if set(decay) != {id(p) for p in params} or len(decay) != len(params):
        return _hint("give the optimizer every parameter of net, each exactly once")
    if lrs != {1e-3}:
        return _hint(f"the learning rates are {sorted(lrs)}: use lr=1e-3 for every group")
    biases = [name for name, p in net.named_parameters() if p.dim() == 1]
    weights = [name for name, p in net.named_parameters() if p.dim() > 1]
    named = dict(net.named_parameters())
    if any(decay[id(named[n])] != 0 for n in biases):
        return _hint("the biases are decayed: put them in a group with weight_decay=0")
    if any(decay[id(named[n])] != 0.05 for n in weights):
        return _hint("the weight matrices need weight_decay=0.05 (AdamW's default is 0.01)")
    return _correct(f"AdamW: {len(weights)} weight matrices decayed by 0.05, {len(biases)} biases "
                    "not decayed")


def _lr_curve(scheduler, steps):
    """The learning rate before each of ``steps`` scheduler steps; the scheduler is restored after."""
    optimizer = scheduler.optimizer
    saved = scheduler.state_dict()
    saved_lrs = [g["lr"] for g in optimizer.param_groups]
    lrs = []
    try:
        for _ in range(steps):
            lrs.append(optimizer.param_groups[0]["lr"])
            optimizer.step()  # no gradients here: nothing moves; keeps the step order PyTorch expects
            scheduler.step()
        lrs.append(optimizer.param_groups[0]["lr"])
    finally:
        scheduler.load_state_dict(saved)
        for group, lr in zip(optimizer.param_groups, saved_lrs):
            group["lr"] = lr
    return lrs


@exercise
def exercise_5_4(scheduler):
    """A scheduler taking the learning rate from 0.1 to 0.001 along a cosine in 20 steps."""
    if scheduler is None or not hasattr(scheduler, "optimizer"):
        return _hint("pass a scheduler from torch.optim.lr_scheduler, built on the optimizer")
    lrs = np.array(_lr_curve(scheduler, 20))
    t = np.arange(21)
    expected = 0.001 + 0.5 * (0.1 - 0.001) * (1 + np.cos(np.pi * t / 20))
    if np.allclose(lrs, expected, rtol=1e-6, atol=1e-9):
        return _correct("0.1 → 0.001 along half a cosine in 20 steps")
    if not math.isclose(lrs[0], 0.1, rel_tol=1e-6):
        return _hint(f"the curve starts at {lrs[0]:g}: build the optimizer with lr=0.1")
    if math.isclose(lrs[-1], 0.0, abs_tol=1e-9):
        return _hint("the curve ends at 0: set eta_min=0.001 (the lowest learning rate)")
    if len(set(np.round(lrs, 12))) <= 3:
        return _hint("the learning rate moves in steps: use CosineAnnealingLR for a smooth cosine")
    return _hint(f"after 20 steps the learning rate is {lrs[-1]:g}, not 0.001: T_max is the "
                 "number of steps from the top to the bottom (20)")


@exercise
def exercise_5_5(model):
    """A digits classifier with at least 93 % accuracy on ``load_digits("test")``."""
    from edutorch.datasets import load_digits

    if model is None or not hasattr(model, "parameters"):
        return _hint("pass your trained model")
    lib = _library(model)
    x, y = load_digits("test")
    x = lib.tensor(x.numpy(), dtype=lib.float32)
    was_training = model.training
    model.eval()
    try:
        with lib.no_grad():
            logits = model(x)
    finally:
        model.train(was_training)
    if tuple(logits.shape) != (len(y), 10):
        return _hint(f"the model maps {tuple(x.shape)} to {tuple(logits.shape)}: it needs 64 inputs "
                     "and 10 outputs (one score per digit)")
    accuracy = float(np.mean(_values(logits).argmax(1) == y.numpy()))
    if accuracy < 0.2:
        return _hint(f"accuracy {accuracy:.0%}: no better than guessing. Did the loop call "
                     "optimizer.step() after loss.backward()?")
    if accuracy < 0.93:
        return _hint(f"held-out accuracy {accuracy:.1%}, below 93 %: train longer (more epochs) "
                     "or with a larger learning rate")
    return _correct(f"held-out accuracy {accuracy:.1%} on {len(y)} test images")


# --- lesson 07: gradients up close -----------------------------------------------------------


def _grad_norms(net):
    """``{name: ‖p.grad‖}`` for every parameter of ``net`` that has a gradient."""
    return {name: float(np.linalg.norm(_values(p.grad))) for name, p in net.named_parameters()
            if p.grad is not None}


def _first_last_ratio(net):
    """‖grad‖ of the first Linear weight over that of the last one."""
    layers = [m for _, m in _linear_layers(net)]
    first, last = (float(np.linalg.norm(_values(m.weight.grad))) for m in (layers[0], layers[-1]))
    return first / last


@exercise
def exercise_7_1(net, norms):
    """``norms[name]`` is the 2-norm of ``p.grad`` for every parameter of ``net``."""
    if not hasattr(net, "named_parameters"):
        return _hint("pass the network itself and your dictionary: checks.exercise_7_1(net, norms)")
    expected = _grad_norms(net)
    if not expected:
        return _hint("net has no gradients yet: compute the loss on the batch and call loss.backward()")
    if not isinstance(norms, dict) or not norms:
        return _hint("norms is empty: fill it with {name: p.grad.norm().item()} for each "
                     "(name, p) in net.named_parameters()")
    if sorted(norms) != sorted(expected):
        return _hint(f"norms has keys {sorted(norms)[:3]}...; use the names of "
                     f"net.named_parameters(), every parameter: {list(expected)[:3]}...")
    try:
        got = {name: float(value) for name, value in norms.items()}
    except (TypeError, ValueError):
        return _hint("each value must be one number: p.grad.norm().item()")
    weights = {name: float(np.linalg.norm(_values(p))) for name, p in net.named_parameters()}
    for name, want in expected.items():
        if math.isclose(got[name], want, rel_tol=1e-4, abs_tol=1e-12):
            continue
        if math.isclose(got[name], weights[name], rel_tol=1e-4):
            return _hint(f"norms[{name!r}] is the norm of the parameter itself: take the norm of "
                         "its GRADIENT, p.grad.norm()")
        if math.isclose(got[name], want * want, rel_tol=1e-4):
            return _hint(f"norms[{name!r}] is the squared norm: take the square root "
                         "(p.grad.norm() does it for you)")
        return _hint(f"norms[{name!r}] is {got[name]:.4g}, but ‖{name}.grad‖ is {want:.4g}")
    names = [n for n in expected if n.endswith("weight")]
    return _correct(f"{len(expected)} gradient norms; first weight / last weight = "
                    f"{expected[names[0]] / expected[names[-1]]:.1e}")


@exercise
def exercise_7_2(net):
    """A network at least six hidden layers deep whose first layer still gets a gradient."""
    if not hasattr(net, "named_modules"):
        return _hint("pass your network: checks.exercise_7_2(relu_net)")
    layers = _linear_layers(net)
    if len(layers) < 7:
        return _hint(f"net has {len(layers)} Linear layers; keep the depth (6 hidden layers + the "
                     "output layer, 7 Linear layers): the point is a DEEP network whose gradient flows")
    lib = _library(net)
    sigmoids = [name for name, m in net.named_modules() if isinstance(m, lib.nn.Sigmoid)]
    if sigmoids:
        return _hint(f"the network still uses Sigmoid (at {sigmoids[:3]}): its derivative is at most "
                     "1/4, so every layer shrinks the gradient. Use nn.ReLU (or nn.Tanh)")
    if any(m.weight.grad is None for _, m in layers):
        return _hint("the weights have no gradient yet: compute the loss on the batch and call "
                     "loss.backward()")
    ratio = _first_last_ratio(net)
    if not ratio > 1e-2:
        return _hint(f"the first layer's gradient is {ratio:.1e} × the last one's: it still vanishes. "
                     "Put an activation whose derivative is near 1 (ReLU, Tanh) after EVERY hidden Linear")
    return _correct(f"{len(layers)} Linear layers; ‖grad‖ first / last = {ratio:.1e} "
                    "(the sigmoid network's is about 1e-05)")


def _clip_step_setup(lib):
    """A tiny regression problem with gradients large enough to be clipped."""
    nn = lib.nn
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    rng = np.random.default_rng(7)
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.normal(size=tuple(p.shape)).astype(np.float32)))
    x = lib.tensor(rng.normal(size=(8, 3)).astype(np.float32))
    y = lib.tensor((rng.normal(size=(8, 1)) * 20).astype(np.float32))
    return net, x, y


def _fresh_grads(lib, model, x, y):
    """The gradients of the MSE loss at ``model``'s parameters (on a copy, as arrays)."""
    import copy

    twin = copy.deepcopy(model)
    twin.zero_grad()
    lib.nn.functional.mse_loss(twin(x), y).backward()
    return [_values(p.grad) for p in twin.parameters()]


def _reference_clip_step(lib, net, x, y, lr, max_norm):
    """One correct step on a copy of ``net``: (its parameters after, clip_grad_norm_'s total norm)."""
    import copy

    twin = copy.deepcopy(net)
    lib.nn.functional.mse_loss(twin(x), y).backward()
    total = float(lib.nn.utils.clip_grad_norm_(twin.parameters(), max_norm))
    with lib.no_grad():
        for p in twin.parameters():
            p.sub_(lr * p.grad)
    return [_values(p) for p in twin.parameters()], total


@exercise
def exercise_7_3(clipped_step, net):
    """``clipped_step(model, optimizer, loss_fn, x, y, max_norm)``: zero_grad, forward, loss,
    backward, clip_grad_norm_, step; returns the total norm before clipping."""
    if not callable(clipped_step):
        return _hint("pass your function clipped_step itself, and the network you trained with it")
    lib = _library(net)  # the check's model comes from the same library as yours
    lr, max_norm = 0.1, 1.0
    model, x, y = _clip_step_setup(lib)
    expected, total_norm = _reference_clip_step(lib, model, x, y, lr, max_norm)
    before = [_values(p) for p in model.parameters()]
    unclipped = [b - lr * g for b, g in zip(before, _fresh_grads(lib, model, x, y))]
    model(x).sum().backward()  # stale gradients of another loss: the step must zero them
    optimizer = lib.optim.SGD(model.parameters(), lr=lr)
    total = clipped_step(model, optimizer, lib.nn.MSELoss(), x, y, max_norm)
    after = [_values(p) for p in model.parameters()]
    if all(np.array_equal(a, b) for a, b in zip(after, before)):
        return _hint("the parameters did not change: call optimizer.step() at the end")
    if all(np.allclose(a, u, rtol=1e-4, atol=1e-6) for a, u in zip(after, unclipped)):
        return _hint("the update is the unclipped one: call clip_grad_norm_ AFTER backward() and "
                     "BEFORE optimizer.step()")
    if not all(np.allclose(a, e, rtol=1e-4, atol=1e-6) for a, e in zip(after, expected)):
        return _hint("the update is not −lr · (clipped gradient): start with optimizer.zero_grad() "
                     "(gradients accumulate), compute loss_fn(model(x), y), and clip "
                     "with clip_grad_norm_(model.parameters(), max_norm) between backward() and step()")
    try:
        total = float(total)
    except (TypeError, ValueError):
        return _hint("return the total norm that clip_grad_norm_ returns (a 0-d tensor or a float)")
    if math.isclose(total, max_norm, rel_tol=1e-3):
        return _hint("you returned the norm AFTER clipping (max_norm): return what clip_grad_norm_ "
                     "returns, the total norm before clipping")
    if not math.isclose(total, total_norm, rel_tol=1e-4):
        return _hint(f"you returned {total:.4g}; clip_grad_norm_ returned {total_norm:.4g}, the "
                     "total norm before clipping: return that")
    return _correct(f"zero_grad → forward → backward → clip (total norm {total_norm:.3g} → "
                    f"{max_norm:g}) → step")


@exercise
def exercise_7_4(net, theta0, lr=0.1):
    """``net``'s parameters are ``theta0 - lr * g`` (g: its gradients as one vector), written back
    with ``vector_to_parameters``; the parameters stay the model's Parameters."""
    if not hasattr(net, "parameters"):
        return _hint("pass the network and the starting vector: checks.exercise_7_4(small, theta0)")
    lib = _library(net)
    params = list(net.parameters())
    if any(p.grad is None for p in params):
        return _hint("the parameters have no gradient: the cell above ran backward; run it again")
    if not all(isinstance(p, lib.nn.Parameter) and p.requires_grad for p in params):
        return _hint("a parameter is no longer a trainable nn.Parameter: write the values back with "
                     "vector_to_parameters(theta, net.parameters()), do not replace the attributes")
    start = _values(theta0).ravel()
    grads = np.concatenate([_values(p.grad).ravel() for p in params])
    now = np.concatenate([_values(p).ravel() for p in params])
    if start.shape != now.shape:
        return _hint(f"theta0 has {start.size} numbers but net has {now.size}: pass the vector "
                     "parameters_to_vector(net.parameters()) gave before the step")
    if np.allclose(now, start):
        return _hint("the parameters did not change: write theta back with vector_to_parameters")
    if np.allclose(now, start + lr * grads, rtol=1e-5, atol=1e-7):
        return _hint("you went UP the gradient: a descent step is theta - lr * g")
    if not np.allclose(now, start - lr * grads, rtol=1e-5, atol=1e-7):
        return _hint(f"the parameters are not theta0 − {lr} · g, where g = parameters_to_vector of "
                     "the gradients (p.grad for p in net.parameters()), in the same order")
    return _correct(f"one gradient step on all {now.size} numbers at once, written back in place")


@exercise
def exercise_7_5(layer):
    """``layer.weight`` has a tensor hook that zeroes the gradient of its first row (freezes it)."""
    lib = _library(layer)
    if not isinstance(layer, lib.nn.Linear):
        return _hint("pass the nn.Linear layer whose weight carries your hook")
    rng = np.random.default_rng(5)
    x = lib.tensor(rng.normal(size=(6, layer.in_features)).astype(np.float32))
    layer.zero_grad()
    try:
        layer(x).sum().backward()
    except Exception as error:
        return _hint(f"backward raised {type(error).__name__}: {error}. The hook receives the "
                     "gradient and returns a tensor of the same shape")
    grad = layer.weight.grad
    layer.zero_grad()
    if grad is None:
        return _hint("layer.weight.grad is None: the hook must return a tensor (or None to keep "
                     "the gradient), never drop it")
    got = _values(grad)
    expected = np.tile(_values(x).sum(0), (layer.out_features, 1))  # d sum(x W^T + b) / dW
    expected[0] = 0.0
    if np.allclose(got, np.tile(_values(x).sum(0), (layer.out_features, 1)), atol=1e-5):
        return _hint("the first row still gets its gradient: register the hook with "
                     "layer.weight.register_hook(fn), and make fn RETURN the changed gradient")
    if np.allclose(got, 0.0):
        return _hint("the whole gradient is zero: zero only row 0 (multiply by a mask, or clone "
                     "the gradient and set row 0 to 0)")
    if not np.allclose(got, expected, atol=1e-5):
        return _hint("row 0 must be 0 and the other rows unchanged: return grad * mask with "
                     "mask[0] = 0 and every other entry 1")
    return _correct("row 0 of the weight gets no gradient (frozen); the other rows learn as before")


# --- lesson 06: train() and eval() --------------------------------------------------------------


def _library_of_function(fn):
    """``torch`` if the notebook that defined ``fn`` imported real PyTorch as ``torch``/``nn``."""
    names = getattr(fn, "__globals__", {})
    for name in ("torch", "nn"):
        root = getattr(names.get(name), "__name__", "").split(".")[0]
        if root == "torch" and "torch" in sys.modules:
            return sys.modules["torch"]
    return edutorch


class _seeded:
    """``with _seeded(lib):`` the check's random numbers from seed 0; the user's stream restored."""

    def __init__(self, lib):
        self.lib = lib

    def __enter__(self):
        self.state = self.lib.get_rng_state()
        self.lib.manual_seed(0)

    def __exit__(self, *exc):
        self.lib.set_rng_state(self.state)


def _is_batch_norm(module, lib):
    return isinstance(module, lib.nn.modules.batchnorm._BatchNorm)


@exercise
def exercise_6_1(dropout_class):
    """``MyDropout(p)``: zero each value with probability ``p`` in training, scale the rest
    by ``1/(1-p)``; the identity in eval mode."""
    with _seeded(_library(dropout_class)):
        return _exercise_6_1(dropout_class)


def _exercise_6_1(dropout_class):
    if not isinstance(dropout_class, type):
        return _hint("pass the class MyDropout itself (not an instance, not None)")
    try:
        layer = dropout_class(0.2)
    except Exception as error:
        return _hint(f"MyDropout(0.2) raised {type(error).__name__}: {error}")
    lib = _library(layer)
    if not isinstance(layer, lib.nn.Module):
        return _hint("MyDropout must subclass nn.Module (it needs self.training)")
    x = lib.rand(200, 100) + 0.5  # no zeros in the input: every zero of the output was dropped
    parent = lib.nn.Sequential(layer)
    parent.eval()  # through the parent: the layer must read self.training, not its own flag
    out = layer(x)
    if out is None:
        return _hint("forward returns None: return the result")
    if not np.array_equal(_values(out), _values(x)):
        return _hint("in eval mode (self.training is False) MyDropout must return x unchanged")
    parent.train()
    x_before = _values(x)
    out = _values(layer(x))
    if not np.array_equal(_values(x), x_before):
        return _hint("forward changed x in place: build a new tensor (x * mask / (1 - p))")
    dropped = out == 0
    fraction = float(dropped.mean())
    if fraction == 0:
        return _hint("in training mode nothing was zeroed: drop each value with probability p "
                     "(e.g. mask = torch.rand(x.shape) >= p)")
    if abs(fraction - 0.8) < 0.03:
        return _hint(f"{fraction:.0%} of the values were zeroed with p=0.2: p is the probability "
                     "to DROP a value, not to keep it")
    if abs(fraction - 0.2) > 0.03:
        return _hint(f"{fraction:.1%} of the values were zeroed with p=0.2; expected about 20 %")
    ratio = out[~dropped] / _values(x)[~dropped]
    if np.allclose(ratio, 1.0):
        return _hint("the kept values are unchanged: multiply them by 1/(1-p), so that the "
                     "expected output equals the input")
    if np.allclose(ratio, 0.8):
        return _hint("the kept values are multiplied by (1-p): divide by (1-p) instead")
    if not np.allclose(ratio, 1 / 0.8, rtol=1e-5):
        return _hint(f"the kept values are multiplied by {float(np.median(ratio)):.3f}; "
                     "expected 1/(1-p) = 1.25")
    if np.array_equal(out == 0, _values(layer(x)) == 0):
        return _hint("two calls zeroed the same values: draw a new random mask on every call")
    if np.any(_values(dropout_class(0.0).train()(x)) != _values(x)):
        return _hint("with p=0 nothing may be dropped")
    return _correct(f"{fraction:.1%} zeroed with p=0.2, the rest scaled by 1/(1-p) = 1.25; "
                    "identity in eval()")


def exercise_6_2_batches():
    """The two batches of exercise 6.2 (4 samples, 3 features each)."""
    x1 = edutorch.tensor([[1.0, 2.0, 0.0], [3.0, 6.0, 0.0], [5.0, 4.0, 1.0], [7.0, 0.0, 3.0]])
    x2 = edutorch.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 2.0], [4.0, 1.0, 2.0], [2.0, 5.0, 2.0]])
    return x1, x2


@exercise
def exercise_6_2(running_mean, running_var):
    """``BatchNorm1d(3)``'s buffers after the two training batches of ``exercise_6_2_batches``."""
    if running_mean is None or running_var is None:
        return _hint("compute running_mean and running_var (3 numbers each) from x1 and x2")
    bn = edutorch.nn.BatchNorm1d(3)
    x1, x2 = exercise_6_2_batches()
    bn(x1)
    bn(x2)
    mean, var = _values(running_mean).ravel(), _values(running_var).ravel()
    if mean.shape != (3,) or var.shape != (3,):
        return _hint(f"one number per feature (channel): shapes {mean.shape} and {var.shape}, "
                     "expected (3,) each")
    expected_mean, expected_var = _values(bn.running_mean), _values(bn.running_var)
    batches = [_values(b) for b in (x1, x2)]

    def after(m, unbiased=True):
        mean_, var_ = np.zeros(3), np.ones(3)
        for b in batches:
            mean_ = (1 - m) * mean_ + m * b.mean(0)
            var_ = (1 - m) * var_ + m * b.var(0, ddof=1 if unbiased else 0)
        return mean_, var_

    ok_mean = np.allclose(mean, expected_mean, atol=1e-5)
    ok_var = np.allclose(var, expected_var, atol=1e-5)
    if ok_mean and ok_var:
        return _correct(f"running_mean {np.round(expected_mean, 4).tolist()}, "
                        f"running_var {np.round(expected_var, 4).tolist()}")
    if np.allclose(mean, after(0.9)[0], atol=1e-5):
        return _hint("the weights are swapped: new = (1 - momentum) * old + momentum * batch, "
                     "with momentum = 0.1")
    if np.allclose(mean, (batches[0].mean(0) + batches[1].mean(0)) / 2, atol=1e-5):
        return _hint("that is the plain average of the batch means (momentum=None); the default "
                     "momentum=0.1 gives an exponential moving average starting from 0")
    if np.allclose(mean, batches[1].mean(0), atol=1e-5):
        return _hint("running_mean is not the last batch's mean: it moves by momentum = 0.1 "
                     "towards it, starting from 0")
    if not ok_mean:
        return _hint("running_mean: start from zeros; after each batch, "
                     "(1 - 0.1) * running_mean + 0.1 * batch.mean(dim=0)")
    if np.allclose(var, after(0.1, unbiased=False)[1], atol=1e-5):
        return _hint("running_mean is right. running_var uses the UNBIASED variance of the batch "
                     "(divide by n - 1), although the normalisation uses the biased one")
    return _hint("running_mean is right. running_var: start from ones; after each batch, "
                 "(1 - 0.1) * running_var + 0.1 * batch.var(dim=0) (unbiased)")


@exercise
def exercise_6_3(layer):
    """A BatchNorm over 5 features whose eval() output equals its train() output, always."""
    with _seeded(_library(layer)):
        return _exercise_6_3(layer)


def _exercise_6_3(layer):
    if layer is None:
        return _hint("layer is None: build an nn.BatchNorm1d over 5 features")
    lib = _library(layer)
    if not _is_batch_norm(layer, lib):
        return _hint(f"layer is a {type(layer).__name__}; build it with nn.BatchNorm1d(5, ...)")
    if layer.num_features != 5:
        return _hint(f"the layer normalises {layer.num_features} features; the inputs have 5")
    first = lib.randn(8, 5) * 3 + 2
    second = lib.randn(8, 5) - 1
    with lib.no_grad():
        layer.train()
        layer(first)  # a training batch that would move running statistics
        train_out = _values(layer(second))
        layer.eval()
        eval_out = _values(layer(second))
    layer.train()
    if np.allclose(train_out, eval_out, atol=1e-5):
        if layer.running_mean is not None:
            return _hint("these outputs agree, but the layer keeps running statistics: find the "
                         "option that makes it always use the batch's own statistics")
        return _correct("track_running_stats=False: no running statistics, batch statistics "
                        "in both modes")
    if layer.momentum is None:
        return _hint("momentum=None still keeps running statistics (a cumulative average), "
                     "and eval() uses them")
    if layer.momentum == 0:
        return _hint("momentum=0 freezes the running statistics at 0 and 1, and eval() still "
                     "uses them")
    return _hint("eval() uses the running statistics; with track_running_stats=False there are "
                 "none, and BatchNorm uses the batch statistics in both modes")


class _Probe:
    """Records, on every call, whether the module was training and autograd was on."""

    def __init__(self, lib):
        self.calls = []
        probe = self

        class Probe(lib.nn.Module):
            def forward(self, x):
                probe.calls.append((self.training, lib.is_grad_enabled()))
                return x

        self.module = Probe()


def _evaluation_model(lib):
    probe = _Probe(lib)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.5),
                          probe.module, nn.Linear(16, 3))
    with lib.no_grad():  # some running statistics, as after training
        for _ in range(3):
            model(lib.randn(32, 6))
    probe.calls.clear()
    return model, probe


@exercise
def exercise_6_4(evaluate):
    """``evaluate(model, x, y)``: accuracy in eval mode without autograd; the mode is restored."""
    with _seeded(_library_of_function(evaluate)):
        return _exercise_6_4(evaluate)


def _exercise_6_4(evaluate):
    if not callable(evaluate):
        return _hint("pass your function evaluate itself")
    lib = _library_of_function(evaluate)
    model, probe = _evaluation_model(lib)
    x = lib.randn(50, 6)
    y = lib.randint(0, 3, (50,))
    model.eval()
    with lib.no_grad():
        expected = float((model(x).argmax(dim=1) == y).float().mean())
    probe.calls.clear()
    model.train()
    stats = _state_arrays(model)
    result = evaluate(model, x, y)
    if result is None:
        return _hint("evaluate returns None: return the accuracy, a number between 0 and 1")
    try:
        accuracy = float(result)
    except (TypeError, ValueError):
        return _hint("return the accuracy as a number (e.g. .item())")
    if not probe.calls:
        return _hint("evaluate did not run the model")
    if any(training for training, _ in probe.calls):
        return _hint("the model ran in train mode: call model.eval() first (Dropout dropped "
                     "units and BatchNorm used the batch statistics)")
    if any(grad for _, grad in probe.calls):
        return _hint("autograd was on: eval() does not turn it off. Wrap the forward in "
                     "torch.no_grad() (or torch.inference_mode())")
    if not math.isclose(accuracy, expected, abs_tol=1e-6):
        if math.isclose(accuracy, expected * len(y), abs_tol=1e-3):
            return _hint("that is the number of correct predictions: divide by len(y)")
        return _hint(f"accuracy {accuracy:.4f}, expected {expected:.4f}: the fraction of rows "
                     "where model(x).argmax(dim=1) == y")
    after = _state_arrays(model)
    if any(not np.array_equal(stats[k], after[k]) for k in stats):
        return _hint("evaluate changed the model's parameters or buffers")
    if not all(m.training for m in model.modules()):
        return _hint("the model was in train mode before evaluate and must be again after: "
                     "remember model.training and restore it with model.train(was_training)")
    model.eval()
    evaluate(model, x, y)
    if any(m.training for m in model.modules()):
        return _hint("a model in eval mode before evaluate must stay in eval mode: restore the "
                     "mode it had (model.train(was_training)), do not always call model.train()")
    return _correct(f"accuracy {expected:.2f} in eval mode, without autograd; the mode "
                    "is restored")


def _finetuning_model(lib):
    nn = lib.nn
    features = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU())
    return nn.Sequential(features, nn.Dropout(0.5), nn.Linear(8, 4), nn.BatchNorm1d(4))


@exercise
def exercise_6_5(freeze_batchnorm):
    """``freeze_batchnorm(model)``: every BatchNorm in eval mode, the rest in train mode."""
    with _seeded(_library_of_function(freeze_batchnorm)):
        return _exercise_6_5(freeze_batchnorm)


def _exercise_6_5(freeze_batchnorm):
    if not callable(freeze_batchnorm):
        return _hint("pass your function freeze_batchnorm itself")
    lib = _library_of_function(freeze_batchnorm)
    model = _finetuning_model(lib)
    model.train()
    freeze_batchnorm(model)
    norms = [(n, m) for n, m in model.named_modules() if _is_batch_norm(m, lib)]
    still_training = [n for n, m in norms if m.training]
    if len(still_training) == len(norms):
        return _hint("no BatchNorm was switched to eval mode: call .eval() on each module m "
                     "of model.modules() that is a BatchNorm")
    if still_training:
        return _hint(f"BatchNorm {still_training} is still training: model.children() lists only "
                     "the direct children; model.modules() reaches the nested ones too")
    others = [n or "the model itself" for n, m in model.named_modules()
              if not _is_batch_norm(m, lib) and not m.training]
    if others:
        return _hint(f"{others} left train mode: switch only the BatchNorm layers (not "
                     "model.eval(), which switches every module)")
    if not all(p.requires_grad for p in model.parameters()):
        return _hint("freezing the statistics is a matter of modes: keep requires_grad, so "
                     "BatchNorm's weight and bias still train")
    before = _state_arrays(model)
    x = lib.randn(16, 6)
    with lib.no_grad():
        first, second = _values(model(x)), _values(model(x))
    after = _state_arrays(model)
    moved = [k for k in before if not np.array_equal(before[k], after[k])]
    if moved:
        return _hint(f"a training forward still moved {moved}")
    if np.array_equal(first, second):
        return _hint("Dropout no longer drops: it must stay in train mode")
    return _correct(f"{len(norms)} BatchNorm layers frozen (their running statistics stay put); "
                    "Dropout still drops")


# --- lesson 09: extending autograd ----------------------------------------------------------------


def _not_a_function_class(cls, name):
    """A hint if ``cls`` is not a subclass of ``autograd.Function`` (edutorch's or torch's)."""
    if not isinstance(cls, type):
        return _hint(f"pass the class {name} itself (not an instance, not None)")
    if not issubclass(cls, _library(cls).autograd.Function):
        return _hint(f"{name} must subclass torch.autograd.Function")
    return None


def _applied(cls, *args):
    """``(cls.apply(*args), None)``, or ``(None, a hint)`` when it raises."""
    try:
        return cls.apply(*args), None
    except Exception as error:
        return None, _hint(f"{cls.__name__}.apply raised {type(error).__name__}: {error}")


def _double(lib, values, requires_grad=True):
    return lib.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


@exercise
def exercise_9_1(softplus):
    """``Softplus``: forward ``log(1 + exp(x))``, saved with ``save_for_backward``; backward
    ``grad_output * sigmoid(x)``."""
    problem = _not_a_function_class(softplus, "Softplus")
    if problem is not None:
        return problem
    lib = _library(softplus)
    rng = np.random.default_rng(9)
    values = rng.uniform(-3, 3, size=(3, 4))
    x = _double(lib, values)
    y, problem = _applied(softplus, x)
    if problem is not None:
        return problem
    expected = np.log1p(np.exp(values))
    if not _is_tensor(y) or tuple(y.shape) != values.shape or not np.allclose(_values(y), expected):
        return _hint("forward(ctx, x) must return softplus(x) = log(1 + exp(x)), a tensor of "
                     "x's shape: torch.log1p(x.exp())")
    if y.grad_fn is None:
        return _hint("the output has no grad_fn: return the result of forward as it is (no "
                     "detach), and call Softplus.apply(x), not Softplus.forward")
    saved = len(y.grad_fn.saved_tensors)
    if not saved:
        return _hint("nothing was saved with ctx.save_for_backward: keep x (or what backward needs) "
                     "with ctx.save_for_backward(x), not as an attribute of ctx — only saved "
                     "tensors get the in-place check of the version counter")
    g = rng.normal(size=values.shape)
    try:
        (grad,) = lib.autograd.grad(y, x, lib.tensor(g))
    except Exception as error:
        return _hint(f"backward raised {type(error).__name__}: {error}")
    sigmoid = 1 / (1 + np.exp(-values))
    got = _values(grad)
    if got.shape != values.shape:
        return _hint(f"backward returned a gradient of shape {got.shape}; it must have x's shape "
                     f"{values.shape}")
    if np.allclose(got, sigmoid):
        return _hint("backward returns sigmoid(x) alone: multiply it by grad_output (the chain rule)")
    if np.allclose(got, g * expected):
        return _hint("backward multiplies grad_output by softplus(x), the output; the derivative of "
                     "log(1 + exp(x)) is sigmoid(x) = 1 / (1 + exp(-x))")
    if np.allclose(got, g * np.exp(values)):
        return _hint("exp(x) is only the derivative of the inside: d/dx log(1 + exp(x)) = "
                     "exp(x) / (1 + exp(x)) = sigmoid(x)")
    if not np.allclose(got, g * sigmoid, rtol=1e-6, atol=1e-9):
        return _hint("backward must return grad_output * sigmoid(x); test it with "
                     "torch.autograd.gradcheck on float64 inputs")
    if not lib.autograd.gradcheck(softplus.apply, (_double(lib, values[:1]),), raise_exception=False):
        return _hint("gradcheck fails on a float64 input: compare backward with the derivative again")
    return _correct(f"{softplus.__name__}.apply(x) records a {type(y.grad_fn).__name__} node that "
                    f"saves {saved} tensor(s); gradcheck passes")


@exercise
def exercise_9_2(mul):
    """``Mul``: ``a * b``, whose backward computes only the gradients ``ctx.needs_input_grad``
    asks for (None for the others)."""
    problem = _not_a_function_class(mul, "Mul")
    if problem is not None:
        return problem
    lib = _library(mul)
    rng = np.random.default_rng(92)
    a_values, b_values, g = (rng.normal(size=(2, 3)) for _ in range(3))
    for needs in ((True, True), (True, False), (False, True)):
        a, b = _double(lib, a_values, needs[0]), _double(lib, b_values, needs[1])
        out, problem = _applied(mul, a, b)
        if problem is not None:
            return problem
        if not _is_tensor(out) or not np.allclose(_values(out), a_values * b_values):
            return _hint("forward(ctx, a, b) must return a * b")
        try:  # the node's apply calls backward directly and returns what it returned
            grads = out.grad_fn.apply(lib.tensor(g))
        except Exception as error:
            return _hint(f"backward raised {type(error).__name__}: {error}")
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
        if len(grads) != 2:
            return _hint(f"backward returned {len(grads)} value(s): return one per input of "
                         "forward, (grad_a, grad_b)")
        for name, need, grad, other, other_name in (("a", needs[0], grads[0], b_values, "b"),
                                                    ("b", needs[1], grads[1], a_values, "a")):
            if not need and grad is not None:
                return _hint(f"when {name} does not require grad, ctx.needs_input_grad is "
                             f"{needs}: return None for {name} instead of computing its gradient")
            if need and grad is None:
                return _hint(f"{name} requires grad (ctx.needs_input_grad is {needs}) but backward "
                             f"returned None for it")
            if need and not np.allclose(_values(grad), g * other):
                return _hint(f"the gradient for {name} is grad_output * {other_name}")
    return _correct("a * b, and backward computes only the gradients that ctx.needs_input_grad asks "
                    "for (None for the others)")


@exercise
def exercise_9_3(tanh):
    """``Tanh`` whose backward is built of differentiable tensor ops: gradcheck and
    gradgradcheck pass."""
    problem = _not_a_function_class(tanh, "Tanh")
    if problem is not None:
        return problem
    lib = _library(tanh)
    values = np.random.default_rng(93).uniform(-2, 2, size=5)
    x = _double(lib, values)
    y, problem = _applied(tanh, x)
    if problem is not None:
        return problem
    if not _is_tensor(y) or not np.allclose(_values(y), np.tanh(values)):
        return _hint("forward(ctx, x) must return tanh(x): x.tanh()")
    try:
        first = lib.autograd.gradcheck(tanh.apply, (x,), raise_exception=False)
    except Exception as error:
        return _hint(f"gradcheck raised {type(error).__name__}: {error}")
    if not first:
        return _hint("the first derivative is wrong: d tanh(x)/dx = 1 - tanh(x)**2; return "
                     "grad_output times that")
    (grad,) = lib.autograd.grad((tanh.apply(x) ** 2).sum(), x, create_graph=True)
    if grad.grad_fn is not None and _node_name(grad.grad_fn) == "Error":
        return _hint("backward is marked @once_differentiable, which forbids a second derivative: "
                     "remove it, and write backward with tensor operations")
    if grad.grad_fn is None:
        return _hint("the gradient that backward returns has no graph: write backward with tensor "
                     "operations on the saved tensors (no .numpy(), .detach() or torch.no_grad())")
    try:
        second = lib.autograd.gradgradcheck(tanh.apply, (x,), raise_exception=False)
    except Exception as error:
        return _hint(f"gradgradcheck raised {type(error).__name__}: {error}")
    if not second:
        return _hint("the second derivative is wrong: build backward only from differentiable "
                     "tensor operations on tensors saved with ctx.save_for_backward (no .numpy(), "
                     ".detach() or torch.no_grad() inside)")
    return _correct("gradcheck and gradgradcheck pass: backward is itself differentiable "
                    f"({_node_name(grad.grad_fn)} in the gradient's graph)")


@exercise
def exercise_9_4(loss_fixed):
    """``loss_fixed(x)``: the value of ``(2 * sigmoid(x)).sum()`` without modifying a saved
    tensor in place, so that ``backward`` works."""
    if not callable(loss_fixed):
        return _hint("pass your function loss_fixed itself")
    lib = _library_of_function(loss_fixed)
    values = np.array([0.5, -1.0, 2.0, 0.0], dtype=np.float32)
    x = lib.tensor(values, requires_grad=True)
    try:
        loss = loss_fixed(x)
    except Exception as error:
        return _hint(f"loss_fixed(x) raised {type(error).__name__}: {error}")
    if not _is_tensor(loss) or loss.numel() != 1:
        return _hint("loss_fixed(x) must return the loss, a one-number tensor")
    sigmoid = 1 / (1 + np.exp(-values.astype(np.float64)))
    if not math.isclose(float(_values(loss)), 2 * sigmoid.sum(), rel_tol=1e-5):
        return _hint("the loss must keep its value, the sum of 2 * sigmoid(x)")
    if not loss.requires_grad:
        return _hint("the loss is not connected to x: keep it a tensor computed from x (no detach, "
                     "no .item(), no torch.no_grad())")
    try:
        loss.backward()
    except RuntimeError as error:
        if "inplace" in str(error):
            return _hint("backward still finds a saved tensor modified in place (its version "
                         "changed): multiply out of place, y = y * 2, or change a clone")
        return _hint(f"backward raised RuntimeError: {error}")
    if x.grad is None:
        return _hint("x got no gradient: keep the loss connected to x (no detach, no .item())")
    if not np.allclose(_values(x.grad), 2 * sigmoid * (1 - sigmoid), rtol=1e-5):
        return _hint("x.grad is not the gradient of the sum of 2 * sigmoid(x): compute the same "
                     "loss, only without the in-place change")
    return _correct("same loss, and backward works: SigmoidBackward0 finds its saved output "
                    "at the version it saved")


def _anomaly_node(lib, fn, x):
    """The node named by ``detect_anomaly``'s error for ``fn(x).backward()``, or None."""
    import re

    x = x.detach().clone().requires_grad_(True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with lib.autograd.detect_anomaly():
                fn(x).backward()
        except RuntimeError as error:
            found = re.search(r"Function '(\w+)' returned nan", str(error))
            return found[1] if found else None
    return None


def _op_name(name):
    """``"AsinBackward0"``, ``"torch.asin"``, ``"asin()"`` -> ``"asin"``."""
    import re

    name = name.strip().strip("'\"").lower()
    name = re.sub(r"^(torch|tensor|x)\.", "", name).removesuffix("()").removesuffix("_")
    return re.sub(r"backward\d*$", "", name)


@exercise
def exercise_9_5(culprit, mystery, x):
    """``culprit``: the node whose backward returned NaN in ``mystery(x).backward()``, as
    ``detect_anomaly`` names it (``"XyzBackward0"``; the op's name is accepted too)."""
    if not callable(mystery) or not _is_tensor(x):
        return _hint("pass your answer, the function and its input: "
                     "checks.exercise_9_5(culprit, mystery, x)")
    expected = _anomaly_node(_library(x), mystery, x)
    if expected is None:
        return _hint("mystery(x).backward() gives no NaN here: run the given code unchanged")
    if not isinstance(culprit, str) or not culprit.strip():
        return _hint("culprit must be a name (a string): run mystery(x).backward() inside "
                     "`with torch.autograd.detect_anomaly():`, catch the RuntimeError and read it")
    if _op_name(culprit) == _op_name(expected):
        return _correct(f"{expected} returned NaN; the forward traceback points at the line that "
                        "created it")
    if _op_name(culprit) == "where":
        return _hint("where's backward sends 0 to the branch it did not pick: it creates no NaN. "
                     "Run backward under detect_anomaly and read which node it names")
    return _hint(f"{culprit!r} is not the node detect_anomaly names: run mystery(x).backward() "
                 "inside `with torch.autograd.detect_anomaly():` and read the RuntimeError")


def _packed_sizes(lib, fn, args):
    """The bytes of every tensor packed by saved-tensor hooks while ``fn(*args)`` runs."""
    sizes = []

    def pack(t):
        sizes.append(t.numel() * t.element_size())
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(*args)
    return sizes


def _saved_bytes_cases(lib):
    """(description, fn, args): graphs whose saved tensors the check measures."""
    lib.manual_seed(0)
    nn = lib.nn
    net = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 2))
    x = lib.randn(100, requires_grad=True)
    a = lib.randn(7, 3, dtype=lib.float64, requires_grad=True)
    return [("x.exp() of 100 float32", lambda t: t.exp(), (x,)),
            ("a * a of 7x3 float64", lambda t: t * t, (a,)),
            ("a small MLP on 16 samples", net, (lib.randn(16, 8),)),
            ("an op on a tensor that needs no gradient", lambda t: t.exp(), (lib.randn(5),))]


@exercise
def exercise_9_6(saved_bytes):
    """``saved_bytes(fn, *args)``: the total bytes of the tensors packed by saved-tensor hooks
    while ``fn(*args)`` runs (every packing counted)."""
    if not callable(saved_bytes):
        return _hint("pass your function saved_bytes itself")
    lib = _library_of_function(saved_bytes)
    for description, fn, args in _saved_bytes_cases(lib):
        sizes = _packed_sizes(lib, fn, args)
        expected = sum(sizes)
        try:
            got = saved_bytes(fn, *args)
        except Exception as error:
            return _hint(f"saved_bytes raised {type(error).__name__}: {error}")
        if got is None:
            return _hint("saved_bytes returns None: return the total number of bytes")
        try:
            got = int(got)
        except (TypeError, ValueError):
            return _hint(f"saved_bytes returned {got!r}: return one whole number of bytes")
        if got == expected:
            continue
        if got == 0:
            return _hint(f"0 bytes for {description}: call fn(*args) INSIDE `with "
                         "torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):`, and "
                         "count in pack_hook")
        if sizes and got == len(sizes):
            return _hint(f"{got} for {description} is the number of tensors saved; add up their bytes")
        elements = sum(s // 4 for s in sizes) if "float32" in description else None
        if got == elements or (sizes and got * 8 == expected):
            return _hint("that is a count of elements: a tensor's bytes are t.numel() * "
                         "t.element_size()")
        return _hint(f"{got} bytes for {description}; the hooks see {len(sizes)} tensor(s) of "
                     f"{expected} bytes in all")
    return _correct("the bytes every graph keeps for backward, measured with saved-tensor hooks")


# --- lesson 11: freezing and fine-tuning -------------------------------------------------------


def _digit_net(lib, classes=10):
    """Lesson 11's ``DigitNet`` rebuilt with ``lib``: ``body`` (with a BatchNorm) and ``head``."""
    nn = lib.nn

    class DigitNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU(),
                                      nn.Linear(64, 32), nn.ReLU())
            self.head = nn.Linear(32, classes)

        def forward(self, x):
            return self.head(self.body(x))

    with _seeded(lib):
        return DigitNet()


#: lesson 11's expressions for exercise 11.1, written with x (data), w and b (trainable)
#: and frozen_w (requires_grad=False), and why each answer is what it is
PROPAGATION = {
    "x @ w": "an op's output requires grad when at least one input does: w does",
    "x @ frozen_w": "neither x nor frozen_w requires grad, so nothing is recorded",
    "x @ frozen_w + b": "b requires grad, so the sum does (the product part has no graph, the "
                        "sum is recorded)",
    "x @ w.detach()": "w.detach() is a new tensor sharing w's values with requires_grad=False",
    "x @ w inside no_grad": "inside torch.no_grad() nothing is recorded, whatever the inputs",
    "(x @ w).sum().item() * x": ".item() returns a Python float, which carries no graph; x does "
                                "not require grad",
}


def _propagation_truth(lib):
    """``{expression: result.requires_grad}`` for PROPAGATION, computed with ``lib``."""
    x, frozen_w = lib.randn(4, 3), lib.randn(3, 2)
    w, b = lib.randn(3, 2, requires_grad=True), lib.zeros(2, requires_grad=True)
    with lib.no_grad():
        inside = x @ w
    results = {"x @ w": x @ w, "x @ frozen_w": x @ frozen_w, "x @ frozen_w + b": x @ frozen_w + b,
               "x @ w.detach()": x @ w.detach(), "x @ w inside no_grad": inside,
               "(x @ w).sum().item() * x": (x @ w).sum().item() * x}
    return {name: bool(t.requires_grad) for name, t in results.items()}


@exercise
def exercise_11_1(predictions):
    """``predictions[expression]`` is the ``requires_grad`` of each PROPAGATION expression."""
    if not isinstance(predictions, dict) or not predictions:
        return _hint("predictions is empty: fill in True or False for each expression")
    missing = [name for name in PROPAGATION if name not in predictions]
    if missing:
        return _hint(f"predictions has no entry for {missing[0]!r}: keep the given keys")
    blank = [name for name in PROPAGATION if not isinstance(predictions[name], bool)]
    if blank:
        return _hint(f"predictions[{blank[0]!r}] is {predictions[blank[0]]!r}: answer True or False")
    truth = _propagation_truth(edutorch)
    for name, reason in PROPAGATION.items():
        if predictions[name] != truth[name]:
            return _hint(f"{name!r} gives requires_grad={truth[name]}: {reason}")
    return _correct(f"all {len(truth)} predictions right: an op records a graph when grad mode is "
                    "on and at least one input requires grad")


@exercise
def exercise_11_2(freeze):
    """``freeze(model)`` stops every parameter of ``model.body`` from requiring grad, not the head's."""
    if not callable(freeze):
        return _hint("define the function freeze(model) and pass it: checks.exercise_11_2(freeze)")
    lib = _library_of_function(freeze)
    model = _digit_net(lib)
    freeze(model)
    body = [p.requires_grad for p in model.body.parameters()]
    head = [p.requires_grad for p in model.head.parameters()]
    if all(body) and model.body.__dict__.get("requires_grad") is False:
        return _hint("model.body.requires_grad = False only sets a new Python attribute on the "
                     "Module: its parameters still require grad. Call "
                     "model.body.requires_grad_(False), which sets it on every parameter")
    if all(body):
        return _hint("every parameter of model.body still requires grad: call "
                     "model.body.requires_grad_(False) (or p.requires_grad_(False) for each p)")
    if any(body):
        names = [n for n, p in model.body.named_parameters() if p.requires_grad]
        return _hint(f"body parameters {names} still require grad: model.body.parameters() "
                     "lists them all, BatchNorm's weight and bias included")
    if not all(head):
        return _hint("the head is frozen too: freeze model.body only, so the head can still learn")
    return _correct(f"{len(body)} body parameters frozen, the head's {len(head)} still trainable")


def _parameter_ids(optimizer):
    return [id(p) for group in optimizer.param_groups for p in group["params"]]


@exercise
def exercise_11_3(model, optimizer, classes=2):
    """``model.head`` is a new ``Linear(32, classes)``; the body is frozen; ``optimizer`` holds
    exactly the head's parameters."""
    if not hasattr(model, "head") or not hasattr(model, "body"):
        return _hint("pass the fine-tuning model (with .body and .head) and its optimizer")
    if not hasattr(optimizer, "param_groups"):
        return _hint("optimizer must be a torch.optim optimizer, e.g. "
                     "torch.optim.Adam(model.head.parameters(), lr=0.01)")
    lib = _library(model)
    head = model.head
    if not isinstance(head, lib.nn.Linear) or head.out_features != classes:
        return _hint(f"model.head must be a new nn.Linear(32, {classes}): the new task has "
                     f"{classes} classes")
    if any(p.requires_grad for p in model.body.parameters()):
        return _hint("the body still requires grad: freeze it with "
                     "model.body.requires_grad_(False) before fine-tuning")
    if not all(p.requires_grad for p in head.parameters()):
        return _hint("the new head is frozen: a freshly made nn.Linear requires grad by default, "
                     "so do not freeze the model after replacing the head")
    held = set(_parameter_ids(optimizer))
    in_model = {id(p) for p in model.parameters()}
    head_ids = {id(p) for p in head.parameters()}
    if held - in_model:
        return _hint("the optimizer holds parameters that are not in the model any more: it was "
                     "made before `model.head = nn.Linear(...)`, so it would train the OLD head. "
                     "Create the optimizer after replacing the head")
    if held - head_ids:
        return _hint("the optimizer also holds the frozen body's parameters: give it only what "
                     "should learn, model.head.parameters() (or the parameters with "
                     "requires_grad=True)")
    if held != head_ids:
        return _hint("the optimizer misses some of the head's parameters (weight and bias)")
    return _correct(f"a new Linear(32, {classes}) head, a frozen body, and an optimizer over "
                    f"the head's {len(head_ids)} tensors only")


@exercise
def exercise_11_4(finetune_mode):
    """``finetune_mode(model)``: the model trains (``model.training``), except its frozen body, whose
    BatchNorm statistics must not move."""
    if not callable(finetune_mode):
        return _hint("define finetune_mode(model) and pass the function itself")
    lib = _library_of_function(finetune_mode)
    model = _digit_net(lib, 2)
    model.body.requires_grad_(False)
    model.eval()  # whatever mode it had, the function must set both parts
    finetune_mode(model)
    if not model.training or not model.head.training:
        return _hint("the model (and its head) must be in training mode: call model.train() first")
    training = [name for name, m in model.body.named_modules() if m.training]
    if training:
        return _hint("model.body is in training mode, so its BatchNorm would normalise with each "
                     "batch's statistics and update running_mean/running_var: requires_grad_(False) "
                     "does not stop that. Call model.body.eval() after model.train()")
    before = _state_arrays(model)
    with _seeded(lib):
        model(lib.randn(8, 64))
    moved = [k for k in before if not np.array_equal(before[k], _state_arrays(model)[k])]
    if moved:
        return _hint(f"a forward still moved {moved}")
    return _correct("model.training is True, the body is in eval mode: its BatchNorm uses (and "
                    "keeps) the pretrained running statistics")


@exercise
def exercise_11_5(model, x, features):
    """``features`` = ``model.body(x)`` with the body in eval mode, without a graph."""
    if not _is_tensor(features):
        return _hint("features must be a tensor: the body's output for x")
    lib = _library(model)
    if tuple(features.shape) != (len(x), 32):
        return _hint(f"features has shape {tuple(features.shape)}, expected ({len(x)}, 32): the "
                     "output of model.body (not of the whole model)")
    if features.requires_grad:
        return _hint("features requires grad, so training the head on them would also record the "
                     "body: compute them inside torch.no_grad() (or torch.inference_mode())")
    body = copy.deepcopy(model.body)  # the check's forwards leave the student's model as it is
    with lib.no_grad():
        expected = _values(body.eval()(x))
        batch_stats = _values(body.train()(x))
    got = _values(features)
    if np.allclose(got, expected, rtol=1e-5, atol=1e-6):
        return _correct(f"{len(x)} feature vectors of 32 numbers, computed once with the pretrained "
                        "statistics")
    if np.allclose(got, batch_stats, rtol=1e-5, atol=1e-6):
        return _hint("the body was in training mode: its BatchNorm normalised with these images' "
                     "own statistics. Call model.body.eval() before computing the features")
    return _hint("features are not model.body(x): run the pretrained body on x")


# --- lesson 12: beyond the basics ----------------------------------------------------------------


def _two_cells_reference(lib, xs, cell_a, cell_b):
    h = lib.zeros(cell_a.out_features)
    for x_t in xs:
        cell = cell_a if x_t.sum() > 0 else cell_b
        h = lib.tanh(cell(lib.cat([x_t, h])))
    return h


def _cell_grads(cells):
    return [_values(p.grad) if p.grad is not None else None for c in cells for p in c.parameters()]


@exercise
def exercise_12_1(run_two_cells):
    """``run_two_cells(xs, cell_a, cell_b)``: a cell chosen per step by ``x_t.sum() > 0``."""
    if not callable(run_two_cells):
        return _hint("define the function run_two_cells(xs, cell_a, cell_b) and pass it")
    lib = _library_of_function(run_two_cells)
    with _seeded(lib):
        cells = [lib.nn.Linear(7, 4) for _ in range(4)]  # the student's pair, the reference pair
        xs = lib.randn(6, 3)
    with lib.no_grad():
        for mine, theirs in zip(cells[2:], cells[:2]):
            mine.weight.copy_(theirs.weight)
            mine.bias.copy_(theirs.bias)
    got = run_two_cells(xs, cells[0], cells[1])
    if not _is_tensor(got):
        return _hint("run_two_cells must return the last hidden state h (a tensor)")
    want = _two_cells_reference(lib, xs, cells[2], cells[3])
    if tuple(got.shape) != tuple(want.shape):
        return _hint(f"the result has shape {tuple(got.shape)}, expected {tuple(want.shape)}: "
                     "return the last h, of cell_a.out_features numbers")
    if not np.allclose(_values(got), _values(want), atol=1e-6):
        swapped = _two_cells_reference(lib, xs, cells[3], cells[2])
        if np.allclose(_values(got), _values(swapped), atol=1e-6):
            return _hint("the cells are swapped: use cell_a when x_t.sum() > 0, cell_b otherwise")
        for fixed in (cells[2], cells[3]):
            if np.allclose(_values(got), _values(_two_cells_reference(lib, xs, fixed, fixed)), atol=1e-6):
                return _hint("the same cell is used at every step: choose it inside the loop, "
                             "from each x_t")
        return _hint("the last h differs: h = torch.tanh(cell(torch.cat([x_t, h]))) at each step, "
                     "starting from zeros")
    if not got.requires_grad:
        return _hint("the result has no graph: do not compute it under no_grad or from detached cells")
    got.sum().backward()
    want.sum().backward()
    for g, w in zip(_cell_grads(cells[:2]), _cell_grads(cells[2:])):
        if (g is None) != (w is None) or (g is not None and not np.allclose(g, w, atol=1e-6)):
            return _hint("the values are right but the gradients differ: build h only from the "
                         "cells' outputs (no .detach(), no .item())")
    used = "".join("a" if x.sum() > 0 else "b" for x in xs)
    return _correct(f"steps used cells {used}; values and gradients of both cells match")


def _relu_module(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = lib.nn.Linear(4, 8)
            self.fc2 = lib.nn.Linear(8, 8)

        def forward(self, x):
            return self.fc2(lib.relu(self.fc1(x))).relu()

    with _seeded(lib):
        return Net()


@exercise
def exercise_12_2(relu_to_gelu):
    """``relu_to_gelu(gm)`` retargets every ``torch.relu`` call_function node to ``F.gelu`` and recompiles."""
    if not callable(relu_to_gelu):
        return _hint("define relu_to_gelu(gm) and pass the function")
    lib = _library_of_function(relu_to_gelu)
    module = _relu_module(lib)
    gm = lib.fx.symbolic_trace(module)
    result = relu_to_gelu(gm)
    if result is None:
        return _hint("return gm at the end")
    targets = [n.target for n in result.graph.nodes if n.op == "call_function"]
    if lib.relu in targets:
        return _hint("a call_function node still has target torch.relu: set node.target = F.gelu "
                     "for each of them")
    if lib.nn.functional.gelu not in targets:
        return _hint("no node calls F.gelu: give the torch.relu nodes the target F.gelu")
    methods = [n.target for n in result.graph.nodes if n.op == "call_method"]
    if "relu" not in methods:
        return _hint("only call_function nodes with target torch.relu should change: the "
                     "x.relu() method call (a call_method node) must stay")
    with _seeded(lib):
        x = lib.randn(3, 4)
    with lib.no_grad():
        want = _values(module.fc2(lib.nn.functional.gelu(module.fc1(x))).relu())
        got = _values(result(x))
    if not np.allclose(got, want, atol=1e-6):
        return _hint("the graph changed but the module still computes the old code: call "
                     "gm.recompile() after editing the graph")
    return _correct("torch.relu became F.gelu in the graph and in the generated code")


@exercise
def exercise_12_3(checkpointed):
    """``checkpointed(model, x, segments)`` = ``model(x)`` through non-reentrant checkpoint_sequential."""
    if not callable(checkpointed):
        return _hint("define checkpointed(model, x, segments) and pass it")
    lib = _library_of_function(checkpointed)
    nn = lib.nn
    with _seeded(lib):
        model = nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), nn.ReLU()) for _ in range(9)])
        x = lib.randn(4, 16, requires_grad=True)
    plain = model(x)
    plain.sum().backward()
    want_out, want_grads = _values(plain), [_values(p.grad) for p in model.parameters()] + [_values(x.grad)]
    model.zero_grad()
    x.grad = None
    saved = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t.numel()) or t, lambda t: t):
            out = checkpointed(model, x, 3)
    if not _is_tensor(out):
        return _hint("return the model's output (a tensor)")
    if any("use_reentrant" in str(w.message) for w in caught):
        return _hint("checkpoint_sequential warned about use_reentrant: pass use_reentrant=False")
    if not np.allclose(_values(out), want_out, atol=1e-6):
        return _hint("the output differs from model(x): pass the model, the number of segments "
                     "and x to checkpoint_sequential")
    out.sum().backward()
    grads = [_values(p.grad) for p in model.parameters()] + [_values(x.grad)]
    if not all(np.allclose(g, w, atol=1e-6) for g, w in zip(grads, want_grads)):
        return _hint("the gradients differ from those of model(x)")
    everything = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: everything.append(t.numel()) or t, lambda t: t):
        model(x)
    if sum(saved) >= sum(everything):
        return _hint("nothing was checkpointed: the saved tensors are as large as without "
                     "checkpointing; use checkpoint_sequential(model, segments, x, use_reentrant=False)")
    return _correct(f"same output and gradients; {sum(saved)} saved numbers instead of "
                    f"{sum(everything)}")


#: exercise 12.4's expressions, with a, b float32 and d float64 matrices, under autocast("cpu")
AUTOCAST_EXPRESSIONS = {
    "a @ b": "matrix products run in the low dtype (bfloat16 on the CPU)",
    "(a @ b).relu()": "relu is in no list: it runs in its input's dtype, the bfloat16 product",
    "a.relu()": "relu is in no list: it runs in its input's dtype, float32 here",
    "d @ d": "float64 inputs are never cast",
    "F.mse_loss(a @ b, b)": "losses run in float32 (mse_loss is on the CPU's float32 list)",
}


def _autocast_truth(lib):
    a, b, d = lib.randn(3, 3), lib.randn(3, 3), lib.randn(3, 3, dtype=lib.float64)
    F = lib.nn.functional
    with lib.autocast("cpu"):
        results = {"a @ b": a @ b, "(a @ b).relu()": (a @ b).relu(), "a.relu()": a.relu(),
                   "d @ d": d @ d, "F.mse_loss(a @ b, b)": F.mse_loss(a @ b, b)}
    return {k: str(v.dtype) for k, v in results.items()}


@exercise
def exercise_12_4(dtypes):
    """``dtypes[expression]`` is the dtype of each AUTOCAST_EXPRESSIONS entry under autocast("cpu")."""
    if not isinstance(dtypes, dict) or any(k not in dtypes for k in AUTOCAST_EXPRESSIONS):
        return _hint("keep the given keys and give a dtype for each")
    blank = [k for k in AUTOCAST_EXPRESSIONS if dtypes[k] is None]
    if blank:
        return _hint(f"dtypes[{blank[0]!r}] is None: answer torch.float32, torch.bfloat16 or torch.float64")
    truth = _autocast_truth(edutorch)
    for name, reason in AUTOCAST_EXPRESSIONS.items():
        if str(dtypes[name]) != truth[name]:
            return _hint(f"{name!r} gives {truth[name]}: {reason}")
    return _correct("all five dtypes right: low precision for products, float32 for losses, "
                    "the input's dtype otherwise, float64 untouched")


@exercise
def exercise_12_5(scaled_step):
    """``scaled_step``: zero_grad, forward under float16 autocast, scaler.scale(loss).backward(),
    scaler.step(optimizer), scaler.update(); returns the loss."""
    if not callable(scaled_step):
        return _hint("define scaled_step(model, optimizer, scaler, x, y) and pass it")
    lib = _library_of_function(scaled_step)
    nn, F = lib.nn, lib.nn.functional

    def setup():
        with _seeded(lib):
            model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16))
            for p in model.parameters():
                nn.init.normal_(p, std=0.01)
            x, y = lib.randn(32, 16), lib.randn(32, 16) * 0.01
        return model, lib.optim.SGD(model.parameters(), lr=0.5), lib.amp.GradScaler("cpu", growth_interval=1), x, y

    model, optimizer, scaler, x, y = setup()
    ref, ref_opt, ref_scaler, _, _ = setup()
    for step in range(3):
        try:
            loss = scaled_step(model, optimizer, scaler, x, y)
        except AssertionError as error:  # GradScaler's own checks of the call order
            if "No inf checks" in str(error):
                return _hint("scaler.update() ran without a scaler.step(optimizer) before it: step "
                             "through the scaler (it unscales and skips overflowed steps), not "
                             "optimizer.step()")
            if "scaler.scale(" in str(error):
                return _hint("scaler.step(optimizer) found no scaled gradients: backpropagate "
                             "scaler.scale(loss), not the loss itself")
            raise
        ref_opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.float16):
            ref_loss = F.mse_loss(ref(x), y)
        ref_scaler.scale(ref_loss).backward()
        ref_scaler.step(ref_opt)
        ref_scaler.update()
        if not _is_tensor(loss):
            return _hint("return the loss (the tensor from F.mse_loss, not scaled)")
        got_loss, want_loss = float(loss.detach().float()), float(ref_loss.detach().float())
        if abs(got_loss - want_loss) > 1e-6 * max(1.0, abs(want_loss)):
            if math.isclose(got_loss, want_loss * ref_scaler.get_scale() / 2, rel_tol=1e-2):
                return _hint("return the unscaled loss, not scaler.scale(loss)")
            return _hint(f"step {step}: the loss differs from F.mse_loss(model(x), y) under "
                         "autocast('cpu', dtype=torch.float16)")
        if scaler.get_scale() != ref_scaler.get_scale():
            return _hint("the scale did not change as it should: call scaler.update() after "
                         "scaler.step(optimizer)")
        if not all(np.allclose(_values(p), _values(q), atol=1e-7) for p, q in zip(model.parameters(), ref.parameters())):
            first = next(p for p in model.parameters())
            if first.grad is not None and first.grad.dtype != lib.float32:
                return _hint("the gradients are not float32")
            return _hint(f"after step {step} the parameters differ from a correct step: backpropagate "
                         "scaler.scale(loss), then scaler.step(optimizer) (not optimizer.step()), "
                         "and clear the gradients first")
    return _correct(f"three scaled steps match; the scale is now {scaler.get_scale():g}")

# --- lesson 10: reparametrizations ----------------------------------------------------------------


def _parametrize_of(lib):
    """``torch.nn.utils.parametrize`` or ``edutorch.nn.utils.parametrize``."""
    import importlib

    return importlib.import_module(lib.__name__ + ".nn.utils.parametrize")


@exercise
def exercise_10_1(positive_class):
    """``Positive``: ``forward`` maps any real tensor to a strictly positive one, ``right_inverse``
    undoes it, and it works as a parametrization of a Linear layer's weight."""
    if not isinstance(positive_class, type):
        return _hint("pass the class itself: checks.exercise_10_1(Positive)")
    lib = _library(positive_class)
    if not issubclass(positive_class, lib.nn.Module):
        return _hint("Positive must be an nn.Module subclass: class Positive(nn.Module)")
    p = positive_class()
    rng = np.random.default_rng(10)
    values = rng.normal(scale=3.0, size=(4, 3)).astype(np.float32)
    values[0, 0] = 0.0  # abs, relu and square give 0 here
    X = lib.tensor(values, requires_grad=True)
    Y = p(X)
    if not _is_tensor(Y):
        return _hint("forward must RETURN a tensor of X's shape (def forward(self, X): return ...)")
    if tuple(Y.shape) != tuple(X.shape):
        return _hint(f"forward(X) has shape {tuple(Y.shape)}, X has {tuple(X.shape)}: "
                     "map each entry, keep the shape")
    got = _values(Y)
    if not np.all(got > 0):
        at = tuple(int(i) for i in np.argwhere(~(got > 0))[0])
        return _hint(f"forward gives {got[at]:.3g} for the entry {values[at]:.3g}: every real "
                     "number must map to a number > 0 (exp or softplus do; abs, relu and x**2 "
                     "give 0 at 0)")
    if not Y.requires_grad:
        return _hint("forward's result does not require grad: no gradient would reach the "
                     "original. Build it from differentiable tensor ops (X.exp(), "
                     "nn.functional.softplus(X)), not NumPy")
    Y.sum().backward()
    if X.grad is None or not np.all(np.isfinite(_values(X.grad))) or np.allclose(_values(X.grad), 0):
        return _hint("no useful gradient reaches the original: build forward from "
                     "differentiable tensor ops (X.exp(), nn.functional.softplus(X))")
    if not callable(getattr(p, "right_inverse", None)):
        return _hint("add right_inverse(self, Y): without it, assigning layer.weight = ... fails "
                     "and registration keeps the old weight as the original")
    target = lib.tensor(rng.uniform(0.1, 3.0, size=(3, 4)).astype(np.float32))
    try:
        with lib.no_grad():
            back = _values(p(p.right_inverse(target)))
    except Exception as error:
        return _hint(f"forward(right_inverse(Y)) raised {type(error).__name__}: {error}")
    if back.shape != tuple(target.shape) or not np.allclose(back, _values(target), rtol=1e-4, atol=1e-6):
        return _hint("forward(right_inverse(Y)) must give Y back: right_inverse undoes forward "
                     "(log undoes exp)")
    layer = lib.nn.Linear(4, 3)
    with lib.no_grad():
        layer.weight.copy_(target)
    _parametrize_of(lib).register_parametrization(layer, "weight", positive_class())
    if not np.allclose(_values(layer.weight), _values(target), rtol=1e-4, atol=1e-6):
        return _hint("after registration the layer's weight changed: right_inverse must return "
                     "an original that forward maps back to the weight")
    layer.weight = target * 2
    if not np.allclose(_values(layer.weight), 2 * _values(target), rtol=1e-4, atol=1e-6):
        return _hint("assigning layer.weight = Y did not give Y back")
    x = lib.tensor(rng.normal(size=(16, 4)).astype(np.float32))
    optimizer = lib.optim.SGD(layer.parameters(), lr=0.5)
    for _ in range(20):  # a loss that pulls the weights towards 0 (and the originals below it)
        optimizer.zero_grad()
        layer(x).pow(2).mean().backward()
        optimizer.step()
    weight = _values(layer.weight)
    if not np.all(weight > 0):
        return _hint("after 20 training steps some weights are ≤ 0: forward must map EVERY real "
                     "number (the original can go anywhere) to a positive one")
    return _correct(f"after 20 SGD steps pulling the weights to 0: smallest weight {weight.min():.2g} "
                    f"> 0, smallest original {_values(layer.parametrizations.weight.original).min():.2g}")


@exercise
def exercise_10_2(layer, weight_by_hand):
    """``weight_by_hand`` = ``g * v / ‖v‖`` with one norm per output row (``dim=0``)."""
    lib = _library(layer)
    if not _parametrize_of(lib).is_parametrized(layer, "weight"):
        return _hint("pass the layer from the cell above and your tensor: "
                     "checks.exercise_10_2(wn_layer, weight_by_hand)")
    if weight_by_hand is None:
        return _hint("weight_by_hand is None: compute g * v / (the norm of each row of v)")
    g = _values(layer.parametrizations.weight.original0)
    v = _values(layer.parametrizations.weight.original1)
    expected = _values(layer.weight)
    got = _values(weight_by_hand)
    if got.shape != expected.shape:
        return _hint(f"weight_by_hand has shape {got.shape}, the weight {expected.shape}: "
                     "keep the norm's dimension (keepdim=True) so that it broadcasts over each row")
    grad_fn = getattr(weight_by_hand, "grad_fn", None)
    if grad_fn is not None and type(grad_fn).__name__.startswith("WeightNormInterface"):
        return _hint("that is wn_layer.weight itself: compute it from g and v")
    if np.allclose(got, expected, rtol=1e-5, atol=1e-6):
        return _correct("w = g · v / ‖v‖ row by row: each row of the weight has norm g "
                        f"({', '.join(f'{n:.3g}' for n in np.linalg.norm(expected, axis=1))})")
    if np.allclose(got, g * v / np.linalg.norm(v), rtol=1e-5, atol=1e-6):
        return _hint("you divided by the norm of the whole matrix: weight norm uses one norm per "
                     "output ROW (v.norm(dim=1, keepdim=True))")
    if np.allclose(got, g * v / np.linalg.norm(v, axis=0, keepdims=True), rtol=1e-5, atol=1e-6):
        return _hint("you divided by the norms of the columns (dim=0): use the norm of each row, "
                     "v.norm(dim=1, keepdim=True)")
    if np.allclose(got, v / np.linalg.norm(v, axis=1, keepdims=True), rtol=1e-5, atol=1e-6):
        return _hint("that is only the direction v / ‖v‖: multiply by the length g")
    if np.allclose(got, g * v, rtol=1e-5, atol=1e-6):
        return _hint("divide v by the norm of its row: g * v / v.norm(dim=1, keepdim=True)")
    return _hint("not the layer's weight: w = g * v / v.norm(dim=1, keepdim=True)")


@exercise
def exercise_10_3(model, predicted):
    """``predicted`` lists exactly the keys of ``model.state_dict()`` (any order)."""
    if not hasattr(model, "state_dict"):
        return _hint("pass the model and your list: checks.exercise_10_3(model_10_3, keys_10_3)")
    if not isinstance(predicted, (list, tuple, set)) or not predicted:
        return _hint("keys_10_3 is empty: write the keys you expect, e.g. \"0.bias\", ...")
    if not all(isinstance(k, str) for k in predicted):
        return _hint("each key is a string such as \"0.bias\"")
    expected = list(model.state_dict().keys())
    got = set(predicted)
    missing = [k for k in expected if k not in got]
    extra = sorted(got - set(expected))
    if len(got) != len(predicted):
        return _hint("a key appears twice in your list")
    if any(k.endswith(".weight") for k in extra):
        return _hint(f"{[k for k in extra if k.endswith('.weight')]}: a reparametrized weight is "
                     "COMPUTED (by a pre-hook or a property), never saved; its originals are")
    if any(k.endswith(("_g", "_v")) and k.startswith(("1.", "2.")) for k in extra):
        return _hint("weight_g/weight_v are the keys of the OLD weight_norm; the new form saves "
                     "parametrizations.weight.original0 (g) and original1 (v)")
    if any(k.endswith(("_u", "_v")) for k in missing):
        return _hint(f"missing {[k for k in missing if k.endswith(('_u', '_v'))]}: the power-"
                     "iteration vectors of spectral norm are (persistent) buffers, saved too — "
                     "in the new form they belong to the module parametrizations.weight.0")
    if any(k.endswith("bias") for k in missing):
        return _hint("the biases are not reparametrized: each layer still saves its bias")
    if missing or extra:
        return _hint(f"missing {missing[:3]}, not in state_dict {extra[:3]}: print "
                     "model_10_3.state_dict().keys() and compare with your reasoning")
    return _correct(f"all {len(expected)} keys: originals and buffers are saved, derived weights never")


@exercise
def exercise_10_4(deep):
    """20 ``Linear(8, 8, bias=False)`` with orthogonal weights: ``‖deep(x)‖ = ‖x‖``."""
    if not hasattr(deep, "named_modules"):
        return _hint("deep must be an nn.Sequential of 20 orthogonal nn.Linear(8, 8, bias=False)")
    lib = _library(deep)
    layers = [m for m in deep.modules() if isinstance(m, lib.nn.Linear)]
    if len(layers) < 20:
        return _hint(f"deep has {len(layers)} Linear layers: build 20 (a list comprehension in "
                     "nn.Sequential(*...))")
    if any(m.bias is not None for m in layers):
        return _hint("a bias shifts every output and breaks ‖W x‖ = ‖x‖: nn.Linear(8, 8, bias=False)")
    if any(tuple(m.weight.shape) != (8, 8) for m in layers):
        return _hint("every layer maps 8 features to 8: nn.Linear(8, 8, bias=False)")
    plain = [i for i, m in enumerate(layers)
             if not _parametrize_of(lib).is_parametrized(m, "weight")]
    if plain:
        return _hint(f"layers {plain[:3]} have a plain weight: wrap each one with "
                     "nn.utils.parametrizations.orthogonal(...) so that it stays orthogonal while training")
    for i, m in enumerate(layers):
        w = _values(m.weight)
        if not np.allclose(w.T @ w, np.eye(8), atol=1e-4):
            return _hint(f"the weight of layer {i} is not orthogonal: use "
                         "nn.utils.parametrizations.orthogonal")
    rng = np.random.default_rng(4)
    x = lib.tensor(rng.normal(size=(5, 8)).astype(np.float32))
    out = deep(x)
    ratio = np.linalg.norm(_values(out), axis=1) / np.linalg.norm(_values(x), axis=1)
    if not np.allclose(ratio, 1.0, atol=1e-3):
        return _hint(f"‖deep(x)‖ / ‖x‖ = {ratio.min():.3g}..{ratio.max():.3g}, not 1: only the "
                     "orthogonal Linear layers may be in deep (no activation, no bias)")
    out.sum().backward()
    originals = [m.parametrizations.weight.original for m in layers]
    if any(o.grad is None for o in originals):
        return _hint("the gradient does not reach every layer's original")
    # the bound checked, not the error itself: float32 rounding depends on the CPU's BLAS kernels
    return _correct(f"{len(layers)} orthogonal layers: ‖deep(x)‖ / ‖x‖ = 1 (to within 1e-3)")


@exercise
def exercise_10_5(layer, w_before):
    """``layer`` is a plain ``Linear`` again whose ``weight`` parameter is ``w_before``."""
    lib = _library(layer)
    if not isinstance(layer, lib.nn.Linear):
        return _hint("pass the layer and its weight before: checks.exercise_10_5(orth5, w_before)")
    if _parametrize_of(lib).is_parametrized(layer):
        return _hint("orth5 is still parametrized: call parametrize.remove_parametrizations("
                     "orth5, \"weight\", leave_parametrized=...)")
    if type(layer) is not lib.nn.Linear:
        return _hint(f"orth5 is a {type(layer).__name__}: remove the parametrization (do not "
                     "build a new class)")
    if sorted(layer.state_dict().keys()) != ["bias", "weight"]:
        return _hint(f"state_dict has {sorted(layer.state_dict().keys())}: expected bias and weight")
    if not isinstance(layer.weight, lib.nn.Parameter):
        return _hint("weight is not an nn.Parameter any more")
    w = _values(layer.weight)
    eye = np.eye(w.shape[0])
    if np.allclose(w, -eye) or not np.allclose(w.T @ w, eye, atol=1e-4):
        return _hint("the weight is not the orthogonal matrix but the stored ORIGINAL "
                     "(leave_parametrized=False keeps that); keep the derived value: "
                     "leave_parametrized=True")
    if not np.allclose(w, _values(w_before), atol=1e-6):
        return _hint("the weight is not the one the parametrization computed: "
                     "leave_parametrized=True keeps it")
    return _correct("a plain nn.Linear whose weight is the trained orthogonal matrix "
                    f"(WᵀW = I: {np.allclose(w.T @ w, np.eye(w.shape[0]), atol=1e-5)})")

# --- lesson 08: initialization, dtype and device ------------------------------------------------


def _dtype_name(tensor):
    """``"float64"`` for ``torch.float64`` (edutorch or torch)."""
    return str(tensor.dtype).replace("torch.", "")


def _device_type(tensor):
    """``"cpu"`` or ``"cuda"``: the device's type, without an index."""
    return str(tensor.device).split(":")[0]


@exercise
def exercise_8_1(layer):
    """``layer.weight`` from Xavier uniform with tanh's gain (5/3); ``layer.bias`` all zeros."""
    lib = _library(layer)
    if not isinstance(layer, lib.nn.Linear):
        return _hint("pass the nn.Linear layer you re-initialised: checks.exercise_8_1(layer)")
    fan_out, fan_in = layer.weight.shape
    gain = lib.nn.init.calculate_gain("tanh")
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))  # xavier_uniform_: U(-bound, bound)
    w = _values(layer.weight)
    largest, std = float(np.abs(w).max()), float(w.std())
    default = 1 / math.sqrt(fan_in)
    if largest <= default * (1 + 1e-6) and std < 0.7 * default:
        return _hint("the weight still has PyTorch's default values, U(-1/√fan_in, 1/√fan_in): call "
                     "nn.init.xavier_uniform_(layer.weight, gain=...)")
    plain = bound / gain
    if largest <= plain * (1 + 1e-6) and largest > 0.9 * plain:
        return _hint("that is Xavier uniform with gain 1: pass gain=nn.init.calculate_gain('tanh')")
    if largest > bound * (1 + 1e-6):
        return _hint(f"|weight| reaches {largest:.3g}, beyond Xavier's bound gain·√(6/(fan_in+fan_out)) = "
                     f"{bound:.3g}: use xavier_uniform_ (not kaiming or normal) with gain=calculate_gain('tanh')")
    if not (largest > 0.98 * bound and abs(std - bound / math.sqrt(3)) < 0.03 * bound / math.sqrt(3)):
        return _hint(f"the weight's values are not spread over U(-{bound:.3g}, {bound:.3g}) (std "
                     f"{std:.3g}, expected {bound / math.sqrt(3):.3g}): use nn.init.xavier_uniform_")
    if layer.bias is None or np.any(_values(layer.bias) != 0):
        return _hint("the weight is right; now set the bias to zero: nn.init.zeros_(layer.bias)")
    return _correct(f"Xavier uniform with gain {gain:.4g}: bound {bound:.4f}, std {std:.4f}; bias 0")


def _deep_relu_for_check(lib, depth=8, width=128):
    nn = lib.nn
    layers, size = [], 48
    for _ in range(depth):
        layers += [nn.Linear(size, width), nn.ReLU()]
        size = width
    return nn.Sequential(*layers, nn.Linear(size, 10))


def _library_of_function(fn):
    """``torch`` if the function's module imported real PyTorch as ``torch`` or ``nn``, else edutorch
    (a student's function tests ``isinstance(m, nn.Linear)`` with the ``nn`` of its notebook)."""
    names = getattr(fn, "__globals__", {})
    for name in ("torch", "nn"):
        module = names.get(name)
        if getattr(module, "__name__", "").split(".")[0] == "torch" and "torch" in sys.modules:
            return sys.modules["torch"]
    return edutorch


@exercise
def exercise_8_2(init_weights):
    """``init_weights(m)``: Kaiming normal (fan_in, relu) for every Linear weight, zero bias, nothing
    else touched; the check applies it with ``Module.apply`` to a deep ReLU network."""
    if not callable(init_weights):
        return _hint("pass your function init_weights itself: checks.exercise_8_2(init_weights)")
    lib = _library_of_function(init_weights)
    lib.manual_seed(0)
    model = _deep_relu_for_check(lib)
    model.apply(init_weights)
    linears = [m for m in model if isinstance(m, lib.nn.Linear)]
    for i, m in enumerate(linears):
        fan_in = m.weight.shape[1]
        want = math.sqrt(2.0 / fan_in)
        w = _values(m.weight)
        std = float(w.std())
        if abs(std - want) > 0.08 * want:
            if np.abs(w).max() <= 1 / math.sqrt(fan_in) * (1 + 1e-6):
                return _hint("the weights still look like PyTorch's default (|w| ≤ 1/√fan_in): does "
                             "init_weights change m.weight when m is an nn.Linear?")
            if abs(std - math.sqrt(2.0 / m.weight.shape[0])) < 0.08 * math.sqrt(2.0 / m.weight.shape[0]):
                return _hint("the std is √(2/fan_out): use mode='fan_in' (the default)")
            if abs(std - 1 / math.sqrt(fan_in)) < 0.08 / math.sqrt(fan_in):
                return _hint("the std is 1/√fan_in, the gain of 'linear': pass nonlinearity='relu' "
                             "(gain √2)")
            return _hint(f"layer {i}'s weight has std {std:.3g}; Kaiming for ReLU gives √(2/fan_in) = "
                         f"{want:.3g}: nn.init.kaiming_normal_(m.weight, nonlinearity='relu')")
        if np.abs(w).max() <= math.sqrt(3.0) * want * (1 + 1e-6) and w.size > 1000:
            return _hint("the weights are uniform (kaiming_uniform_): the exercise asks for Kaiming "
                         "NORMAL, nn.init.kaiming_normal_")
        if m.bias is not None and np.any(_values(m.bias) != 0):
            return _hint("the weights are right, but the biases are not zero: nn.init.zeros_(m.bias)")
    rng = np.random.default_rng(3)
    h = lib.tensor(rng.normal(size=(128, 48)).astype(np.float32))
    stds = []
    with lib.no_grad():
        for m in model:
            h = m(h)
            if isinstance(m, lib.nn.ReLU):
                stds.append(float(_values(h).std()))
    ratio = stds[-1] / stds[0]
    if not 0.25 < ratio < 4:
        return _hint(f"the activations change by {ratio:.2g}× over {len(stds)} layers: check the init")
    return _correct(f"{len(linears)} Linear layers at std √(2/fan_in), biases 0; the activations' std "
                    f"goes from {stds[0]:.2f} (layer 1) to {stds[-1]:.2f} (layer {len(stds)})")


@exercise
def exercise_8_3(rotation):
    """``rotation``: a 64×64 ``nn.Linear`` with an orthogonal weight (W Wᵀ = I) and a zero bias."""
    if rotation is None:
        return _hint("rotation is None: rotation = nn.utils.skip_init(nn.Linear, 64, 64), then "
                     "nn.init.orthogonal_(rotation.weight) and nn.init.zeros_(rotation.bias)")
    lib = _library(rotation)
    if not isinstance(rotation, lib.nn.Linear):
        return _hint(f"rotation is a {type(rotation).__name__}: build an nn.Linear(64, 64) with skip_init")
    if tuple(rotation.weight.shape) != (64, 64):
        return _hint(f"the weight has shape {tuple(rotation.weight.shape)}: use nn.Linear(64, 64)")
    w = _values(rotation.weight)
    if not np.all(np.isfinite(w)):
        return _hint("the weight holds inf or nan: skip_init leaves uninitialised memory, so "
                     "initialise it: nn.init.orthogonal_(rotation.weight)")
    gram = w @ w.T
    scale = float(np.mean(np.diag(gram)))
    if np.allclose(gram, scale * np.eye(64), atol=1e-4 * max(scale, 1)) and not math.isclose(scale, 1, rel_tol=1e-4):
        return _hint(f"W Wᵀ = {scale:.3g}·I: orthogonal, but scaled; use gain 1 (the default)")
    if not np.allclose(gram, np.eye(64), atol=1e-4):
        return _hint("W Wᵀ is not the identity: give the weight orthogonal values with "
                     "nn.init.orthogonal_(rotation.weight)")
    if rotation.bias is None or np.any(_values(rotation.bias) != 0):
        return _hint("the weight is orthogonal; the bias must be zero too (skip_init left it "
                     "uninitialised): nn.init.zeros_(rotation.bias)")
    x = np.random.default_rng(4).normal(size=(16, 64))
    kept = np.linalg.norm(x @ w.T) / np.linalg.norm(x)
    return _correct(f"W Wᵀ = I, bias 0: one layer multiplies a batch's norm by {kept:.6f}")


@exercise
def exercise_8_4(net32, net64, out64, x):
    """``net64`` a float64 copy of ``net32`` (still float32), ``out64 = net64(x)`` in float64."""
    if net64 is None or not hasattr(net64, "parameters"):
        return _hint("net64 is missing: copy.deepcopy(net32), then convert the copy with .double()")
    lib = _library(net32)
    original = {name: _dtype_name(p) for name, p in net32.named_parameters()}
    if net64 is net32:
        return _hint("net64 IS net32: Module.double() converts in place and returns the same module; "
                     "convert a copy: copy.deepcopy(net32).double()")
    if set(original.values()) != {"float32"}:
        return _hint(f"net32 is now {sorted(set(original.values()))}: the conversion changed the "
                     "original. Module.double() works in place, so convert a copy (copy.deepcopy)")
    converted = {name: _dtype_name(p) for name, p in net64.named_parameters()}
    if sorted(converted) != sorted(original):
        return _hint("net64 does not have net32's parameters: make it with copy.deepcopy(net32)")
    if set(converted.values()) != {"float64"}:
        return _hint(f"net64's parameters are {sorted(set(converted.values()))}: convert it with "
                     ".double() or .to(torch.float64)")
    params64 = dict(net64.named_parameters())
    for name, p in net32.named_parameters():
        if not np.array_equal(_values(p), _values(params64[name])):
            return _hint(f"net64.{name} has other values than net32.{name}: copy the network "
                         "(copy.deepcopy), do not build a new one")
    if out64 is None or not _is_tensor(out64):
        return _hint("out64 is missing: out64 = net64(xb.double())")
    if _dtype_name(out64) != "float64":
        return _hint(f"out64 is {_dtype_name(out64)}: compute it with net64 on the float64 batch, "
                     "xb.double()")
    with lib.no_grad():
        expected = _values(net64(x.to(lib.float64)))
    if _values(out64).shape != expected.shape or not np.allclose(_values(out64), expected, rtol=1e-12,
                                                                 atol=1e-12):
        return _hint("out64 is not net64's output on the whole batch xb (in float64)")
    with lib.no_grad():
        low = _values(net32(x.to(lib.float32)))
    difference = float(np.abs(low - expected).max() / np.abs(expected).max())
    return _correct(f"net32 still float32, net64 float64 with the same values; the float32 output "
                    f"differs by {difference:.1e} of the largest output")


@exercise
def exercise_8_5(head, out, x, device):
    """``head``: ``nn.Linear(64, 10)`` made in float64 on ``device`` with the default init; ``out``:
    its output on ``x`` moved to that device and dtype."""
    if head is None:
        return _hint("head is None: nn.Linear(64, 10, device=device, dtype=torch.float64)")
    lib = _library(head)
    if not isinstance(head, lib.nn.Linear) or (head.in_features, head.out_features) != (64, 10):
        return _hint("head must be an nn.Linear(64, 10)")
    dtypes = {_dtype_name(p) for p in head.parameters()}
    if dtypes != {"float64"}:
        return _hint(f"head's parameters are {sorted(dtypes)}: pass dtype=torch.float64 to nn.Linear")
    devices = {_device_type(p) for p in head.parameters()}
    if devices != {str(device).split(":")[0]}:
        return _hint(f"head's parameters are on {sorted(devices)}, not on {device!r}: pass "
                     "device=device to nn.Linear")
    bound = 1 / math.sqrt(64)
    values = np.concatenate([_values(p).ravel() for p in head.parameters()])
    if not np.all(np.isfinite(values)) or np.abs(values).max() > bound * (1 + 1e-9) or values.std() < 0.3 * bound:
        return _hint("the parameters are not PyTorch's default U(-1/√64, 1/√64): build the layer with "
                     "nn.Linear(..., device=device, dtype=...), not skip_init, and do not re-initialise it")
    if out is None or not _is_tensor(out):
        return _hint("out is missing: out = head(xb.to(device=device, dtype=torch.float64))")
    if _dtype_name(out) != "float64" or _device_type(out) != str(device).split(":")[0]:
        return _hint(f"out is {_dtype_name(out)} on {out.device}: move the batch with "
                     "xb.to(device=device, dtype=torch.float64) before calling head")
    with lib.no_grad():
        expected = _values(head(x.to(device=device, dtype=lib.float64)))
    if _values(out).shape != expected.shape or not np.allclose(_values(out), expected, rtol=1e-12,
                                                               atol=1e-12):
        return _hint("out is not head's output on the whole batch xb")
    return _correct(f"Linear(64, 10) made in float64 on {device}, default init (|w| ≤ 1/8); "
                    f"output {tuple(out.shape)} float64 on {device}")
