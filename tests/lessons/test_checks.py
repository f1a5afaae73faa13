"""The exercise checks in the lessons/checks package: right answers pass, typical mistakes get a hint."""
import math

import numpy as np
import pytest

import checks
import edutorch as et
from edutorch import nn
from edutorch.nn.utils import prune


def assert_ok(result):
    assert result.ok, repr(result)
    assert repr(result).startswith("✓ correct")


def assert_hint(result, *words):
    assert not result.ok, repr(result)
    text = repr(result)
    assert text.startswith("✗ not yet")
    for word in words:
        assert word in text, text


def test_result_is_truthy_and_prints_one_line():
    assert bool(checks.Result(True, "fine")) and not checks.Result(False, "no")
    assert repr(checks.Result(False, "try again")) == "✗ not yet: try again"


# --- lesson 01 ----------------------------------------------------------------------


@pytest.mark.parametrize("value", [2.0, -1.5, 0.0])
def test_1_1_accepts_the_derivative_at_any_point(value):
    x = et.tensor(value, requires_grad=True)
    (x**3 - 3 * x).backward()
    assert_ok(checks.exercise_1_1.check(x))


def test_1_1_hints():
    assert_hint(checks.exercise_1_1.check(3.0), "pass the tensor")
    assert_hint(checks.exercise_1_1.check(et.tensor(2.0)), "requires_grad=True")
    assert_hint(checks.exercise_1_1.check(et.tensor(2.0, requires_grad=True)), "backward")
    x = et.tensor(2.0, requires_grad=True)
    (x**3 - 3 * x).backward()
    (x**3 - 3 * x).backward()
    assert_hint(checks.exercise_1_1.check(x), "ACCUMULATE")
    y = et.tensor(2.0, requires_grad=True)
    (y**2).backward()
    assert_hint(checks.exercise_1_1.check(y), "d/dx")


def test_1_2_path_and_hints():
    path = ["SumBackward0", "ExpBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad"]
    assert_ok(checks.exercise_1_2.check(path))
    assert_hint(checks.exercise_1_2.check(path[:-1]), "AccumulateGrad")
    assert_hint(checks.exercise_1_2.check(path[1:]), "start at loss.grad_fn")
    assert_hint(checks.exercise_1_2.check(["SumBackward0", "ExpBackward0", "MulBackward0"]), "step 2")
    assert_hint(checks.exercise_1_2.check("SumBackward0"), "list")


def test_graph_path_follows_first_edges():
    a = et.tensor([1.0], requires_grad=True)
    assert checks.graph_path((a * 2).sum()) == ["SumBackward0", "MulBackward0", "AccumulateGrad"]


def test_1_3_clean_and_accumulated_gradients():
    w = et.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (w**2).sum().backward()
    assert_ok(checks.exercise_1_3.check(w))
    (w**2).sum().backward()
    assert_hint(checks.exercise_1_3.check(w), "2× the gradient", "BEFORE")
    assert_hint(checks.exercise_1_3.check(et.tensor([1.0], requires_grad=True)), "None")


class GoodSigmoid(et.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + (-x).exp())
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)


class WrongBackward(GoodSigmoid):
    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y


class WrongForward(GoodSigmoid):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.tanh()


def test_1_4_sigmoid_function():
    assert_ok(checks.exercise_1_4.check(GoodSigmoid))
    assert_hint(checks.exercise_1_4.check(WrongBackward), "gradcheck failed")
    assert_hint(checks.exercise_1_4.check(WrongForward), "sigmoid")
    assert_hint(checks.exercise_1_4.check(GoodSigmoid.apply), "the class itself")


# --- lesson 02 ----------------------------------------------------------------------


