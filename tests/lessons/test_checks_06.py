"""Lesson 06's checks (train() and eval()): right answers pass, with edutorch and with real
PyTorch objects; each typical mistake gets its hint."""
import numpy as np
import pytest

import checks
from check_helpers import assert_hint, assert_ok
import edutorch

LIBRARIES = ["edutorch", "torch"]


@pytest.fixture(params=LIBRARIES)
def lib(request):
    if request.param == "torch":
        return pytest.importorskip("torch", reason="real PyTorch not installed: torch answers skipped")
    return edutorch


def defined(source, lib, name):
    """``name`` from ``source`` run as a notebook that imported ``lib`` as ``torch``."""
    namespace = {"torch": lib, "nn": lib.nn}
    exec(source, namespace)
    return namespace[name]


# --- 6.1: MyDropout -----------------------------------------------------------------------

DROPOUT = """
class MyDropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p
        self.active = True

    def forward(self, x):
        if not {training}:
            return x
        keep = (torch.rand(x.shape) {compare} self.p).float()
        return x * keep {scale}
"""


def dropout(lib, training="self.training", compare=">=", scale="/ (1 - self.p)"):
    return defined(DROPOUT.format(training=training, compare=compare, scale=scale), lib, "MyDropout")


def test_6_1_right_answer(lib):
    assert_ok(checks.exercise_6_1.check(dropout(lib)))


def test_6_1_mistakes(lib):
    assert_hint(checks.exercise_6_1.check(None), "the class MyDropout itself")
    assert_hint(checks.exercise_6_1.check(dropout(lib, scale="")), "1/(1-p)")
    assert_hint(checks.exercise_6_1.check(dropout(lib, scale="* (1 - self.p)")), "divide by (1-p)")
    assert_hint(checks.exercise_6_1.check(dropout(lib, compare="<")), "DROP")
    assert_hint(checks.exercise_6_1.check(dropout(lib, training="True")), "eval mode")
    # its own flag instead of self.training: eval() of a parent does not reach it
    assert_hint(checks.exercise_6_1.check(dropout(lib, training="self.active")), "eval mode")
    assert_hint(checks.exercise_6_1.check(dropout(lib, compare="< 2 +")), "nothing was zeroed")


def test_6_1_rejects_the_real_dropout_which_the_text_forbids(lib):
    class Wrapped(lib.nn.Dropout):
        pass

    assert_hint(checks.exercise_6_1.check(Wrapped), "nn.Dropout", "forbids")


def test_6_1_leaves_the_users_random_stream_alone(lib):
    lib.manual_seed(3)
    expected = lib.rand(3).tolist()
    lib.manual_seed(3)
    checks.exercise_6_1.check(dropout(lib))
    assert lib.rand(3).tolist() == expected


# --- 6.2: running statistics by hand ---------------------------------------------------------

def running_stats(momentum, unbiased=True, start=(0.0, 1.0)):
    x1, x2 = (b.numpy().astype(np.float64) for b in checks.exercise_6_2_batches())
    mean, var = np.full(3, start[0]), np.full(3, start[1])
    for b in (x1, x2):
        mean = (1 - momentum) * mean + momentum * b.mean(0)
        var = (1 - momentum) * var + momentum * b.var(0, ddof=1 if unbiased else 0)
    return mean, var


def test_6_2_right_answers_in_any_form(lib):
    mean, var = running_stats(0.1)
    assert_ok(checks.exercise_6_2.check(mean, var))
    assert_ok(checks.exercise_6_2.check(mean.tolist(), var.tolist()))
    assert_ok(checks.exercise_6_2.check(lib.tensor(mean.tolist()), lib.tensor(var.tolist())))
    bn = lib.nn.BatchNorm1d(3)  # the layer itself also gets there
    for b in checks.exercise_6_2_batches():
        bn(lib.tensor(b.tolist()))
    assert_ok(checks.exercise_6_2.check(bn.running_mean, bn.running_var))


def test_6_2_mistakes():
    x1, x2 = (b.numpy().astype(np.float64) for b in checks.exercise_6_2_batches())
    right_mean, right_var = running_stats(0.1)
    assert_hint(checks.exercise_6_2.check(None, None), "compute")
    assert_hint(checks.exercise_6_2.check(*running_stats(0.9)), "swapped")
    assert_hint(checks.exercise_6_2.check((x1.mean(0) + x2.mean(0)) / 2, right_var), "momentum=None")
    assert_hint(checks.exercise_6_2.check(x2.mean(0), right_var), "last batch")
    assert_hint(checks.exercise_6_2.check(right_mean, running_stats(0.1, unbiased=False)[1]), "UNBIASED")
    assert_hint(checks.exercise_6_2.check(right_mean, running_stats(0.1, start=(0.0, 0.0))[1]),
                "start from ones")
    assert_hint(checks.exercise_6_2.check(right_mean[:2], right_var), "(3,)")


