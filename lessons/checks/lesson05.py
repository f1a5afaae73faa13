"""Checks of lesson 05 · The training loop and optimizers (lessons/05-training-loop-and-optimizers.ipynb)."""

import math

import numpy as np

import edutorch

from ._common import (
    _correct,
    _hint,
    _is_tensor,
    _library,
    _library_of_function,
    _linear_layers,
    _values,
    exercise,
)


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
    lib = _library_of_function(train_step)
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


def _sgd_by_hand_mismatch(sgd_update, lib, momentum, dampening, weight_decay, nesterov, steps=3):
    """Three steps of ``sgd_update`` against ``lib.optim.SGD`` with the same settings.

    ``None`` when the parameters and the returned buffers match; otherwise what differs:
    ``("p", None)``, or ``("buf", (buf, expected buffer))``.
    """
    rng = np.random.default_rng(5)
    start = rng.normal(size=4)
    grads = [rng.normal(size=4) for _ in range(steps)]
    param = lib.nn.Parameter(lib.tensor(start, dtype=lib.float64))
    optimizer = lib.optim.SGD([param], lr=0.1, momentum=momentum, dampening=dampening,
                              weight_decay=weight_decay, nesterov=nesterov)
    p, buf = lib.tensor(start, dtype=lib.float64), None
    wrong_buffer = None  # a parameter that goes wrong is the first thing to fix
    for g in grads:
        param.grad = lib.tensor(g, dtype=lib.float64)
        optimizer.step()
        p, buf = sgd_update(p, lib.tensor(g, dtype=lib.float64), buf, 0.1, momentum, dampening,
                            weight_decay, nesterov)
        if not np.allclose(_values(p), _values(param), rtol=1e-9, atol=1e-12):
            return "p", None
        expected = optimizer.state[param].get("momentum_buffer") if momentum else None
        if wrong_buffer is None and not _same_buffer(buf, expected):
            # copies: SGD updates its buffer in place at the next step
            wrong_buffer = ("buf", tuple(None if b is None else _values(b) for b in (buf, expected)))
    return wrong_buffer


def _same_buffer(buf, expected):
    if expected is None or buf is None:
        return buf is None and expected is None
    return np.allclose(_values(buf), _values(expected), rtol=1e-9, atol=1e-12)


def _buffer_hint(buf, expected, weight_decay):
    """The hint for a returned ``buf`` that is not SGD's momentum buffer ``expected``."""
    if expected is None:
        return _hint("without momentum return buf unchanged (it was None here), not a tensor: "
                     "there is no momentum buffer to keep")
    if buf is None:
        return _hint("with momentum return the new momentum buffer as new_buf, not None: the next "
                     "step needs it")
    got, want = buf, expected
    if got.shape == want.shape and np.allclose(got, 0.1 * want, rtol=1e-9, atol=1e-12):
        return _hint("the returned buf is lr times the momentum buffer: lr scales only the step "
                     "p - lr * d_p; keep lr out of buf")
    if weight_decay:
        return _weight_decay_hint()
    return _hint("the parameters are right but the returned buf is not the momentum buffer "
                 "momentum * buf + (1 - dampening) * grad that optim.SGD keeps")


@exercise
def exercise_5_2(sgd_update):
    """``sgd_update(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov) -> (p, buf)``."""
    if not callable(sgd_update):
        return _hint("pass your function sgd_update itself")
    lib = _library_of_function(sgd_update)
    result = sgd_update(lib.ones(2), lib.ones(2), None, 0.1, 0.9, 0.0, 0.0, False)
    if not (isinstance(result, tuple) and len(result) == 2):
        return _hint(f"sgd_update returned {type(result).__name__}: return the pair (new_p, new_buf)")
    for setting in _SGD_SETTINGS:
        mismatch = _sgd_by_hand_mismatch(sgd_update, lib, *setting)
        if mismatch is None:
            continue
        if mismatch[0] == "buf":
            return _buffer_hint(*mismatch[1], weight_decay=setting[2])
        return _parameter_hint(*setting)
    return _correct("plain, momentum, dampening, weight decay and Nesterov all match optim.SGD")


def _weight_decay_hint():
    return _hint("weight decay comes first: grad = grad + weight_decay * p, and that grad is "
                 "what goes into the buffer")