class Affine(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(et.ones(n))
        self.bias = nn.Parameter(et.zeros(n))

    def forward(self, x):
        return x * self.weight + self.bias


class AffineSwapped(Affine):
    def __init__(self, n):
        nn.Module.__init__(self)
        self.bias = nn.Parameter(et.zeros(n))
        self.weight = nn.Parameter(et.ones(n))


class AffinePlainTensors(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = et.ones(n, requires_grad=True)
        self.bias = et.zeros(n, requires_grad=True)

    def forward(self, x):
        return x * self.weight + self.bias


class AffineNoBias(Affine):
    def forward(self, x):
        return x * self.weight


def test_2_1_affine():
    assert_ok(checks.exercise_2_1.check(Affine))
    assert_hint(checks.exercise_2_1.check(AffineSwapped), "['weight', 'bias']")
    assert_hint(checks.exercise_2_1.check(AffinePlainTensors), "nn.Parameter")
    assert_hint(checks.exercise_2_1.check(AffineNoBias), "forward")


def test_2_2_state_dict_keys():
    model = checks.exercise_2_2_model()
    keys = list(model.state_dict())
    assert keys[-4:] == ["3.gain", "3.step", "3.encoder.weight", "3.encoder.bias"]
    assert_ok(checks.exercise_2_2.check(keys))
    assert_hint(checks.exercise_2_2.check(keys + ["3.scratch"]), "non-persistent")
    assert_hint(checks.exercise_2_2.check(keys + ["2.weight"]), "ReLU")
    assert_hint(checks.exercise_2_2.check(keys[:-1]), "missing")
    reordered = keys[:-4] + ["3.encoder.weight", "3.encoder.bias", "3.gain", "3.step"]
    assert_hint(checks.exercise_2_2.check(reordered), "own parameters")


def make_mlp():
    return nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 2))


def test_2_3_save_and_restore(tmp_path):
    source = make_mlp()
    path = tmp_path / "m.pt"
    et.save(source.state_dict(), str(path))
    copy_ = make_mlp()
    copy_.load_state_dict(et.load(str(path)))
    assert_ok(checks.exercise_2_3.check(source, copy_))
    assert_hint(checks.exercise_2_3.check(source, source), "two different models")
    assert_hint(checks.exercise_2_3.check(source, make_mlp()), "load_state_dict")


class RunningMax(nn.Module):
    def __init__(self, persistent_last=False, track_in_eval=False):
        super().__init__()
        self.track_in_eval = track_in_eval
        self.register_buffer("max_seen", et.tensor(float("-inf")))
        self.register_buffer("last", et.zeros(0), persistent=persistent_last)

    def forward(self, x):
        if self.training or self.track_in_eval:
            self.max_seen = et.maximum(self.max_seen, x.max().detach())
        self.last = x.detach()
        return x


def test_2_4_running_max():
    assert_ok(checks.exercise_2_4.check(RunningMax))
    assert_hint(checks.exercise_2_4.check(lambda: RunningMax(persistent_last=True)), "persistent=False")
    assert_hint(checks.exercise_2_4.check(lambda: RunningMax(track_in_eval=True)), "eval mode")


# --- lesson 03 ----------------------------------------------------------------------

ORDER = ["0 forward_pre", "0 forward", "1 forward_pre", "1 forward",
         "1 backward_pre", "1 backward", "0 backward_pre", "0 backward"]


def test_3_1_hook_order():
    assert_ok(checks.exercise_3_1.check(ORDER))
    assert_hint(checks.exercise_3_1.check(ORDER[:4] + ORDER[6:] + ORDER[4:6]), "LAST layer")
    assert_hint(checks.exercise_3_1.check(ORDER[:4]), "expected 8 calls")


@pytest.mark.filterwarnings("ignore:Full backward hook is firing")  # torch: x needs no grad
def test_record_hook_order_matches_real_torch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    import importlib

    events = {}
    for lib in (et, torch):
        importlib.import_module(lib.__name__ + ".nn")
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh())
        events[lib.__name__] = checks.record_hook_order(model, lib.ones(2, 3))
    assert events["edutorch"] == events["torch"] == ORDER


