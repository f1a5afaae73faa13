"""Lesson 08's checks (initialization, dtype and device): right answers pass, typical mistakes get
their hint, with edutorch objects and with real PyTorch objects."""
import copy
import math

import numpy as np
import pytest

import checks
from check_helpers import assert_hint, assert_ok
import edutorch as et
from edutorch.datasets import load_digits


def batch(lib, n=64):
    x, _ = load_digits("train")
    x = x[:n].numpy()
    return lib.tensor((x - x.mean()) / x.std())


# --- 8.1: Xavier uniform with tanh's gain -------------------------------------------------------


def tanh_layer(lib):
    lib.manual_seed(0)
    return lib.nn.Linear(256, 128)


def test_8_1_right_answer(lib):
    layer = tanh_layer(lib)
    lib.nn.init.xavier_uniform_(layer.weight, gain=lib.nn.init.calculate_gain("tanh"))
    lib.nn.init.zeros_(layer.bias)
    assert_ok(checks.exercise_8_1.check(layer))


def test_8_1_hints(lib):
    init = lib.nn.init
    assert_hint(checks.exercise_8_1.check(None), "nn.Linear")
    assert_hint(checks.exercise_8_1.check(tanh_layer(lib)), "default")
    no_gain = tanh_layer(lib)
    init.xavier_uniform_(no_gain.weight)
    assert_hint(checks.exercise_8_1.check(no_gain), "gain 1")
    kaiming = tanh_layer(lib)
    init.kaiming_normal_(kaiming.weight, nonlinearity="relu")  # a normal: tails beyond any bound
    init.zeros_(kaiming.bias)
    assert_hint(checks.exercise_8_1.check(kaiming), "beyond Xavier's bound")
    normal = tanh_layer(lib)
    init.xavier_normal_(normal.weight, gain=5 / 3)
    assert_hint(checks.exercise_8_1.check(normal), "xavier_uniform_")
    narrow = tanh_layer(lib)
    init.uniform_(narrow.weight, -0.2, 0.2)
    assert_hint(checks.exercise_8_1.check(narrow), "gain 1.6", "calculate_gain")
    bias_left = tanh_layer(lib)
    init.xavier_uniform_(bias_left.weight, gain=init.calculate_gain("tanh"))
    assert_hint(checks.exercise_8_1.check(bias_left), "bias to zero")


# --- 8.2: init_weights for Module.apply -----------------------------------------------------------


def make_init(lib, weight_init, zero_bias=True, only_linear=True):
    nn = lib.nn

    def init_weights(m):
        if only_linear and not isinstance(m, nn.Linear):
            return
        weight_init(m.weight)
        if zero_bias:
            nn.init.zeros_(m.bias)

    return init_weights


def torch_answer():
    """An init_weights written in a notebook that did `import torch; from torch import nn`."""
    namespace = {}
    exec("import torch\nfrom torch import nn\n"
         "def init_weights(m):\n"
         "    if isinstance(m, nn.Linear):\n"
         "        nn.init.kaiming_normal_(m.weight, nonlinearity='relu')\n"
         "        nn.init.zeros_(m.bias)\n", namespace)
    return namespace["init_weights"]


def test_8_2_right_answer():
    init = et.nn.init
    assert_ok(checks.exercise_8_2.check(make_init(et, lambda w: init.kaiming_normal_(w, nonlinearity="relu"))))


def test_8_2_a_torch_notebook_gets_a_torch_model():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: torch-object checks skipped")
    answer = torch_answer()
    assert checks.lesson08._library_of_function(answer) is torch
    assert checks.lesson08._library_of_function(make_init(et, et.nn.init.zeros_)) is et
    assert_ok(checks.exercise_8_2.check(answer))


