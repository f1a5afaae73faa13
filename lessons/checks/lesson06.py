"""Checks of lesson 06 · train() and eval() (lessons/06-train-and-eval.ipynb)."""

import math

import numpy as np

import edutorch

from ._common import (
    _code_names,
    _correct,
    _hint,
    _library,
    _library_of_function,
    _root_module,
    _seeded,
    _state_arrays,
    _values,
    exercise,
)


def _is_batch_norm(module, lib):
    return isinstance(module, lib.nn.modules.batchnorm._BatchNorm)


@exercise
def exercise_6_1(dropout_class):
    """``MyDropout(p)``: zero each value with probability ``p`` in training, scale the rest
    by ``1/(1-p)``; the identity in eval mode."""
    with _seeded(_library(dropout_class)):
        return _exercise_6_1(dropout_class)


def _exercise_6_1(dropout_class):
    if not isinstance(dropout_class, type):
        return _hint("pass the class MyDropout itself (not an instance, not None)")
    try:
        layer = dropout_class(0.2)
    except Exception as error:
        return _hint(f"MyDropout(0.2) raised {type(error).__name__}: {error}")
    lib = _library(layer)
    if not isinstance(layer, lib.nn.Module):
        return _hint("MyDropout must subclass nn.Module (it needs self.training)")
    borrowed = _uses_dropout(dropout_class, layer, lib)
    if borrowed:
        return _hint(f"MyDropout uses {borrowed}, which the exercise forbids: draw the mask yourself "
                     "(torch.rand(x.shape) >= p) and scale the kept values by 1/(1-p)")
    x = lib.rand(200, 100) + 0.5  # no zeros in the input: every zero of the output was dropped
    parent = lib.nn.Sequential(layer)
    parent.eval()  # through the parent: the layer must read self.training, not its own flag
    out = layer(x)
    if out is None:
        return _hint("forward returns None: return the result")
    if not np.array_equal(_values(out), _values(x)):
        return _hint("in eval mode (self.training is False) MyDropout must return x unchanged")
    parent.train()
    x_before = _values(x)
    out = _values(layer(x))
    if not np.array_equal(_values(x), x_before):
        return _hint("forward changed x in place: build a new tensor (x * mask / (1 - p))")
    dropped = out == 0
    fraction = float(dropped.mean())
    if fraction == 0:
        return _hint("in training mode nothing was zeroed: drop each value with probability p "
                     "(e.g. mask = torch.rand(x.shape) >= p)")
    if abs(fraction - 0.8) < 0.03:
        return _hint(f"{fraction:.0%} of the values were zeroed with p=0.2: p is the probability "
                     "to DROP a value, not to keep it")
    if abs(fraction - 0.2) > 0.03:
        return _hint(f"{fraction:.1%} of the values were zeroed with p=0.2; expected about 20 %")
    ratio = out[~dropped] / _values(x)[~dropped]
    if np.allclose(ratio, 1.0):
        return _hint("the kept values are unchanged: multiply them by 1/(1-p), so that the "
                     "expected output equals the input")
    if np.allclose(ratio, 0.8):
        return _hint("the kept values are multiplied by (1-p): divide by (1-p) instead")
    if not np.allclose(ratio, 1 / 0.8, rtol=1e-5):
        return _hint(f"the kept values are multiplied by {float(np.median(ratio)):.3f}; "
                     "expected 1/(1-p) = 1.25")
    if np.array_equal(out == 0, _values(layer(x)) == 0):
        return _hint("two calls zeroed the same values: draw a new random mask on every call")
    if np.any(_values(dropout_class(0.0).train()(x)) != _values(x)):
        return _hint("with p=0 nothing may be dropped")
    return _correct(f"{fraction:.1%} zeroed with p=0.2, the rest scaled by 1/(1-p) = 1.25; "
                    "identity in eval()")


_DROPOUT_NAMES = {"dropout", "Dropout", "dropout1d", "dropout2d", "dropout3d", "Dropout1d", "Dropout2d",
                  "Dropout3d", "alpha_dropout", "AlphaDropout", "feature_alpha_dropout"}