def capture(net, inputs, detach=True, remove=True):
    activations, handles = {}, []
    for name, module in net.named_modules():
        if isinstance(module, nn.Linear):
            def hook(module, args, output, name=name):
                activations[name] = output.detach() if detach else output
            handles.append(module.register_forward_hook(hook))
    net(inputs)
    if remove:
        for handle in handles:
            handle.remove()
    return activations


def test_3_2_activations():
    net = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))
    x = et.randn(6, 4)
    assert_ok(checks.exercise_3_2.check(net, x, capture(net, x)))
    assert_hint(checks.exercise_3_2.check(net, x, {}), "empty")
    assert_hint(checks.exercise_3_2.check(net, x, capture(net, x, detach=False)), "detach")
    leaky = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))
    assert_hint(checks.exercise_3_2.check(leaky, x, capture(leaky, x, remove=False)), "handle.remove()")
    wrong = capture(net, x)
    wrong["0"], wrong["2"] = wrong["2"], wrong["0"]
    assert_hint(checks.exercise_3_2.check(net, x, wrong), "not the output")


def test_3_3_clip_grad_input():
    def clip(module, grad_input, grad_output):
        return tuple(None if g is None else g.clamp(-0.1, 0.1) for g in grad_input)

    def watch(module, grad_input, grad_output):
        return None

    def halve(module, grad_input, grad_output):
        return tuple(None if g is None else g * 0.5 for g in grad_input)

    assert_ok(checks.exercise_3_3.check(clip))
    assert_hint(checks.exercise_3_3.check(watch), "RETURN")
    assert_hint(checks.exercise_3_3.check(halve), "clamped")


def test_3_4_clamp_inputs():
    assert_ok(checks.exercise_3_4.check(lambda m, args: (args[0].clamp(-1.0, 1.0),)))
    assert_ok(checks.exercise_3_4.check(lambda m, args: args[0].clamp(-1.0, 1.0)))  # a single tensor works too
    assert_hint(checks.exercise_3_4.check(lambda m, args: None), "RETURN")
    assert_hint(checks.exercise_3_4.check(lambda m, args: (args[0].clamp(0.0, 1.0),)), "[-1, 1]")


# --- lesson 04 ----------------------------------------------------------------------


def test_4_1_structured():
    layer = nn.Linear(8, 6)
    prune.ln_structured(layer, "weight", amount=0.5, n=2, dim=0)
    assert_ok(checks.exercise_4_1.check(layer))
    assert_hint(checks.exercise_4_1.check(nn.Linear(8, 6)), "not pruned yet")
    unstructured = nn.Linear(8, 6)
    prune.l1_unstructured(unstructured, "weight", amount=0.5)
    assert_hint(checks.exercise_4_1.check(unstructured), "STRUCTURED")
    third = nn.Linear(8, 6)
    prune.ln_structured(third, "weight", amount=2, n=2, dim=0)
    assert_hint(checks.exercise_4_1.check(third), "half")


def test_4_1_wrong_rows():
    layer = nn.Linear(8, 6)
    norms = np.linalg.norm(layer.weight.detach().numpy(), axis=1)
    largest = np.argsort(norms)[3:]
    mask = et.ones(6, 8)
    mask[et.tensor(largest)] = 0.0
    prune.custom_from_mask(layer, "weight", mask=mask)
    assert_hint(checks.exercise_4_1.check(layer), "smallest")


def test_4_2_iterative_sparsity():
    assert_ok(checks.exercise_4_2.check(1 - 0.5 * 0.6 * 0.8))
    assert_hint(checks.exercise_4_2.check(1.1), "REMAINING")
    assert_hint(checks.exercise_4_2.check(0.5), "50 % remain")
    assert_hint(checks.exercise_4_2.check("a lot"), "number")


def three_layers():
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 4))


