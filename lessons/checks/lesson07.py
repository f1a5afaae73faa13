"""Checks of lesson 07 · Gradients up close (lessons/07-gradients-up-close.ipynb)."""

import copy
import math

import numpy as np

from ._common import (
    _correct,
    _hint,
    _library,
    _linear_layers,
    _multiple,
    _values,
    exercise,
)


def _grad_norms(net):
    """``{name: ‖p.grad‖}`` for every parameter of ``net`` that has a gradient."""
    return {name: float(np.linalg.norm(_values(p.grad))) for name, p in net.named_parameters()
            if p.grad is not None}


def _first_last_ratio(net):
    """‖grad‖ of the first Linear weight over that of the last one."""
    layers = [m for _, m in _linear_layers(net)]
    first, last = (float(np.linalg.norm(_values(m.weight.grad))) for m in (layers[0], layers[-1]))
    return first / last


def _lesson_batch(lib):
    """The lesson's batch ``xb, yb``: the first 256 training digits, in ``lib``'s tensors."""
    from edutorch.datasets import load_digits

    x, y = load_digits("train")
    return lib.tensor(x.numpy()[:256]), lib.tensor(y.numpy()[:256])


def _reference_grads(net):
    """``{name: gradient}`` of ``loss_fn(net(xb), yb)`` (cross-entropy on the lesson's batch), one
    backward on a copy of ``net``: what the exercise asks the student's gradients to be."""
    lib = _library(net)
    twin = copy.deepcopy(net)
    for p in twin.parameters():
        p.grad = None
    xb, yb = _lesson_batch(lib)
    lib.nn.CrossEntropyLoss()(twin(xb), yb).backward()
    return {name: _values(p.grad) for name, p in twin.named_parameters()}


def _gradient_mistake(net):
    """A hint if ``net``'s gradients are not those of one backward of loss_fn on xb, yb; else None."""
    reference = _reference_grads(net)
    grads = {name: _values(p.grad) for name, p in net.named_parameters() if p.grad is not None}
    if set(grads) != set(reference):
        return None  # the caller names the parameters without a gradient
    if all(np.allclose(grads[n], reference[n], rtol=1e-4, atol=1e-7) for n in reference):
        return None
    got = np.concatenate([g.ravel() for g in grads.values()])
    want = np.concatenate([reference[n].ravel() for n in grads])
    times = _multiple(got, want, rtol=1e-4, atol=1e-7)
    if times:
        return _hint(f"net's gradients are {times}× those of one backward: gradients ACCUMULATE, "
                     "so backward ran {times} times. Set the gradients to None (net.zero_grad()) "
                     "and call backward once".replace("{times}", str(times)))
    return _hint("net's gradients are not those of loss_fn(net(xb), yb): compute the loss with "
                 "the lesson's loss_fn (cross-entropy) on the batch xb, yb, then call backward")