def test_8_2_hints():
    init = et.nn.init
    assert_hint(checks.exercise_8_2.check(None), "pass your function")
    assert_hint(checks.exercise_8_2.check(lambda m: None), "default")
    assert_hint(checks.exercise_8_2.check(make_init(
        et, lambda w: init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"))), "fan_in")
    assert_hint(checks.exercise_8_2.check(make_init(
        et, lambda w: init.kaiming_normal_(w, nonlinearity="linear"))), "nonlinearity='relu'")
    assert_hint(checks.exercise_8_2.check(make_init(
        et, lambda w: init.kaiming_uniform_(w, nonlinearity="relu"))), "NORMAL")
    assert_hint(checks.exercise_8_2.check(make_init(et, init.xavier_normal_)), "std")
    assert_hint(checks.exercise_8_2.check(make_init(
        et, lambda w: init.kaiming_normal_(w, nonlinearity="relu"), zero_bias=False)), "biases")
    crashes = make_init(et, lambda w: init.kaiming_normal_(w, nonlinearity="relu"), only_linear=False)
    assert_hint(checks.exercise_8_2.check(crashes), "raised", "weight", "isinstance(m, nn.Linear)")


# --- 8.3: skip_init + orthogonal_ -----------------------------------------------------------------


def test_8_3_right_answer(lib):
    rotation = lib.nn.utils.skip_init(lib.nn.Linear, 64, 64)
    lib.nn.init.orthogonal_(rotation.weight)
    lib.nn.init.zeros_(rotation.bias)
    assert_ok(checks.exercise_8_3.check(rotation))
    plain = lib.nn.Linear(64, 64)  # without skip_init: the same values are just as right
    lib.nn.init.orthogonal_(plain.weight)
    lib.nn.init.zeros_(plain.bias)
    assert_ok(checks.exercise_8_3.check(plain))


def test_8_3_hints(lib):
    init = lib.nn.init
    assert_hint(checks.exercise_8_3.check(None), "skip_init")
    assert_hint(checks.exercise_8_3.check(lib.nn.Conv2d(1, 1, 1)), "nn.Linear")
    assert_hint(checks.exercise_8_3.check(lib.nn.Linear(32, 64)), "shape")
    default = lib.nn.Linear(64, 64)
    assert_hint(checks.exercise_8_3.check(default), "orthogonal_")
    scaled = lib.nn.Linear(64, 64)
    init.orthogonal_(scaled.weight, gain=2.0)
    init.zeros_(scaled.bias)
    assert_hint(checks.exercise_8_3.check(scaled), "gain 1")
    no_bias = lib.nn.Linear(64, 64)
    init.orthogonal_(no_bias.weight)
    assert_hint(checks.exercise_8_3.check(no_bias), "bias must be zero")
    garbage = lib.nn.Linear(64, 64)
    with lib.no_grad():
        garbage.weight[0, 0] = float("nan")
    assert_hint(checks.exercise_8_3.check(garbage), "uninitialised")


# --- 8.4: a float64 copy, the original untouched ---------------------------------------------------


def net32_of(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10))


def test_8_4_right_answers(lib):
    x = batch(lib)
    net32 = net32_of(lib)
    net64 = copy.deepcopy(net32).double()
    assert_ok(checks.exercise_8_4.check(net32, net64, net64(x.double()), x))
    other = copy.deepcopy(net32).to(lib.float64)
    assert_ok(checks.exercise_8_4.check(net32, other, other(x.to(lib.float64)), x))


def test_8_4_hints(lib):
    x = batch(lib)
    net32 = net32_of(lib)
    assert_hint(checks.exercise_8_4.check(net32, None, None, x), "deepcopy")
    in_place = net32_of(lib)
    same = in_place.double()
    assert_hint(checks.exercise_8_4.check(in_place, same, same(x.double()), x), "in place")
    net32 = net32_of(lib)
    still32 = copy.deepcopy(net32)
    assert_hint(checks.exercise_8_4.check(net32, still32, still32(x), x), ".double()")
    fresh = net32_of(lib)
    with lib.no_grad():
        fresh[0].weight.add_(1.0)
    fresh = fresh.double()
    assert_hint(checks.exercise_8_4.check(net32, fresh, fresh(x.double()), x), "other values")
    net64 = copy.deepcopy(net32).double()
    assert_hint(checks.exercise_8_4.check(net32, net64, None, x), "out64 is missing")
    assert_hint(checks.exercise_8_4.check(net32, net64, net64(x.double()).float(), x), "float32")
    assert_hint(checks.exercise_8_4.check(net32, net64, net64(x[:10].double()), x), "whole batch")
    deeper = lib.nn.Sequential(lib.nn.Linear(64, 10)).double()
    assert_hint(checks.exercise_8_4.check(net32, deeper, deeper(x.double()), x), "net32's parameters")


def test_8_4_an_original_converted_elsewhere_is_named(lib):
    x = batch(lib)
    net32 = net32_of(lib)
    net64 = copy.deepcopy(net32).double()
    net32.half()
    assert_hint(checks.exercise_8_4.check(net32, net64, net64(x.double()), x), "changed the original")


# --- 8.5: dtype= and device= at construction -------------------------------------------------------


def test_8_5_right_answer(lib):
    x = batch(lib)
    lib.manual_seed(0)
    head = lib.nn.Linear(64, 10, device="cpu", dtype=lib.float64)
    assert_ok(checks.exercise_8_5.check(head, head(x.to(device="cpu", dtype=lib.float64)), x, "cpu"))


def test_8_5_hints(lib):
    x = batch(lib)
    nn = lib.nn
    assert_hint(checks.exercise_8_5.check(None, None, x, "cpu"), "dtype=torch.float64")
    assert_hint(checks.exercise_8_5.check(nn.Linear(64, 5), None, x, "cpu"), "nn.Linear(64, 10)")
    float32 = nn.Linear(64, 10)
    assert_hint(checks.exercise_8_5.check(float32, float32(x), x, "cpu"), "dtype=torch.float64")
    head = nn.Linear(64, 10, dtype=lib.float64)
    assert_hint(checks.exercise_8_5.check(head, head(x.double()), x, "cuda"), "device=device")
    skipped = nn.utils.skip_init(nn.Linear, 64, 10, dtype=lib.float64)
    nn.init.normal_(skipped.weight)
    nn.init.normal_(skipped.bias)
    assert_hint(checks.exercise_8_5.check(skipped, skipped(x.double()), x, "cpu"), "default")
    assert_hint(checks.exercise_8_5.check(head, None, x, "cpu"), "out is missing")
    assert_hint(checks.exercise_8_5.check(head, head(x.double()).float(), x, "cpu"), "move the batch")
    assert_hint(checks.exercise_8_5.check(head, head(x[:3].double()), x, "cpu"), "whole batch")


def test_8_5_and_the_lessons_gpu_cell_on_the_cupy_stand_in(fake_cuda):
    """The lesson's CUDA branch and exercise 8.5 with device "cuda", on tests/fake_cupy.py (which
    fails wherever real CuPy would: implicit conversion to NumPy, NumPy arrays mixed in)."""
    assert et.cuda.is_available()
    x = batch(et)
    head = et.nn.Linear(64, 10, device="cuda", dtype=et.float64)
    out = head(x.to(device="cuda", dtype=et.float64))
    assert_ok(checks.exercise_8_5.check(head, out, x, "cuda"))
    assert_hint(checks.exercise_8_5.check(head, head(x.double().cuda()).cpu(), x, "cuda"), "move the batch")
    cpu_head = et.nn.Linear(64, 10, dtype=et.float64)
    assert_hint(checks.exercise_8_5.check(cpu_head, cpu_head(x.double()), x, "cuda"), "device=device")

    # the lesson's GPU cell: a Kaiming-initialised deep ReLU network moved to "cuda", one backward
    et.manual_seed(0)
    layers, size = [], 64
    for _ in range(3):
        layers += [et.nn.Linear(size, 32), et.nn.ReLU()]
        size = 32
    net = et.nn.Sequential(*layers, et.nn.Linear(size, 10))
    net.apply(lambda m: et.nn.init.kaiming_uniform_(m.weight, nonlinearity="relu")
              if isinstance(m, et.nn.Linear) else None)
    y = et.tensor(np.arange(64) % 10)
    cpu_loss = et.nn.functional.cross_entropy(net(x), y)
    net.to("cuda")
    loss = et.nn.functional.cross_entropy(net(x.to("cuda")), y.to("cuda"))
    loss.backward()
    assert str(loss.device) == "cuda:0" and net[0].weight.grad.device.type == "cuda"
    assert math.isclose(loss.item(), cpu_loss.item(), rel_tol=1e-6)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x.to("cuda") + x
    assert isinstance(net[0].weight.detach().cpu().numpy(), np.ndarray)


# --- blank answers, and the graded form ---------------------------------------------------------


def test_blank_answers_get_a_hint_not_a_crash():
    """What an untouched student notebook passes to each check."""
    def blank_init(m):
        pass

    x = batch(et)
    et.manual_seed(0)
    for check, args in [
        (checks.exercise_8_1, (et.nn.Linear(256, 128),)),
        (checks.exercise_8_2, (blank_init,)),
        (checks.exercise_8_3, (None,)),
        (checks.exercise_8_4, (net32_of(et), None, None, x)),
        (checks.exercise_8_5, (None, None, x, "cpu")),
    ]:
        result = check.check(*args)
        assert not result.ok and repr(result).startswith("✗ not yet"), (check.__name__, result)
        assert "Traceback" not in repr(result)


def test_graded_8_3_raises_not_yet_with_the_hint(capsys, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(checks.NotYet, match="0 points"):
        checks.exercise_8_3(None)
    out = capsys.readouterr().out
    assert out.startswith("✗ not yet:") and "skip_init" in out


def test_the_checks_do_not_change_the_answers(lib):
    x = batch(lib)
    net32 = net32_of(lib)
    net64 = copy.deepcopy(net32).double()
    before = [p.detach().numpy().copy() for p in net64.parameters()]
    checks.exercise_8_4.check(net32, net64, net64(x.double()), x)
    assert all(np.array_equal(p.detach().numpy(), b) for p, b in zip(net64.parameters(), before))
    assert all(p.grad is None for p in net64.parameters())


def test_8_2_check_problem_is_deep_enough_to_tell_inits_apart():
    """Default init shrinks the check network's activations by far more than the accepted 4x."""
    et.manual_seed(0)
    model = checks.lesson08._deep_relu_for_check(et)
    h = et.tensor(np.random.default_rng(3).normal(size=(128, 48)).astype(np.float32))
    stds = []
    with et.no_grad():
        for m in model:
            h = m(h)
            if isinstance(m, et.nn.ReLU):
                stds.append(h.std().item())
    assert stds[-1] / stds[0] < 0.25
    assert math.isclose(checks.exercise_8_2.check(make_init(
        et, lambda w: et.nn.init.kaiming_normal_(w, nonlinearity="relu"))).ok, True)