def test_4_3_global():
    net = three_layers()
    pairs = [(net[i], "weight") for i in (0, 2, 4)]
    prune.global_unstructured(pairs, pruning_method=prune.L1Unstructured, amount=0.7)
    assert_ok(checks.exercise_4_3.check(net))
    per_layer = three_layers()
    for i in (0, 2, 4):
        prune.l1_unstructured(per_layer[i], "weight", amount=0.7)
    assert_hint(checks.exercise_4_3.check(per_layer), "per-layer")
    random = three_layers()
    prune.global_unstructured([(random[i], "weight") for i in (0, 2, 4)],
                              pruning_method=prune.RandomUnstructured, amount=0.7)
    assert_hint(checks.exercise_4_3.check(random), "L1 magnitude")
    partial = three_layers()
    prune.l1_unstructured(partial[0], "weight", amount=0.7)
    assert_hint(checks.exercise_4_3.check(partial), "every Linear")


def test_4_4_remove():
    net, still = three_layers(), three_layers()  # copy.deepcopy refuses a pruned module, as PyTorch does
    for model in (net, still):
        prune.global_unstructured([(model[i], "weight") for i in (0, 2, 4)],
                                  pruning_method=prune.L1Unstructured, amount=0.7)
    assert_hint(checks.exercise_4_4.check(still), "prune.remove")
    for i in (0, 2, 4):
        prune.remove(net[i], "weight")
    assert_ok(checks.exercise_4_4.check(net))
    assert_hint(checks.exercise_4_4.check(three_layers()), "zeros are gone")


def test_4_2_expected_value_is_computed_not_hard_coded():
    layer = nn.Linear(40, 25)
    for method, amount in ((prune.l1_unstructured, 0.5), (prune.l1_unstructured, 0.4),
                           (prune.random_unstructured, 0.2)):
        method(layer, "weight", amount=amount)
    assert math.isclose(float((layer.weight_mask == 0).float().mean().item()), 0.76, abs_tol=1e-6)


# --- graded form: what nbgrader and a student's self-check see -----------------------