def _uses_dropout(dropout_class, layer, lib):
    """``"F.dropout"``/``"nn.Dropout"`` if the class calls a library dropout, else ``None``."""
    if any(isinstance(m, lib.nn.modules.dropout._DropoutNd) for m in layer.modules()):
        return "an nn.Dropout layer"
    for klass in dropout_class.__mro__:
        if _root_module(klass) in ("torch", "edutorch"):
            break  # the library's own classes: nn.Module and above
        for member in vars(klass).values():
            used = _DROPOUT_NAMES & set(_code_names(getattr(member, "__code__", None)))
            if used:
                name = sorted(used)[0]
                return f"nn.{name}" if name[0].isupper() else f"F.{name}"
    return None


def exercise_6_2_batches():
    """The two batches of exercise 6.2 (4 samples, 3 features each)."""
    x1 = edutorch.tensor([[1.0, 2.0, 0.0], [3.0, 6.0, 0.0], [5.0, 4.0, 1.0], [7.0, 0.0, 3.0]])
    x2 = edutorch.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 2.0], [4.0, 1.0, 2.0], [2.0, 5.0, 2.0]])
    return x1, x2


@exercise
def exercise_6_2(running_mean, running_var):
    """``BatchNorm1d(3)``'s buffers after the two training batches of ``exercise_6_2_batches``."""
    if running_mean is None or running_var is None:
        return _hint("compute running_mean and running_var (3 numbers each) from x1 and x2")
    bn = edutorch.nn.BatchNorm1d(3)
    x1, x2 = exercise_6_2_batches()
    bn(x1)
    bn(x2)
    mean, var = _values(running_mean).ravel(), _values(running_var).ravel()
    if mean.shape != (3,) or var.shape != (3,):
        return _hint(f"one number per feature (channel): shapes {mean.shape} and {var.shape}, "
                     "expected (3,) each")
    expected_mean, expected_var = _values(bn.running_mean), _values(bn.running_var)
    batches = [_values(b) for b in (x1, x2)]

    def after(m, unbiased=True):
        mean_, var_ = np.zeros(3), np.ones(3)
        for b in batches:
            mean_ = (1 - m) * mean_ + m * b.mean(0)
            var_ = (1 - m) * var_ + m * b.var(0, ddof=1 if unbiased else 0)
        return mean_, var_

    ok_mean = np.allclose(mean, expected_mean, atol=1e-5)
    ok_var = np.allclose(var, expected_var, atol=1e-5)
    if ok_mean and ok_var:
        return _correct(f"running_mean {np.round(expected_mean, 4).tolist()}, "
                        f"running_var {np.round(expected_var, 4).tolist()}")
    if np.allclose(mean, after(0.9)[0], atol=1e-5):
        return _hint("the weights are swapped: new = (1 - momentum) * old + momentum * batch, "
                     "with momentum = 0.1")
    if np.allclose(mean, (batches[0].mean(0) + batches[1].mean(0)) / 2, atol=1e-5):
        return _hint("that is the plain average of the batch means (momentum=None); the default "
                     "momentum=0.1 gives an exponential moving average starting from 0")
    if np.allclose(mean, batches[1].mean(0), atol=1e-5):
        return _hint("running_mean is not the last batch's mean: it moves by momentum = 0.1 "
                     "towards it, starting from 0")
    if not ok_mean:
        return _hint("running_mean: start from zeros; after each batch, "
                     "(1 - 0.1) * running_mean + 0.1 * batch.mean(dim=0)")
    if np.allclose(var, after(0.1, unbiased=False)[1], atol=1e-5):
        return _hint("running_mean is right. running_var uses the UNBIASED variance of the batch "
                     "(divide by n - 1), although the normalisation uses the biased one")
    return _hint("running_mean is right. running_var: start from ones; after each batch, "
                 "(1 - 0.1) * running_var + 0.1 * batch.var(dim=0) (unbiased)")


@exercise
def exercise_6_3(layer):
    """A BatchNorm over 5 features whose eval() output equals its train() output, always."""
    with _seeded(_library(layer)):
        return _exercise_6_3(layer)


