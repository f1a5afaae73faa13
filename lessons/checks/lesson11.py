"""Checks of lesson 11 · Freezing and fine-tuning (lessons/11-freezing-and-fine-tuning.ipynb)."""

import copy

import numpy as np

import edutorch

from ._common import (
    _correct,
    _hint,
    _is_tensor,
    _library,
    _library_of_function,
    _seeded,
    _state_arrays,
    _values,
    exercise,
)


def _digit_net(lib, classes=10):
    """Lesson 11's ``DigitNet`` rebuilt with ``lib``: ``body`` (with a BatchNorm) and ``head``."""
    nn = lib.nn

    class DigitNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU(),
                                      nn.Linear(64, 32), nn.ReLU())
            self.head = nn.Linear(32, classes)

        def forward(self, x):
            return self.head(self.body(x))

    with _seeded(lib):
        return DigitNet()


#: lesson 11's expressions for exercise 11.1, written with x (data), w and b (trainable)
#: and frozen_w (requires_grad=False), and why each answer is what it is
PROPAGATION = {
    "x @ w": "an op's output requires grad when at least one input does: w does",
    "x @ frozen_w": "neither x nor frozen_w requires grad, so nothing is recorded",
    "x @ frozen_w + b": "b requires grad, so the sum does (the product part has no graph, the "
                        "sum is recorded)",
    "x @ w.detach()": "w.detach() is a new tensor sharing w's values with requires_grad=False",
    "x @ w inside no_grad": "inside torch.no_grad() nothing is recorded, whatever the inputs",
    "(x @ w).sum().item() * x": ".item() returns a Python float, which carries no graph; x does "
                                "not require grad",
}


def _propagation_truth(lib):
    """``{expression: result.requires_grad}`` for PROPAGATION, computed with ``lib``."""
    x, frozen_w = lib.randn(4, 3), lib.randn(3, 2)
    w, b = lib.randn(3, 2, requires_grad=True), lib.zeros(2, requires_grad=True)
    with lib.no_grad():
        inside = x @ w
    results = {"x @ w": x @ w, "x @ frozen_w": x @ frozen_w, "x @ frozen_w + b": x @ frozen_w + b,
               "x @ w.detach()": x @ w.detach(), "x @ w inside no_grad": inside,
               "(x @ w).sum().item() * x": (x @ w).sum().item() * x}
    return {name: bool(t.requires_grad) for name, t in results.items()}


@exercise
def exercise_11_1(predictions):
    """``predictions[expression]`` is the ``requires_grad`` of each PROPAGATION expression."""
    if not isinstance(predictions, dict) or not predictions:
        return _hint("predictions is empty: fill in True or False for each expression")
    missing = [name for name in PROPAGATION if name not in predictions]
    if missing:
        return _hint(f"predictions has no entry for {missing[0]!r}: keep the given keys")
    blank = [name for name in PROPAGATION if not isinstance(predictions[name], bool)]
    if blank:
        return _hint(f"predictions[{blank[0]!r}] is {predictions[blank[0]]!r}: answer True or False")
    truth = _propagation_truth(edutorch)
    for name, reason in PROPAGATION.items():
        if predictions[name] != truth[name]:
            return _hint(f"{name!r} gives requires_grad={truth[name]}: {reason}")
    return _correct(f"all {len(truth)} predictions right: an op records a graph when grad mode is "
                    "on and at least one input requires grad")


@exercise
def exercise_11_2(freeze):
    """``freeze(model)`` stops every parameter of ``model.body`` from requiring grad, not the head's."""
    if not callable(freeze):
        return _hint("define the function freeze(model) and pass it: checks.exercise_11_2(freeze)")
    lib = _library_of_function(freeze)
    model = _digit_net(lib)
    freeze(model)
    body = [p.requires_grad for p in model.body.parameters()]
    head = [p.requires_grad for p in model.head.parameters()]
    if all(body) and model.body.__dict__.get("requires_grad") is False:
        return _hint("model.body.requires_grad = False only sets a new Python attribute on the "
                     "Module: its parameters still require grad. Call "
                     "model.body.requires_grad_(False), which sets it on every parameter")
    if all(body):
        return _hint("every parameter of model.body still requires grad: call "
                     "model.body.requires_grad_(False) (or p.requires_grad_(False) for each p)")
    if any(body):
        names = [n for n, p in model.body.named_parameters() if p.requires_grad]
        return _hint(f"body parameters {names} still require grad: model.body.parameters() "
                     "lists them all, BatchNorm's weight and bias included")
    if not all(head):
        return _hint("the head is frozen too: freeze model.body only, so the head can still learn")
    return _correct(f"{len(body)} body parameters frozen, the head's {len(head)} still trainable")


def _parameter_ids(optimizer):
    return [id(p) for group in optimizer.param_groups for p in group["params"]]


def _pretrained(body, lib):
    """True if a BatchNorm of ``body`` has seen data (its running statistics moved)."""
    norms = [m for m in body.modules() if isinstance(m, lib.nn.modules.batchnorm._BatchNorm)]
    return any(m.running_mean is not None and (np.any(_values(m.running_mean) != 0)
                                                or np.any(_values(m.running_var) != 1))
               for m in norms)