def test_graded_check_in_a_students_kernel_returns_the_result_and_never_raises(capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert_ok(checks.exercise_4_2(1 - 0.5 * 0.6 * 0.8))
    result = checks.exercise_4_2(1.1)  # Run All goes on: the cell shows the hint once
    assert_hint(result, "REMAINING")
    assert capsys.readouterr().out == ""


def test_graded_check_under_nbgrader_prints_the_hint_once_and_raises(capsys, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert_ok(checks.exercise_4_2(1 - 0.5 * 0.6 * 0.8))
    with pytest.raises(AssertionError) as raised:
        checks.exercise_4_2(1.1)
    assert isinstance(raised.value, checks.NotYet)
    printed = capsys.readouterr().out
    assert printed.startswith("✗ not yet:") and printed.count("REMAINING") == 1
    # Jupyter shows one line naming the exercise, not the hint again nor a frame of the checks package
    assert raised.value._render_traceback_() == [
        "NotYet: exercise 4.2 is not right yet (0 points): the hint is printed above"]


def test_a_blank_answer_written_as_ellipsis_asks_for_the_answer():
    assert_hint(checks.exercise_4_2.check(...), "write your answer in the cell above")


def test_a_check_given_a_blank_answer_gives_a_hint_not_a_crash():
    """What a student's untouched notebook passes: None, empty lists, classes with empty bodies."""
    class Blank(et.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            pass

        @staticmethod
        def backward(ctx, grad_output):
            pass

    class BlankModule(nn.Module):
        def __init__(self, *args):
            super().__init__()

    for check, args in [
        (checks.exercise_1_1, (None,)), (checks.exercise_1_2, ([],)), (checks.exercise_1_3, (None,)),
        (checks.exercise_1_4, (Blank,)), (checks.exercise_2_1, (BlankModule,)),
        (checks.exercise_2_2, ([],)), (checks.exercise_2_3, (make_mlp(), None)),
        (checks.exercise_2_4, (BlankModule,)), (checks.exercise_3_1, ([],)),
        (checks.exercise_3_2, (make_mlp(), et.randn(2, 5), {})),
        (checks.exercise_3_3, (lambda m, gi, go: None,)), (checks.exercise_3_4, (lambda m, a: None,)),
        (checks.exercise_4_1, (nn.Linear(4, 4),)), (checks.exercise_4_2, (None,)),
        (checks.exercise_4_3, (three_layers(),)), (checks.exercise_4_4, (three_layers(),)),
    ]:
        result = check.check(*args)
        assert not result.ok and repr(result).startswith("✗ not yet"), (check.__name__, result)
        assert "Traceback" not in repr(result)


# --- the corrected hints ------------------------------------------------------------------


def test_1_1_passing_x_grad_is_named_and_any_number_of_backward_calls_is_seen():
    x = et.tensor(2.0, requires_grad=True)
    (x**3 - 3 * x).backward()
    assert_hint(checks.exercise_1_1.check(x.grad), "not x.grad")
    for times in (2, 3):
        x = et.tensor(2.0, requires_grad=True)
        for _ in range(times):
            (x**3 - 3 * x).backward()
        assert_hint(checks.exercise_1_1.check(x), f"{times}× the derivative", "ACCUMULATE")


def test_1_3_triple_accumulation():
    w = et.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for _ in range(3):
        (w**2).sum().backward()
    assert_hint(checks.exercise_1_3.check(w), "3× the gradient")


def test_2_2_accepts_state_dict_keys_and_the_model_shows_every_member():
    model = checks.exercise_2_2_model()
    assert_ok(checks.exercise_2_2.check(model.state_dict().keys()))
    assert_hint(checks.exercise_2_2.check([]), "empty")
    # the exercise is solvable from what the lesson shows: Block's repr names gain and step
    assert "gain" in repr(model) and "step" in repr(model)


def test_3_3_a_hook_that_breaks_on_none_entries_gets_a_hint():
    def clip_no_none(module, grad_input, grad_output):
        return tuple(g.clamp(-0.1, 0.1) for g in grad_input)

    assert_hint(checks.exercise_3_3.check(clip_no_none), "None")


def test_4_3_per_layer_pruning_gets_the_per_layer_hint_not_a_rounding_message():
    """Per-layer 70 % can differ from round(0.7 * total) by one weight (the bug of the old check)."""
    net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    sizes = [64 * 128, 128 * 64, 64 * 10]
    assert sum(round(0.7 * n) for n in sizes) != round(0.7 * sum(sizes))  # the off-by-one case
    for i in (0, 2, 4):
        prune.l1_unstructured(net[i], "weight", amount=0.7)
    assert_hint(checks.exercise_4_3.check(net), "per-layer")


# --- the same checks on real PyTorch objects -----------------------------------------------


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: torch-object checks skipped")
    import torch.nn.utils.prune  # noqa: F401  (PyTorch does not import it with torch.nn)

    return torch


def test_lesson_01_checks_on_torch(torch):
    x = torch.tensor(2.0, requires_grad=True)
    (x**3 - 3 * x).backward()
    assert_ok(checks.exercise_1_1.check(x))
    (x**3 - 3 * x).backward()
    assert_hint(checks.exercise_1_1.check(x), "ACCUMULATE")
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w**2).sum().backward()
    assert_ok(checks.exercise_1_3.check(w))
    (w**2).sum().backward()
    assert_hint(checks.exercise_1_3.check(w), "2× the gradient")

    class Sigmoid(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = 1 / (1 + (-x).exp())
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            (y,) = ctx.saved_tensors
            return grad_output * y * (1 - y)

    class BadSigmoid(Sigmoid):
        @staticmethod
        def backward(ctx, grad_output):
            (y,) = ctx.saved_tensors
            return grad_output * y

    assert_ok(checks.exercise_1_4.check(Sigmoid))
    assert_hint(checks.exercise_1_4.check(BadSigmoid), "gradcheck failed")


def test_lesson_02_checks_on_torch(torch, tmp_path):
    tnn = torch.nn

    class TorchAffine(tnn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight = tnn.Parameter(torch.ones(n))
            self.bias = tnn.Parameter(torch.zeros(n))

        def forward(self, x):
            return x * self.weight + self.bias

    class TorchAffineNoBias(TorchAffine):
        def forward(self, x):
            return x * self.weight

    assert_ok(checks.exercise_2_1.check(TorchAffine))
    assert_hint(checks.exercise_2_1.check(TorchAffineNoBias), "forward")

    def mlp():
        return tnn.Sequential(tnn.Linear(5, 4), tnn.Tanh(), tnn.Linear(4, 2))

    source, copy_ = mlp(), mlp()
    torch.save(source.state_dict(), tmp_path / "m.pt")
    copy_.load_state_dict(torch.load(tmp_path / "m.pt"))
    assert_ok(checks.exercise_2_3.check(source, copy_))
    assert_hint(checks.exercise_2_3.check(source, mlp()), "load_state_dict")

    class TorchRunningMax(tnn.Module):
        def __init__(self, track_in_eval=False):
            super().__init__()
            self.track_in_eval = track_in_eval
            self.register_buffer("max_seen", torch.tensor(float("-inf")))
            self.register_buffer("last", torch.zeros(0), persistent=False)

        def forward(self, x):
            if self.training or self.track_in_eval:
                self.max_seen = torch.maximum(self.max_seen, x.max().detach())
            self.last = x.detach()
            return x

    assert_ok(checks.exercise_2_4.check(TorchRunningMax))
    assert_hint(checks.exercise_2_4.check(lambda: TorchRunningMax(track_in_eval=True)), "eval mode")


def test_lesson_03_checks_on_torch(torch):
    tnn = torch.nn
    net = tnn.Sequential(tnn.Linear(4, 5), tnn.ReLU(), tnn.Linear(5, 3))
    x = torch.randn(6, 4)
    activations, handles = {}, []
    for name, module in net.named_modules():
        if isinstance(module, tnn.Linear):
            handles.append(module.register_forward_hook(
                lambda m, a, out, name=name: activations.__setitem__(name, out.detach())))
    net(x)
    assert_hint(checks.exercise_3_2.check(net, x, activations), "handle.remove()")
    for handle in handles:
        handle.remove()
    assert_ok(checks.exercise_3_2.check(net, x, activations))
    activations["0"], activations["2"] = activations["2"], activations["0"]
    assert_hint(checks.exercise_3_2.check(net, x, activations), "not the output")


def test_lesson_04_checks_on_torch(torch):
    tnn, tprune = torch.nn, torch.nn.utils.prune

    def three():
        return tnn.Sequential(tnn.Linear(8, 16), tnn.ReLU(), tnn.Linear(16, 8), tnn.ReLU(), tnn.Linear(8, 4))

    layer = tnn.Linear(8, 6)
    tprune.ln_structured(layer, "weight", amount=0.5, n=2, dim=0)
    assert_ok(checks.exercise_4_1.check(layer))
    wrong = tnn.Linear(8, 6)
    tprune.ln_structured(wrong, "weight", amount=0.5, n=1, dim=1)
    assert not checks.exercise_4_1.check(wrong)

    net = three()
    tprune.global_unstructured([(net[i], "weight") for i in (0, 2, 4)],
                               pruning_method=tprune.L1Unstructured, amount=0.7)
    assert_ok(checks.exercise_4_3.check(net))
    per_layer = three()
    for i in (0, 2, 4):
        tprune.l1_unstructured(per_layer[i], "weight", amount=0.7)
    assert_hint(checks.exercise_4_3.check(per_layer), "per-layer")

    assert_hint(checks.exercise_4_4.check(net), "prune.remove")
    for i in (0, 2, 4):
        tprune.remove(net[i], "weight")
    assert_ok(checks.exercise_4_4.check(net))
    assert_hint(checks.exercise_4_4.check(three()), "zeros are gone")
