"""Checks of lesson 09 · Extending autograd (lessons/09-extending-autograd.ipynb)."""

import math
import warnings

import numpy as np

from ._common import (
    _correct,
    _hint,
    _is_tensor,
    _library,
    _library_of_function,
    _node_name,
    _values,
    exercise,
)


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
            if "number of gradients" in str(error):  # edutorch counts them when the node runs
                return _hint(f"backward returned the wrong number of values ({error}): return one "
                             "per input of forward, (grad_a, grad_b)")
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
