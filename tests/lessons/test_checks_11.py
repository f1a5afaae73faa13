"""Lesson 11's checks (freezing and fine-tuning): right answers pass, typical mistakes get their
hint, with edutorch objects and with real PyTorch objects."""
import copy

import pytest

import checks
from check_helpers import assert_hint, assert_ok
import edutorch as et


def notebook_function(source, lib):
    """The function ``source`` defines, as a notebook that imported ``lib`` as ``torch`` defines it."""
    namespace = {"torch": lib, "nn": lib.nn}
    exec(source, namespace)
    return next(v for k, v in namespace.items() if callable(v) and k not in ("torch", "nn"))


RIGHT = {"x @ w": True, "x @ frozen_w": False, "x @ frozen_w + b": True, "x @ w.detach()": False,
         "x @ w inside no_grad": False, "(x @ w).sum().item() * x": False}


# --- 11.1 predict requires_grad ----------------------------------------------------------------
def test_11_1_right_predictions_pass():
    assert_ok(checks.exercise_11_1.check(dict(RIGHT)))


@pytest.mark.parametrize("key, words", [
    ("x @ frozen_w", ["neither x nor frozen_w"]),
    ("x @ frozen_w + b", ["b requires grad"]),
    ("x @ w.detach()", ["detach"]),
    ("x @ w inside no_grad", ["no_grad"]),
    ("(x @ w).sum().item() * x", ["Python float"]),
])
def test_11_1_each_wrong_prediction_names_the_rule(key, words):
    wrong = dict(RIGHT, **{key: not RIGHT[key]})
    assert_hint(checks.exercise_11_1.check(wrong), *words)


def test_11_1_blank_and_missing_answers_get_hints():
    assert_hint(checks.exercise_11_1.check({}), "empty")
    assert_hint(checks.exercise_11_1.check(dict.fromkeys(RIGHT)), "True or False")
    partial = dict(RIGHT)
    del partial["x @ w"]
    assert_hint(checks.exercise_11_1.check(partial), "'x @ w'")


def test_11_1_the_truth_is_the_same_in_real_pytorch(lib):
    assert checks.lesson11._propagation_truth(lib) == RIGHT


# --- 11.2 freeze the body ----------------------------------------------------------------------
def test_11_2_requires_grad_underscore_passes(lib):
    freeze = notebook_function("def freeze(model):\n    model.body.requires_grad_(False)\n", lib)
    assert_ok(checks.exercise_11_2.check(freeze))


def test_11_2_loop_over_parameters_passes():
    def freeze(model):
        for p in model.body.parameters():
            p.requires_grad = False

    assert_ok(checks.exercise_11_2.check(freeze))


def test_11_2_mistakes_get_hints():
    def assign(model):
        model.body.requires_grad = False

    def nothing(model):
        pass

    def everything(model):
        model.requires_grad_(False)

    def linears_only(model):
        for m in model.body:
            if isinstance(m, et.nn.Linear):
                m.requires_grad_(False)

    assert_hint(checks.exercise_11_2.check(assign), "new Python attribute", "requires_grad_(False)")
    assert_hint(checks.exercise_11_2.check(nothing), "still requires grad")
    assert_hint(checks.exercise_11_2.check(everything), "head is frozen too")
    assert_hint(checks.exercise_11_2.check(linears_only), "1.weight", "BatchNorm")
    assert_hint(checks.exercise_11_2.check(None), "define the function")


# --- 11.3 the new head and its optimizer ----------------------------------------------------------
def finetuning(lib, order="right"):
    model = checks.lesson11._digit_net(lib, 10)
    with lib.no_grad():  # pretrained: BatchNorm statistics that are not the initial 0 and 1
        model(lib.randn(32, 64) * 2 + 1)
    if order == "late":
        optimizer = lib.optim.Adam(model.parameters(), lr=0.01)
    model.body.requires_grad_(False)
    model.head = lib.nn.Linear(32, 2)
    if order == "right":
        optimizer = lib.optim.Adam(model.head.parameters(), lr=0.01)
    elif order == "all":
        optimizer = lib.optim.Adam(model.parameters(), lr=0.01)
    elif order == "trainable":
        optimizer = lib.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.01)
    return model, optimizer


