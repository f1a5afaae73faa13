"""Lesson 05's checks (the lessons/checks package): right answers pass, each typical mistake gets its hint,
with edutorch objects and with real PyTorch objects."""
import math

import pytest

import checks
from check_helpers import assert_hint, assert_ok
import edutorch as et


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="real PyTorch not installed: torch-object checks skipped")


# --- 5.1: one training step ----------------------------------------------------------------------

def right_step(model, optimizer, loss_fn, x, y):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def test_5_1_right_loop():
    assert_ok(checks.exercise_5_1.check(right_step))


# the typical mistakes of 5.1 are in lessons/checks/catalogue/lesson05.py (test_catalogue.py)


def test_5_1_with_a_function_written_for_torch(torch):
    def torch_step(model, optimizer, loss_fn, x, y):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        torch.autograd.backward(loss)   # only real PyTorch's own function here
        optimizer.step()
        return loss

    assert checks.lesson05._library_of_function(torch_step) is torch
    assert_ok(checks.exercise_5_1.check(torch_step))


# --- 5.2: SGD by hand ----------------------------------------------------------------------------

def sgd_update(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov):
    d_p = grad + weight_decay * p
    if momentum:
        buf = d_p.clone() if buf is None else momentum * buf + (1 - dampening) * d_p
        d_p = d_p + momentum * buf if nesterov else buf
    return p - lr * d_p, buf


def test_5_2_right_formula():
    assert_ok(checks.exercise_5_2.check(sgd_update))


def test_5_2_mistakes():
    def plain_only(p, grad, buf, lr, *args):
        return p - lr * grad, buf

    def damped_first_step(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov):
        d_p = grad + weight_decay * p
        if momentum == 0:
            return p - lr * d_p, buf
        buf = (1 - dampening) * d_p if buf is None else momentum * buf + (1 - dampening) * d_p
        d_p = d_p + momentum * buf if nesterov else buf
        return p - lr * d_p, buf

    def decay_after_momentum(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov):
        if momentum == 0:
            return p - lr * (grad + weight_decay * p), buf
        buf = grad.clone() if buf is None else momentum * buf + (1 - dampening) * grad
        d_p = (grad + momentum * buf if nesterov else buf) + weight_decay * p
        return p - lr * d_p, buf

    def no_nesterov(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov):
        return sgd_update(p, grad, buf, lr, momentum, dampening, weight_decay, False)

    def wrong_sign(p, grad, buf, lr, *args):
        return p + lr * grad, buf

    assert_hint(checks.exercise_5_2.check(plain_only), "FIRST step")
    assert_hint(checks.exercise_5_2.check(damped_first_step), "dampening", "first")
    assert_hint(checks.exercise_5_2.check(decay_after_momentum), "weight decay comes first")
    assert_hint(checks.exercise_5_2.check(no_nesterov), "Nesterov")
    assert_hint(checks.exercise_5_2.check(wrong_sign), "p - lr * grad")
    assert_hint(checks.exercise_5_2.check(lambda *args: None), "returned NoneType", "(new_p, new_buf)")
    assert_hint(checks.exercise_5_2.check(lambda p, grad, *args: p - grad), "returned Tensor")
    assert_hint(checks.exercise_5_2.check(lambda p, grad, buf, lr, *args: (p - lr * grad.sum(), buf)),
                "p - lr * grad")


def test_5_2_with_a_function_written_for_torch(torch):
    def torch_update(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov):
        d_p = torch.add(grad, p, alpha=weight_decay)
        if momentum:
            buf = torch.clone(d_p) if buf is None else torch.add(momentum * buf, d_p, alpha=1 - dampening)
            d_p = torch.add(d_p, buf, alpha=momentum) if nesterov else buf
        return torch.add(p, d_p, alpha=-lr), buf

    assert_ok(checks.exercise_5_2.check(torch_update))


# --- 5.3: AdamW with parameter groups ------------------------------------------------------------

def groups(lib, net, weight_decay=0.05, bias_decay=0.0, cls="AdamW", lr=1e-3):
    decay = [p for p in net.parameters() if p.dim() > 1]
    no_decay = [p for p in net.parameters() if p.dim() == 1]
    return getattr(lib.optim, cls)([{"params": decay, "weight_decay": weight_decay},
                                    {"params": no_decay, "weight_decay": bias_decay}], lr=lr)


