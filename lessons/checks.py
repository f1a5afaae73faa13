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