@exercise
def exercise_11_3(model, optimizer, classes=2):
    """``model.head`` is a new ``Linear(32, classes)``; the body is frozen; ``optimizer`` holds
    exactly the head's parameters."""
    if not hasattr(model, "head") or not hasattr(model, "body"):
        return _hint("pass the fine-tuning model (with .body and .head) and its optimizer")
    if not hasattr(optimizer, "param_groups"):
        return _hint("optimizer must be a torch.optim optimizer, e.g. "
                     "torch.optim.Adam(model.head.parameters(), lr=0.01)")
    lib = _library(model)
    head = model.head
    if not isinstance(head, lib.nn.Linear) or head.out_features != classes:
        return _hint(f"model.head must be a new nn.Linear(32, {classes}): the new task has "
                     f"{classes} classes")
    if not _pretrained(model.body, lib):
        return _hint("the body is not pretrained: its BatchNorm still has a fresh layer's running "
                     "statistics (mean 0, variance 1). Start from finetuned = load_pretrained()")
    if any(p.requires_grad for p in model.body.parameters()):
        return _hint("the body still requires grad: freeze it with "
                     "model.body.requires_grad_(False) before fine-tuning")
    if not all(p.requires_grad for p in head.parameters()):
        return _hint("the new head is frozen: a freshly made nn.Linear requires grad by default, "
                     "so do not freeze the model after replacing the head")
    held = set(_parameter_ids(optimizer))
    in_model = {id(p) for p in model.parameters()}
    head_ids = {id(p) for p in head.parameters()}
    if held - in_model:
        return _hint("the optimizer holds parameters that are not in the model any more: it was "
                     "made before `model.head = nn.Linear(...)`, so it would train the OLD head. "
                     "Create the optimizer after replacing the head")
    if held - head_ids:
        return _hint("the optimizer also holds the frozen body's parameters: give it only what "
                     "should learn, model.head.parameters() (or the parameters with "
                     "requires_grad=True)")
    if held != head_ids:
        return _hint("the optimizer misses some of the head's parameters (weight and bias)")
    decoupled = any(g.get("decoupled_weight_decay") for g in optimizer.param_groups)
    if not isinstance(optimizer, lib.optim.Adam) or decoupled:
        return _hint(f"this is {type(optimizer).__name__}: the exercise asks for "
                     "torch.optim.Adam(model.head.parameters(), lr=0.01)")
    lrs = sorted({g["lr"] for g in optimizer.param_groups})
    if lrs != [0.01]:
        return _hint(f"the learning rate is {lrs[0] if len(lrs) == 1 else lrs}: use lr=0.01")
    return _correct(f"a new Linear(32, {classes}) head, a frozen body, and an optimizer over "
                    f"the head's {len(head_ids)} tensors only")


@exercise
def exercise_11_4(finetune_mode):
    """``finetune_mode(model)``: the model trains (``model.training``), except its frozen body, whose
    BatchNorm statistics must not move."""
    if not callable(finetune_mode):
        return _hint("define finetune_mode(model) and pass the function itself")
    lib = _library_of_function(finetune_mode)
    model = _digit_net(lib, 2)
    model.body.requires_grad_(False)
    model.eval()  # whatever mode it had, the function must set both parts
    finetune_mode(model)
    if not model.training or not model.head.training:
        return _hint("the model (and its head) must be in training mode: call model.train() first")
    training = [name for name, m in model.body.named_modules() if m.training]
    norms_training = [name for name, m in model.body.named_modules()
                      if m.training and isinstance(m, lib.nn.modules.batchnorm._BatchNorm)]
    if training and not norms_training:
        names = [f"body.{n}" if n else "body" for n in training]
        return _hint(f"the body's BatchNorm is in eval mode, but {names} are still in training "
                     "mode: the exercise "
                     "puts the whole body in eval mode, model.body.eval() (a Dropout there would "
                     "still drop)")
    if training:
        return _hint("model.body is in training mode, so its BatchNorm would normalise with each "
                     "batch's statistics and update running_mean/running_var: requires_grad_(False) "
                     "does not stop that. Call model.body.eval() after model.train()")
    before = _state_arrays(model)
    with _seeded(lib):
        model(lib.randn(8, 64))
    moved = [k for k in before if not np.array_equal(before[k], _state_arrays(model)[k])]
    if moved:
        return _hint(f"a forward still moved {moved}")
    return _correct("model.training is True, the body is in eval mode: its BatchNorm uses (and "
                    "keeps) the pretrained running statistics")


@exercise
def exercise_11_5(model, x, features):
    """``features`` = ``model.body(x)`` with the body in eval mode, without a graph."""
    if not _is_tensor(features):
        return _hint("features must be a tensor: the body's output for x")
    lib = _library(model)
    shape = tuple(features.shape)
    if len(shape) == 2 and shape[1] == 32 and shape[0] != len(x):
        return _hint(f"features has {shape[0]} rows but x_few has {len(x)} images: run the body on "
                     "all of x_few, model.body(x_few)")
    if shape != (len(x), 32):
        return _hint(f"features has shape {shape}, expected ({len(x)}, 32): the output of "
                     "model.body (not of the whole model, whose output has one score per class)")
    if features.requires_grad:
        return _hint("features requires grad, so training the head on them would also record the "
                     "body: compute them inside torch.no_grad()")
    if getattr(features, "is_inference", lambda: False)():
        return _hint("features are inference tensors (made under torch.inference_mode()): PyTorch "
                     "refuses to save them for backward, so the head could not train on them. "
                     "Compute them inside torch.no_grad()")
    body = copy.deepcopy(model.body)  # the check's forwards leave the student's model as it is
    with lib.no_grad():
        expected = _values(body.eval()(x))
        batch_stats = _values(body.train()(x))
    got = _values(features)
    if np.allclose(got, expected, rtol=1e-5, atol=1e-6):
        return _correct(f"{len(x)} feature vectors of 32 numbers, computed once with the pretrained "
                        "statistics")
    if np.allclose(got, batch_stats, rtol=1e-5, atol=1e-6):
        return _hint("the body was in training mode: its BatchNorm normalised with these images' "
                     "own statistics. Call model.body.eval() before computing the features")
    return _hint("features are not model.body(x): run the pretrained body on x")
