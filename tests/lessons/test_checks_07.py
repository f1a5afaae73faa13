"""Lesson 07's checks (gradients up close): right answers pass, typical mistakes get their hint,
with edutorch objects and with real PyTorch objects."""
import copy

import numpy as np
import pytest

import checks
from check_helpers import assert_hint, assert_ok
from checks.catalogue.lesson07 import _deep_mlp as deep_mlp
import edutorch as et
from edutorch.datasets import load_digits


@pytest.fixture
def torch():
    return pytest.importorskip("torch", reason="real PyTorch not installed: torch-object checks skipped")


LIBRARIES = ["edutorch", "torch"]


@pytest.fixture(params=LIBRARIES)
def lib(request):
    if request.param == "torch":
        return pytest.importorskip("torch", reason="real PyTorch not installed: torch-object checks skipped")
    return et


def batch(lib, n=256):  # the lesson's batch xb, yb: the checks recompute its gradients
    x, y = load_digits("train")
    return lib.tensor(x[:n].numpy()), lib.tensor(y[:n].numpy())


def with_grads(lib, activation, depth=6):
    lib.manual_seed(0)
    net = deep_mlp(lib, activation, depth)
    x, y = batch(lib)
    lib.nn.functional.cross_entropy(net(x), y).backward()
    return net


# --- 7.1: gradient norm of every parameter ---------------------------------------------------


def test_7_1_right_answer(lib):
    net = with_grads(lib, lib.nn.Sigmoid)
    norms = {name: p.grad.norm().item() for name, p in net.named_parameters()}
    assert_ok(checks.exercise_7_1.check(net, norms))
    tensors = {name: p.grad.norm() for name, p in net.named_parameters()}  # 0-d tensors are fine too
    assert_ok(checks.exercise_7_1.check(net, tensors))


def test_7_1_hints(lib):
    fresh = deep_mlp(lib, lib.nn.Sigmoid)
    assert_hint(checks.exercise_7_1.check(fresh, {}), "backward")
    net = with_grads(lib, lib.nn.Sigmoid)
    assert_hint(checks.exercise_7_1.check(net, {}), "empty")
    assert_hint(checks.exercise_7_1.check(net, None), "empty")
    weights_only = {n: p.grad.norm().item() for n, p in net.named_parameters() if n.endswith("weight")}
    assert_hint(checks.exercise_7_1.check(net, weights_only), "every parameter")
    of_parameters = {n: p.norm().item() for n, p in net.named_parameters()}
    assert_hint(checks.exercise_7_1.check(net, of_parameters), "GRADIENT")
    squared = {n: (p.grad**2).sum().item() for n, p in net.named_parameters()}
    assert_hint(checks.exercise_7_1.check(net, squared), "squared")
    wrong = {n: 1.0 for n, _ in net.named_parameters()}
    assert_hint(checks.exercise_7_1.check(net, wrong), "is 1")
    assert_hint(checks.exercise_7_1.check(None, wrong), "pass the network")


# --- 7.2: a deep network whose gradient flows ------------------------------------------------


def test_7_2_relu_and_tanh_pass(lib):
    assert_ok(checks.exercise_7_2.check(with_grads(lib, lib.nn.ReLU)))
    assert_ok(checks.exercise_7_2.check(with_grads(lib, lib.nn.Tanh)))


def test_7_2_hints(lib):
    assert_hint(checks.exercise_7_2.check(None), "pass your network")
    assert_hint(checks.exercise_7_2.check(with_grads(lib, lib.nn.Sigmoid)), "Sigmoid", "1/4")
    assert_hint(checks.exercise_7_2.check(with_grads(lib, lib.nn.ReLU, depth=2)), "7 Linear")
    assert_hint(checks.exercise_7_2.check(deep_mlp(lib, lib.nn.ReLU)), "backward")


def test_7_2_a_vanishing_network_without_sigmoid_is_caught(lib):
    """A Tanh network whose weights are tiny vanishes too: the ratio, not the activation, decides."""
    lib.manual_seed(0)
    net = deep_mlp(lib, lib.nn.Tanh)
    with lib.no_grad():
        for m in net:
            if isinstance(m, lib.nn.Linear):
                m.weight.mul_(0.1)
    x, y = batch(lib)
    lib.nn.functional.cross_entropy(net(x), y).backward()
    assert_hint(checks.exercise_7_2.check(net), "still vanishes")


# --- 7.3: clip_grad_norm_ between backward and step ---------------------------------------------