@pytest.mark.parametrize("use_torch", [False, True], ids=["edutorch", "torch"])
def test_5_3(use_torch, request):
    lib = request.getfixturevalue("torch") if use_torch else et
    net = checks.exercise_5_3_model(lib)
    assert_ok(checks.exercise_5_3.check(groups(lib, net), net))
    decoupled_adam = lib.optim.Adam([{"params": [p for p in net.parameters() if p.dim() > 1],
                                      "weight_decay": 0.05},
                                     {"params": [p for p in net.parameters() if p.dim() == 1]}],
                                    lr=1e-3, decoupled_weight_decay=True)
    assert_ok(checks.exercise_5_3.check(decoupled_adam, net))  # AdamW by another name
    assert_hint(checks.exercise_5_3.check(groups(lib, net, cls="Adam"), net), "use AdamW", "L2")
    assert_hint(checks.exercise_5_3.check(groups(lib, net, cls="SGD"), net), "SGD")
    assert_hint(checks.exercise_5_3.check(lib.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0.05),
                                          net), "biases are decayed")
    assert_hint(checks.exercise_5_3.check(lib.optim.AdamW(net.parameters(), lr=1e-3), net),
                "biases are decayed")
    assert_hint(checks.exercise_5_3.check(groups(lib, net, weight_decay=0.01), net), "0.05")
    assert_hint(checks.exercise_5_3.check(groups(lib, net, lr=0.01), net), "lr=1e-3")
    weights_only = lib.optim.AdamW([p for p in net.parameters() if p.dim() > 1], lr=1e-3,
                                   weight_decay=0.05)
    assert_hint(checks.exercise_5_3.check(weights_only, net), "every parameter")
    assert_hint(checks.exercise_5_3.check(None, net), "build an optimizer")


# --- 5.4: a cosine schedule ----------------------------------------------------------------------

@pytest.mark.parametrize("use_torch", [False, True], ids=["edutorch", "torch"])
def test_5_4(use_torch, request):
    lib = request.getfixturevalue("torch") if use_torch else et
    sched = lib.optim.lr_scheduler

    def opt(lr=0.1):
        return lib.optim.SGD([lib.nn.Parameter(lib.zeros(3))], lr=lr)

    right = sched.CosineAnnealingLR(opt(), T_max=20, eta_min=0.001)
    assert_ok(checks.exercise_5_4.check(right))
    assert_ok(checks.exercise_5_4.check(right))  # the check restored the scheduler
    assert math.isclose(right.optimizer.param_groups[0]["lr"], 0.1)
    lam = sched.LambdaLR(opt(), lambda t: (0.001 + 0.0495 * (1 + math.cos(math.pi * min(t, 20) / 20))) / 0.1)
    assert_ok(checks.exercise_5_4.check(lam))  # any schedule with the right curve
    assert_hint(checks.exercise_5_4.check(sched.CosineAnnealingLR(opt(), T_max=20)), "eta_min=0.001")
    assert_hint(checks.exercise_5_4.check(sched.CosineAnnealingLR(opt(), T_max=10, eta_min=0.001)),
                "T_max")
    assert_hint(checks.exercise_5_4.check(sched.StepLR(opt(), step_size=10, gamma=0.1)), "CosineAnnealingLR")
    assert_hint(checks.exercise_5_4.check(sched.CosineAnnealingLR(opt(0.01), T_max=20, eta_min=0.001)),
                "lr=0.1")
    assert_hint(checks.exercise_5_4.check(None), "pass a scheduler")


# --- 5.5: a digits classifier --------------------------------------------------------------------

def trained(lib, epochs):
    from edutorch.datasets import load_digits

    lib.manual_seed(0)
    x, y = load_digits("train")
    x, y = lib.tensor(x.numpy()), lib.tensor(y.numpy())
    model = lib.nn.Sequential(lib.nn.Linear(64, 32), lib.nn.ReLU(), lib.nn.Linear(32, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(epochs):
        order = lib.randperm(len(x))
        for i in range(0, len(x), 64):
            idx = order[i:i + 64]
            right_step(model, opt, lib.nn.CrossEntropyLoss(), x[idx], y[idx])
    return model


@pytest.mark.parametrize("use_torch", [False, True], ids=["edutorch", "torch"])
def test_5_5(use_torch, request):
    lib = request.getfixturevalue("torch") if use_torch else et
    model = trained(lib, epochs=10)
    model.train()
    assert_ok(checks.exercise_5_5.check(model))
    assert model.training  # the check put the model back in train mode
    untrained = lib.nn.Sequential(lib.nn.Linear(64, 32), lib.nn.ReLU(), lib.nn.Linear(32, 10))
    assert_hint(checks.exercise_5_5.check(untrained), "never trained")
    assert_hint(checks.exercise_5_5.check(lib.nn.Linear(64, 3)), "10 outputs")
    assert_hint(checks.exercise_5_5.check(None), "pass your trained model")


def test_5_5_undertrained_model_gets_the_accuracy_hint():
    assert_hint(checks.exercise_5_5.check(trained(et, epochs=1)), "below 93 %")