def _exercise_6_3(layer):
    if layer is None:
        return _hint("layer is None: build an nn.BatchNorm1d over 5 features")
    lib = _library(layer)
    if not _is_batch_norm(layer, lib):
        return _hint(f"layer is a {type(layer).__name__}; build it with nn.BatchNorm1d(5, ...)")
    if not isinstance(layer, lib.nn.BatchNorm1d):
        return _hint(f"layer is a {type(layer).__name__}, made for images (N, C, H, W); the inputs "
                     "here are (N, 5) vectors: use nn.BatchNorm1d(5, ...)")
    if layer.num_features != 5:
        return _hint(f"the layer normalises {layer.num_features} features; the inputs have 5")
    first = lib.randn(8, 5) * 3 + 2
    second = lib.randn(8, 5) - 1
    with lib.no_grad():
        layer.train()
        layer(first)  # a training batch that would move running statistics
        train_out = _values(layer(second))
        layer.eval()
        eval_out = _values(layer(second))
    layer.train()
    if np.allclose(train_out, eval_out, atol=1e-5):
        if layer.running_mean is not None:
            return _hint("these outputs agree, but the layer keeps running statistics: find the "
                         "option that makes it always use the batch's own statistics")
        return _correct("track_running_stats=False: no running statistics, batch statistics "
                        "in both modes")
    if layer.momentum is None:
        return _hint("momentum=None still keeps running statistics (a cumulative average), "
                     "and eval() uses them")
    if layer.momentum == 0:
        return _hint("momentum=0 freezes the running statistics at 0 and 1, and eval() still "
                     "uses them")
    return _hint("eval() uses the running statistics; with track_running_stats=False there are "
                 "none, and BatchNorm uses the batch statistics in both modes")


class _Probe:
    """Records, on every call, whether the module was training and autograd was on."""

    def __init__(self, lib):
        self.calls = []
        probe = self

        class Probe(lib.nn.Module):
            def forward(self, x):
                probe.calls.append((self.training, lib.is_grad_enabled()))
                return x

        self.module = Probe()


def _evaluation_model(lib):
    probe = _Probe(lib)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.5),
                          probe.module, nn.Linear(16, 3))
    with lib.no_grad():  # some running statistics, as after training
        for _ in range(3):
            model(lib.randn(32, 6))
    probe.calls.clear()
    return model, probe


@exercise
def exercise_6_4(evaluate):
    """``evaluate(model, x, y)``: accuracy in eval mode without autograd; the mode is restored."""
    with _seeded(_library_of_function(evaluate)):
        return _exercise_6_4(evaluate)


def _exercise_6_4(evaluate):
    if not callable(evaluate):
        return _hint("pass your function evaluate itself")
    lib = _library_of_function(evaluate)
    model, probe = _evaluation_model(lib)
    x = lib.randn(50, 6)
    y = lib.randint(0, 3, (50,))
    model.eval()
    with lib.no_grad():
        expected = float((model(x).argmax(dim=1) == y).float().mean())
    probe.calls.clear()
    model.train()
    stats = _state_arrays(model)
    try:
        result = evaluate(model, x, y)
    except Exception as error:
        return _hint(f"evaluate(model, x, y) raised {type(error).__name__}: {error}. model(x) has "
                     "shape (50, 3), one row of scores per sample: the predictions are "
                     "model(x).argmax(dim=1) (dim 0 runs over the samples), compared with y")
    if result is None:
        return _hint("evaluate returns None: return the accuracy, a number between 0 and 1")
    try:
        accuracy = float(result)
    except (TypeError, ValueError):
        return _hint("return the accuracy as a number (e.g. .item())")
    if not probe.calls:
        return _hint("evaluate did not run the model")
    if any(training for training, _ in probe.calls):
        return _hint("the model ran in train mode: call model.eval() first (Dropout dropped "
                     "units and BatchNorm used the batch statistics)")
    if any(grad for _, grad in probe.calls):
        return _hint("autograd was on: eval() does not turn it off. Wrap the forward in "
                     "torch.no_grad() (or torch.inference_mode())")
    if not math.isclose(accuracy, expected, abs_tol=1e-6):
        if math.isclose(accuracy, expected * len(y), abs_tol=1e-3):
            return _hint("that is the number of correct predictions: divide by len(y)")
        return _hint(f"accuracy {accuracy:.4f}, expected {expected:.4f}: the fraction of rows "
                     "where model(x).argmax(dim=1) == y")
    after = _state_arrays(model)
    if any(not np.array_equal(stats[k], after[k]) for k in stats):
        return _hint("evaluate changed the model's parameters or buffers")
    if not all(m.training for m in model.modules()):
        return _hint("the model was in train mode before evaluate and must be again after: "
                     "remember model.training and restore it with model.train(was_training)")
    model.eval()
    evaluate(model, x, y)
    if any(m.training for m in model.modules()):
        return _hint("a model in eval mode before evaluate must stay in eval mode: restore the "
                     "mode it had (model.train(was_training)), do not always call model.train()")
    return _correct(f"accuracy {expected:.2f} in eval mode, without autograd; the mode "
                    "is restored")