# --- 6.3: a BatchNorm without modes --------------------------------------------------------------

def test_6_3_right_and_wrong(lib):
    nn = lib.nn
    assert_ok(checks.exercise_6_3.check(nn.BatchNorm1d(5, track_running_stats=False)))
    assert_ok(checks.exercise_6_3.check(nn.BatchNorm1d(5, affine=False, track_running_stats=False)))
    assert_hint(checks.exercise_6_3.check(None), "None")
    assert_hint(checks.exercise_6_3.check(nn.BatchNorm1d(5)), "track_running_stats=False")
    assert_hint(checks.exercise_6_3.check(nn.BatchNorm1d(5, momentum=None)), "momentum=None")
    assert_hint(checks.exercise_6_3.check(nn.BatchNorm1d(5, momentum=0.0)), "momentum=0")
    assert_hint(checks.exercise_6_3.check(nn.BatchNorm1d(4, track_running_stats=False)), "5")
    assert_hint(checks.exercise_6_3.check(nn.Linear(5, 5)), "BatchNorm1d")


# --- 6.4: evaluate() ------------------------------------------------------------------------------

EVALUATE = """
def evaluate(model, x, y):
    was_training = model.training
    model.eval()
    with {context}:
        accuracy = (model(x).argmax(dim=1) == y).float().{reduce}
    {restore}
    return accuracy
"""


def evaluate(lib, context="torch.no_grad()", reduce="mean().item()", restore="model.train(was_training)"):
    return defined(EVALUATE.format(context=context, reduce=reduce, restore=restore), lib, "evaluate")


def test_6_4_right_answers(lib):
    assert_ok(checks.exercise_6_4.check(evaluate(lib)))
    assert_ok(checks.exercise_6_4.check(evaluate(lib, context="torch.inference_mode()")))


def test_6_4_mistakes(lib):
    assert_hint(checks.exercise_6_4.check(None), "evaluate itself")
    assert_hint(checks.exercise_6_4.check(evaluate(lib, context="torch.enable_grad()")), "no_grad")
    assert_hint(checks.exercise_6_4.check(evaluate(lib, reduce="sum().item()")), "len(y)")
    assert_hint(checks.exercise_6_4.check(evaluate(lib, restore="pass")), "train mode before")
    assert_hint(checks.exercise_6_4.check(evaluate(lib, restore="model.train()")), "stay in eval mode")
    in_train_mode = defined("""
def evaluate(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(dim=1) == y).float().mean().item()
""", lib, "evaluate")
    assert_hint(checks.exercise_6_4.check(in_train_mode), "model.eval()")
    assert_hint(checks.exercise_6_4.check(defined("def evaluate(model, x, y):\n    pass", lib, "evaluate")),
                "returns None")


# --- 6.5: freeze_batchnorm() ---------------------------------------------------------------------

FREEZE = """
def freeze_batchnorm(model):
    for module in model.{walk}():
        if isinstance(module, {kind}):
            {action}
    return model
"""


def freeze(lib, walk="modules", kind="nn.modules.batchnorm._BatchNorm", action="module.eval()"):
    return defined(FREEZE.format(walk=walk, kind=kind, action=action), lib, "freeze_batchnorm")


def test_6_5_right_answers(lib):
    assert_ok(checks.exercise_6_5.check(freeze(lib)))
    assert_ok(checks.exercise_6_5.check(freeze(lib, kind="(nn.BatchNorm1d, nn.BatchNorm2d)")))
    assert_ok(checks.exercise_6_5.check(freeze(lib, action="module.training = False")))


def test_6_5_mistakes(lib):
    assert_hint(checks.exercise_6_5.check(None), "freeze_batchnorm itself")
    assert_hint(checks.exercise_6_5.check(freeze(lib, walk="children")), "model.modules()")
    assert_hint(checks.exercise_6_5.check(freeze(lib, kind="nn.Dropout")), "no BatchNorm")
    assert_hint(checks.exercise_6_5.check(defined(
        "def freeze_batchnorm(model):\n    return model.eval()", lib, "freeze_batchnorm")), "left train mode")
    assert_hint(checks.exercise_6_5.check(freeze(lib, action="module.eval().requires_grad_(False)")),
                "requires_grad")