def test_11_3_right_answers_pass(lib):
    assert_ok(checks.exercise_11_3.check(*finetuning(lib)))
    assert_ok(checks.exercise_11_3.check(*finetuning(lib, "trainable")))


def test_11_3_mistakes_get_hints(lib):
    assert_hint(checks.exercise_11_3.check(*finetuning(lib, "late")), "OLD head")
    assert_hint(checks.exercise_11_3.check(*finetuning(lib, "all")), "frozen body")
    model, optimizer = finetuning(lib)
    model.requires_grad_(False)  # frozen after the head was replaced
    assert_hint(checks.exercise_11_3.check(model, optimizer), "new head is frozen")
    model, optimizer = finetuning(lib)
    model.body.requires_grad_(True)
    assert_hint(checks.exercise_11_3.check(model, optimizer), "still requires grad")
    model, _ = finetuning(lib)
    model.head = lib.nn.Linear(32, 10)
    assert_hint(checks.exercise_11_3.check(model, lib.optim.Adam(model.head.parameters())), "2 classes")
    model, _ = finetuning(lib)
    assert_hint(checks.exercise_11_3.check(model, lib.optim.Adam([model.head.weight])), "misses")
    assert_hint(checks.exercise_11_3.check(None, None), "fine-tuning model")
    assert_hint(checks.exercise_11_3.check(model, None), "torch.optim optimizer")


# --- 11.4 fine-tuning mode -------------------------------------------------------------------------
def test_11_4_train_then_body_eval_passes(lib):
    finetune_mode = notebook_function(
        "def finetune_mode(model):\n    model.train()\n    model.body.eval()\n", lib)
    assert_ok(checks.exercise_11_4.check(finetune_mode))


def test_11_4_mistakes_get_hints():
    def train_only(model):
        model.train()

    def eval_all(model):
        model.eval()

    def wrong_order(model):
        model.body.eval()
        model.train()

    assert_hint(checks.exercise_11_4.check(train_only), "requires_grad_(False) does not stop that")
    assert_hint(checks.exercise_11_4.check(wrong_order), "model.body.eval() after model.train()")
    assert_hint(checks.exercise_11_4.check(eval_all), "model.train() first")
    assert_hint(checks.exercise_11_4.check("train"), "define finetune_mode")


# --- 11.5 cached features ------------------------------------------------------------------------
def pretrained_and_images(lib):
    model = checks.lesson11._digit_net(lib, 10)
    with lib.no_grad():  # BatchNorm statistics that are not the initial 0 and 1
        model(lib.randn(32, 64) * 2 + 1)
    return model, lib.rand(12, 64)


def test_11_5_no_grad_passes_inference_tensors_do_not(lib):
    model, x = pretrained_and_images(lib)
    model.body.eval()
    with lib.no_grad():
        features = model.body(x)
    assert_ok(checks.exercise_11_5.check(model, x, features))
    with lib.inference_mode():
        features = model.body(x)
    # inference tensors cannot be saved for backward (both libraries): a head could not train on them
    assert_hint(checks.exercise_11_5.check(model, x, features), "inference tensors")


def test_11_5_mistakes_get_hints(lib):
    model, x = pretrained_and_images(lib)
    before = model.body[1].running_mean.clone()
    model.body.eval()
    assert_hint(checks.exercise_11_5.check(model, x, model.body(x)), "requires grad", "no_grad")
    with lib.no_grad():  # features normalised with these 12 images' own statistics
        batch_features = copy.deepcopy(model.body).train()(x)
    assert_hint(checks.exercise_11_5.check(model, x, batch_features), "model.body.eval()")
    with lib.no_grad():
        assert_hint(checks.exercise_11_5.check(model, x, model(x)), "shape", "model.body")
        assert_hint(checks.exercise_11_5.check(model, x, model.body(x) + 1), "not model.body(x)")
    assert_hint(checks.exercise_11_5.check(model, x, None), "must be a tensor")
    # the check's own forward passes leave the student's statistics alone
    assert lib.equal(model.body[1].running_mean, before)