def _finetuning_model(lib):
    nn = lib.nn
    features = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU())
    return nn.Sequential(features, nn.Dropout(0.5), nn.Linear(8, 4), nn.BatchNorm1d(4))


def _conv_model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(),
                         nn.Linear(8, 4), nn.BatchNorm1d(4))


def _record_modes(model, lib):
    """``{name: [mode, ...]}``: every train(mode)/eval() call each BatchNorm of ``model`` receives."""
    calls = {}
    for name, module in model.named_modules():
        if _is_batch_norm(module, lib):
            calls[name] = []
            original = module.train

            def train(mode=True, log=calls[name], original=original):
                log.append(bool(mode))
                return original(mode)

            module.train = train  # an instance attribute: the parent's train() calls it too
    return calls


@exercise
def exercise_6_5(freeze_batchnorm):
    """``freeze_batchnorm(model)``: every BatchNorm in eval mode, the rest in train mode."""
    with _seeded(_library_of_function(freeze_batchnorm)):
        return _exercise_6_5(freeze_batchnorm)


def _exercise_6_5(freeze_batchnorm):
    if not callable(freeze_batchnorm):
        return _hint("pass your function freeze_batchnorm itself")
    lib = _library_of_function(freeze_batchnorm)
    model = _finetuning_model(lib)
    model.train()
    modes = _record_modes(model, lib)
    freeze_batchnorm(model)
    norms = [(n, m) for n, m in model.named_modules() if _is_batch_norm(m, lib)]
    still_training = [n for n, m in norms if m.training]
    switched_back = [n for n in still_training if False in modes[n]]
    if switched_back:
        return _hint(f"BatchNorm {switched_back} went to eval mode and back to train mode: a "
                     "parent's train() switches all its children again, and model.apply visits "
                     "the children before their parent. Call eval() on the BatchNorm layers "
                     "after everything else, e.g. in a loop over model.modules()")
    if len(still_training) == len(norms):
        return _hint("no BatchNorm was switched to eval mode: call .eval() on each module m "
                     "of model.modules() that is a BatchNorm")
    if still_training:
        return _hint(f"BatchNorm {still_training} is still training: model.children() lists only "
                     "the direct children; model.modules() reaches the nested ones too")
    others = [n or "the model itself" for n, m in model.named_modules()
              if not _is_batch_norm(m, lib) and not m.training]
    if others:
        return _hint(f"{others} left train mode: switch only the BatchNorm layers (not "
                     "model.eval(), which switches every module)")
    if not all(p.requires_grad for p in model.parameters()):
        return _hint("freezing the statistics is a matter of modes: keep requires_grad, so "
                     "BatchNorm's weight and bias still train")
    conv = _conv_model(lib).train()
    freeze_batchnorm(conv)
    missed = [type(m).__name__ for m in conv.modules() if _is_batch_norm(m, lib) and m.training]
    if missed:
        return _hint(f"on a model with convolutions, {missed[0]} is still training: test isinstance "
                     "against nn.modules.batchnorm._BatchNorm, the base class of BatchNorm1d, "
                     "BatchNorm2d and BatchNorm3d")
    before = _state_arrays(model)
    x = lib.randn(16, 6)
    with lib.no_grad():
        first, second = _values(model(x)), _values(model(x))
    after = _state_arrays(model)
    moved = [k for k in before if not np.array_equal(before[k], after[k])]
    if moved:
        return _hint(f"a training forward still moved {moved}")
    if np.array_equal(first, second):
        return _hint("Dropout no longer drops: it must stay in train mode")
    return _correct(f"{len(norms)} BatchNorm layers frozen (their running statistics stay put); "
                    "Dropout still drops")