def _nn_utils(model):
    """``torch.nn.utils`` of the library ``model`` comes from (edutorch or torch)."""
    import importlib

    return importlib.import_module(type(model).__module__.split(".")[0]).nn.utils


def clipped_step(model, optimizer, loss_fn, x, y, max_norm):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    total = _nn_utils(model).clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return total


def clip_after_step(model, optimizer, loss_fn, x, y, max_norm):
    optimizer.zero_grad()
    loss_fn(model(x), y).backward()
    optimizer.step()
    return _nn_utils(model).clip_grad_norm_(model.parameters(), max_norm)


def no_zero_grad(model, optimizer, loss_fn, x, y, max_norm):
    loss_fn(model(x), y).backward()
    total = _nn_utils(model).clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return total


def returns_norm_after(model, optimizer, loss_fn, x, y, max_norm):
    optimizer.zero_grad()
    loss_fn(model(x), y).backward()
    utils = _nn_utils(model)
    utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return utils.get_total_norm([p.grad for p in model.parameters()])


def returns_nothing(model, optimizer, loss_fn, x, y, max_norm):
    optimizer.zero_grad()
    loss_fn(model(x), y).backward()
    _nn_utils(model).clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()


def clips_by_value(model, optimizer, loss_fn, x, y, max_norm):
    optimizer.zero_grad()
    loss_fn(model(x), y).backward()
    _nn_utils(model).clip_grad_value_(model.parameters(), max_norm)
    optimizer.step()
    return 0.0


def test_7_3_right_answer(lib):
    model = lib.nn.Linear(2, 2)
    assert_ok(checks.exercise_7_3.check(clipped_step, model))


def test_7_3_the_library_of_the_model_is_used(torch):
    """Given a torch model, the check runs the step on torch tensors (a torch-only step passes)."""
    def torch_only_step(model, optimizer, loss_fn, x, y, max_norm):
        assert isinstance(x, torch.Tensor)
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        return total

    assert_ok(checks.exercise_7_3.check(torch_only_step, torch.nn.Linear(2, 2)))


def test_7_3_hints(lib):
    model = lib.nn.Linear(2, 2)
    assert_hint(checks.exercise_7_3.check(None, model), "pass your function")
    assert_hint(checks.exercise_7_3.check(lambda *args: None, model), "did not change")
    assert_hint(checks.exercise_7_3.check(clip_after_step, model), "BEFORE optimizer.step()")
    assert_hint(checks.exercise_7_3.check(no_zero_grad, model), "zero_grad")
    assert_hint(checks.exercise_7_3.check(clips_by_value, model), "clip_grad_value_", "NORM")
    assert_hint(checks.exercise_7_3.check(returns_norm_after, model), "AFTER clipping")
    assert_hint(checks.exercise_7_3.check(returns_nothing, model), "return the total norm")


def test_7_3_the_check_problem_needs_clipping():
    """The check's own problem has a total norm well above max_norm = 1 (else clipping is moot)."""
    model, x, y = checks.lesson07._clip_step_setup(et)
    _, total = checks.lesson07._reference_clip_step(et, model, x, y, 0.1, 1.0)
    assert total > 5.0


# --- 7.4: one SGD step through parameters_to_vector / vector_to_parameters ----------------------


def small_with_grads(lib):
    lib.manual_seed(1)
    nn = lib.nn
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    nn.functional.cross_entropy(net(lib.randn(5, 3)), lib.tensor([0, 1, 1, 0, 1])).backward()
    theta0 = nn.utils.parameters_to_vector(net.parameters()).detach().clone()
    g = nn.utils.parameters_to_vector(p.grad for p in net.parameters())
    return net, theta0, g


def test_7_4_right_answer(lib):
    net, theta0, g = small_with_grads(lib)
    lib.nn.utils.vector_to_parameters(theta0 - 0.1 * g, net.parameters())
    assert_ok(checks.exercise_7_4.check(net, theta0))


def test_7_4_an_optimizer_step_is_the_same_step(lib):
    net, theta0, _ = small_with_grads(lib)
    lib.optim.SGD(net.parameters(), lr=0.1).step()
    assert_ok(checks.exercise_7_4.check(net, theta0))