def _parameter_hint(momentum, dampening, weight_decay, nesterov):
    """The hint for the first setting of ``_SGD_SETTINGS`` whose parameters differ from optim.SGD's."""
    if momentum == 0:
        return _hint("plain SGD is p - lr * grad: start there (buf is not used without momentum)")
    if not dampening and not weight_decay and not nesterov:
        return _hint("momentum: on the FIRST step (buf is None) buf = grad; afterwards "
                     "buf = momentum * buf + (1 - dampening) * grad, and p - lr * buf")
    if dampening:
        return _hint("dampening scales the new gradient by (1 - dampening), but not on the first "
                     "step: there the buffer is the gradient itself")
    if weight_decay:
        return _weight_decay_hint()
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


def _cosine(top, bottom, t_max, steps=20):
    """CosineAnnealingLR's learning rates before each of ``steps`` steps and after the last."""
    t = np.arange(steps + 1)
    return bottom + 0.5 * (top - bottom) * (1 + np.cos(np.pi * t / t_max))


@exercise
def exercise_5_4(scheduler):
    """A scheduler taking the learning rate from 0.1 to 0.001 along a cosine in 20 steps."""
    if scheduler is None or not hasattr(scheduler, "optimizer"):
        return _hint("pass a scheduler from torch.optim.lr_scheduler, built on the optimizer")
    lrs = np.array(_lr_curve(scheduler, 20))
    if np.allclose(lrs, _cosine(0.1, 0.001, 20), rtol=1e-6, atol=1e-9):
        return _correct("0.1 → 0.001 along half a cosine in 20 steps")
    if not math.isclose(lrs[0], 0.1, rel_tol=1e-6):
        return _hint(f"the curve starts at {lrs[0]:g}: build the optimizer with lr=0.1")
    if np.allclose(lrs, _cosine(0.1, lrs[-1], 20), rtol=1e-6, atol=1e-9):
        if math.isclose(lrs[-1], 0.0, abs_tol=1e-9):
            return _hint("the curve ends at 0: set eta_min=0.001 (the lowest learning rate)")
        return _hint(f"the cosine bottoms out at {lrs[-1]:g}: eta_min is the lowest learning rate, "
                     "0.001")
    if len(set(np.round(lrs, 12))) <= 3:
        return _hint("the learning rate moves in steps: use CosineAnnealingLR for a smooth cosine")
    if math.isclose(lrs[-1], 0.001, rel_tol=1e-6):
        return _hint("the curve goes from 0.1 to 0.001 but not along half a cosine: use "
                     "CosineAnnealingLR (ExponentialLR and LinearLR draw other curves)")
    ratio = (lrs[1] - 0.001) / (0.1 - 0.001) * 2 - 1  # cos(pi / T_max) if it is a cosine
    t_max = round(math.pi / math.acos(ratio)) if -1 < ratio < 1 else None
    if t_max and t_max != 20 and np.allclose(lrs[:min(t_max, 20) + 1],
                                             _cosine(0.1, 0.001, t_max)[:min(t_max, 20) + 1]):
        return _hint(f"a cosine with T_max={t_max}: T_max is the number of steps from the top to "
                     "the bottom, 20")
    return _hint(f"after 20 steps the learning rate is {lrs[-1]:g}, not 0.001, and the curve is not "
                 "half a cosine: CosineAnnealingLR(optimizer, T_max=20, eta_min=0.001)")


def _as_initialised(model):
    """True if every Linear weight and bias still lies in nn.Linear's initial range ±1/√in_features
    (training moves at least one of them out of it)."""
    layers = [m for _, m in _linear_layers(model)]
    return bool(layers) and all(
        np.abs(_values(p)).max() <= 1 / math.sqrt(m.in_features) + 1e-7
        for m in layers for p in m.parameters())


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
    if accuracy < 0.93 and _as_initialised(model):
        if all(p.grad is None for p in model.parameters()):
            return _hint(f"accuracy {accuracy:.0%}: the model was never trained (no parameter has "
                         "a .grad): write the loop that calls train_step on the training batches")
        return _hint(f"accuracy {accuracy:.0%}: the weights are still where nn.Linear put them "
                     "although gradients were computed. Did the loop call optimizer.step() after "
                     "loss.backward()?")
    if accuracy < 0.93:
        return _hint(f"held-out accuracy {accuracy:.1%}, below 93 %: train longer (more epochs) "
                     "or with a larger learning rate")
    return _correct(f"held-out accuracy {accuracy:.1%} on {len(y)} test images")