@exercise
def exercise_7_1(net, norms):
    """``norms[name]`` is the 2-norm of ``p.grad`` for every parameter of ``net``, the gradients
    of one backward of ``loss_fn(net(xb), yb)``."""
    if not hasattr(net, "named_parameters"):
        return _hint("pass the network itself and your dictionary: checks.exercise_7_1(net, norms)")
    expected = _grad_norms(net)
    if not expected:
        return _hint("net has no gradients yet: compute the loss on the batch and call loss.backward()")
    if not isinstance(norms, dict) or not norms:
        return _hint("norms is empty: fill it with {name: p.grad.norm().item()} for each "
                     "(name, p) in net.named_parameters()")
    if sorted(norms) != sorted(expected) or len(expected) != len(list(net.parameters())):
        return _hint(f"norms has keys {sorted(norms)[:3]}...; use the names of "
                     f"net.named_parameters(), every parameter: {list(expected)[:3]}...")
    mistake = _gradient_mistake(net)
    if mistake is not None:
        return mistake
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
    """As deep as the sigmoid network (six hidden Linear layers of width 32 and the output layer),
    gradients of loss_fn on xb, yb computed, and ‖grad‖ of the first weight > 1/100 of the last's."""
    if not hasattr(net, "named_modules"):
        return _hint("pass your network: checks.exercise_7_2(relu_net)")
    layers = _linear_layers(net)
    if len(layers) < 7:
        return _hint(f"net has {len(layers)} Linear layers; keep the depth (6 hidden layers + the "
                     "output layer, 7 Linear layers): the point is a DEEP network whose gradient flows")
    widths = [m.out_features for _, m in layers[:-1]]
    if any(w != 32 for w in widths):
        return _hint(f"the hidden layers have widths {widths}: keep six hidden layers of width 32, "
                     "as in sigmoid_net, and change what lets the gradient through")
    if any(m.weight.grad is None for _, m in layers):
        return _hint("the weights have no gradient yet: compute the loss on the batch and call "
                     "loss.backward()")
    mistake = _gradient_mistake(net)
    if mistake is not None:
        return mistake
    ratio = _first_last_ratio(net)
    if not ratio > 1e-2:
        lib = _library(net)
        sigmoids = [name for name, m in net.named_modules() if isinstance(m, lib.nn.Sigmoid)]
        if sigmoids:
            return _hint(f"the first layer's gradient is {ratio:.1e} × the last one's: the network "
                         f"still uses Sigmoid (at {sigmoids[:3]}), whose derivative is at most 1/4, "
                         "so every layer shrinks the gradient. Use nn.ReLU (or nn.Tanh)")
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
    twin = copy.deepcopy(model)
    twin.zero_grad()
    lib.nn.functional.mse_loss(twin(x), y).backward()
    return [_values(p.grad) for p in twin.parameters()]


def _reference_clip_step(lib, net, x, y, lr, max_norm, clip="norm"):
    """One correct step on a copy of ``net``: (its parameters after, clip_grad_norm_'s total norm);
    with ``clip="value"`` the step clip_grad_value_ would give instead."""
    twin = copy.deepcopy(net)
    lib.nn.functional.mse_loss(twin(x), y).backward()
    if clip == "value":
        lib.nn.utils.clip_grad_value_(twin.parameters(), max_norm)
        total = None
    else:
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
    value_clipped, _ = _reference_clip_step(lib, _clip_step_setup(lib)[0], x, y, lr, max_norm,
                                            clip="value")
    if all(np.allclose(a, v, rtol=1e-4, atol=1e-6) for a, v in zip(after, value_clipped)):
        return _hint("that is clip_grad_value_, which clamps each entry: clip the total NORM with "
                     "clip_grad_norm_(model.parameters(), max_norm)")
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
    replaced = ("write the values back with vector_to_parameters(theta, net.parameters()), which "
                "keeps the model's Parameters: do not assign new tensors or Parameters to the layers")
    if not all(isinstance(p, lib.nn.Parameter) and p.requires_grad for p in params):
        return _hint(f"a parameter is no longer a trainable nn.Parameter: {replaced}")
    start = _values(theta0).ravel()
    if start.size != sum(p.numel() for p in params):
        return _hint(f"theta0 has {start.size} numbers but net has {sum(p.numel() for p in params)}: "
                     f"a parameter was removed or replaced ({replaced}), or theta0 is not the vector "
                     "parameters_to_vector(net.parameters()) gave before the step")
    if any(p.grad is None for p in params):
        if any(p.grad is not None for p in params):
            return _hint(f"some parameters have no gradient: they were replaced by new Parameters. "
                         f"{replaced[0].upper() + replaced[1:]}")
        return _hint("the parameters have no gradient: the cell above ran backward; run it again")
    grads = np.concatenate([_values(p.grad).ravel() for p in params])
    now = np.concatenate([_values(p).ravel() for p in params])
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