def test_7_4_hints(lib):
    net, theta0, g = small_with_grads(lib)
    assert_hint(checks.exercise_7_4.check(net, theta0), "did not change")
    assert_hint(checks.exercise_7_4.check(None, theta0), "pass the network")
    lib.nn.utils.vector_to_parameters(theta0 + 0.1 * g, net.parameters())
    assert_hint(checks.exercise_7_4.check(net, theta0), "UP the gradient")
    lib.nn.utils.vector_to_parameters(theta0 - 0.01 * g, net.parameters())
    assert_hint(checks.exercise_7_4.check(net, theta0), "theta0 − 0.1")
    assert_hint(checks.exercise_7_4.check(net, theta0[:5]), "5 numbers")
    fresh = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    assert_hint(checks.exercise_7_4.check(fresh, theta0), "no gradient")


def test_7_4_replaced_parameters_are_named(lib):
    net, theta0, g = small_with_grads(lib)
    net[0].weight = lib.nn.Parameter(net[0].weight.detach().clone(), requires_grad=False)
    net[0].weight.grad = lib.zeros(4, 3)
    assert_hint(checks.exercise_7_4.check(net, theta0), "trainable nn.Parameter")


# --- 7.5: a tensor hook that freezes row 0 ------------------------------------------------------


def test_7_5_right_answers(lib):
    layer = lib.nn.Linear(4, 3)
    mask = lib.ones(3, 4)
    mask[0] = 0.0
    layer.weight.register_hook(lambda grad: grad * mask)
    assert_ok(checks.exercise_7_5.check(layer))

    def zero_row(grad):
        grad = grad.clone()
        grad[0] = 0.0
        return grad

    other = lib.nn.Linear(5, 2)
    other.weight.register_hook(zero_row)
    assert_ok(checks.exercise_7_5.check(other))
    assert other.weight.grad is None, "the check leaves no gradient behind"


def test_7_5_hints(lib):
    assert_hint(checks.exercise_7_5.check(None), "nn.Linear")
    plain = lib.nn.Linear(4, 3)
    assert_hint(checks.exercise_7_5.check(plain), "register_hook")
    looks_only = lib.nn.Linear(4, 3)
    looks_only.weight.register_hook(lambda grad: None)
    assert_hint(checks.exercise_7_5.check(looks_only), "RETURN")
    all_zero = lib.nn.Linear(4, 3)
    all_zero.weight.register_hook(lambda grad: grad * 0)
    assert_hint(checks.exercise_7_5.check(all_zero), "whole gradient")
    column = lib.nn.Linear(4, 3)
    mask = lib.ones(3, 4)
    mask[:, 0] = 0.0
    column.weight.register_hook(lambda grad: grad * mask)
    assert_hint(checks.exercise_7_5.check(column), "row 0 must be 0")
    wrong_shape = lib.nn.Linear(4, 3)
    wrong_shape.weight.register_hook(lambda grad: grad.sum())
    assert not checks.exercise_7_5.check(wrong_shape).ok


# --- blank answers, and the graded form ---------------------------------------------------------


def test_blank_answers_get_a_hint_not_a_crash():
    """What an untouched student notebook passes to each check."""
    def blank_step(model, optimizer, loss_fn, x, y, max_norm):
        pass

    et.manual_seed(0)
    for check, args in [
        (checks.exercise_7_1, (deep_mlp(et, et.nn.Sigmoid), {})),
        (checks.exercise_7_2, (None,)),
        (checks.exercise_7_3, (blank_step, deep_mlp(et, et.nn.ReLU))),
        (checks.exercise_7_4, small_with_grads(et)[:2]),
        (checks.exercise_7_5, (et.nn.Linear(4, 3),)),
    ]:
        result = check.check(*args)
        assert not result.ok and repr(result).startswith("✗ not yet"), (check.__name__, result)
        assert "Traceback" not in repr(result)


def test_graded_7_5_raises_not_yet_with_the_hint(capsys, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(checks.NotYet, match="0 points"):
        checks.exercise_7_5(et.nn.Linear(4, 3))
    out = capsys.readouterr().out
    assert out.startswith("✗ not yet:") and "register_hook" in out


def test_the_checks_do_not_change_the_answer_networks(lib):
    net = with_grads(lib, lib.nn.ReLU)
    grads = [p.grad.clone() for p in net.parameters()]
    values = copy.deepcopy([p.detach().numpy() for p in net.parameters()])
    checks.exercise_7_2.check(net)
    checks.exercise_7_3.check(clipped_step, net)
    assert all(np.array_equal(p.grad.numpy(), g.numpy()) for p, g in zip(net.parameters(), grads))
    assert all(np.array_equal(p.detach().numpy(), v) for p, v in zip(net.parameters(), values))
