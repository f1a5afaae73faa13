"""Typical answers to the exercises of lesson 11 · Freezing and fine-tuning."""
from . import right, wrong

# --- 11.1 predict requires_grad -----------------------------------------------------------------

TRUTH = {"x @ w": True, "x @ frozen_w": False, "x @ frozen_w + b": True, "x @ w.detach()": False,
         "x @ w inside no_grad": False, "(x @ w).sum().item() * x": False}


def _predictions(**changes):
    return ({**TRUTH, **{k.replace("_", " "): v for k, v in changes.items()}},)


@right("11.1", libs=("edutorch",))
def every_prediction_right(lib):
    return (dict(TRUTH),)


@right("11.1", libs=("edutorch",))
def written_in_another_order(lib):
    return (dict(reversed(list(TRUTH.items()))),)


@wrong("11.1", "'x @ frozen_w + b'", "b requires grad", libs=("edutorch",))
def a_frozen_product_freezes_the_sum(lib):
    return ({**TRUTH, "x @ frozen_w + b": False},)


@wrong("11.1", "'x @ w.detach()'", "detach", libs=("edutorch",))
def detach_keeps_the_flag(lib):
    return ({**TRUTH, "x @ w.detach()": True},)


@wrong("11.1", "'x @ w inside no_grad'", "no_grad", libs=("edutorch",))
def no_grad_ignored(lib):
    return ({**TRUTH, "x @ w inside no_grad": True},)


@wrong("11.1", ".item()", "Python float", libs=("edutorch",))
def item_keeps_the_graph(lib):
    return ({**TRUTH, "(x @ w).sum().item() * x": True},)


@wrong("11.1", "answer True or False", libs=("edutorch",))
def left_as_none(lib):
    return ({**TRUTH, "x @ w": None},)


@wrong("11.1", "keep the given keys", libs=("edutorch",))
def renamed_a_key(lib):
    predictions = dict(TRUTH)
    predictions["x@w"] = predictions.pop("x @ w")
    return (predictions,)


# --- 11.2 freeze the body -----------------------------------------------------------------------


@right("11.2")
def requires_grad_false_on_the_body(lib):
    return (lambda model: model.body.requires_grad_(False),)


@right("11.2")
def loop_over_the_body_parameters(lib):
    def freeze(model):
        for p in model.body.parameters():
            p.requires_grad = False
    return (freeze,)


@wrong("11.2", "Python attribute", "requires_grad_(False)")
def sets_an_attribute_on_the_module(lib):
    def freeze(model):
        model.body.requires_grad = False
    return (freeze,)


@wrong("11.2", "BatchNorm's weight and bias")
def only_the_linear_layers(lib):
    def freeze(model):
        for m in model.body.modules():
            if isinstance(m, lib.nn.Linear):
                m.requires_grad_(False)
    return (freeze,)


@wrong("11.2", "head is frozen too")
def freezes_the_whole_model(lib):
    return (lambda model: model.requires_grad_(False),)


@wrong("11.2", "still requires grad", "requires_grad_(False)")
def eval_instead_of_freezing(lib):
    return (lambda model: model.body.eval(),)


@wrong("11.2", "still requires grad")
def no_grad_around_nothing(lib):
    def freeze(model):
        with lib.no_grad():
            model.body(lib.zeros(2, 64))
    return (freeze,)


# --- 11.3 the fine-tuning model and its optimizer -----------------------------------------------


def _pretrained(lib):
    """A DigitNet whose BatchNorm has seen data, as load_pretrained()'s has."""
    from checks.lesson11 import _digit_net
    from edutorch.datasets import load_digits

    model = _digit_net(lib)
    with lib.no_grad():
        model(lib.tensor(load_digits("train")[0].numpy()[:256]))
    return model


def _finetuned(lib, pretrained=True, freeze_after=False):
    model = _pretrained(lib) if pretrained else __import__("checks").lesson11._digit_net(lib)
    if not freeze_after:
        model.body.requires_grad_(False)
    model.head = lib.nn.Linear(32, 2)
    if freeze_after:
        model.requires_grad_(False)
    return model


@right("11.3")
def freeze_replace_adam_on_the_head(lib):
    model = _finetuned(lib)
    return model, lib.optim.Adam(model.head.parameters(), lr=0.01)


@right("11.3")
def adam_on_the_parameters_that_require_grad(lib):
    model = _finetuned(lib)
    return model, lib.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.01)


@wrong("11.3", "not pretrained", "load_pretrained()")
def a_fresh_model(lib):
    model = _finetuned(lib, pretrained=False)
    return model, lib.optim.Adam(model.head.parameters(), lr=0.01)


@wrong("11.3", "this is SGD", "Adam")
def sgd_with_lr_5(lib):
    model = _finetuned(lib)
    return model, lib.optim.SGD(model.head.parameters(), lr=5)


@wrong("11.3", "learning rate is 0.001", "lr=0.01")
def adam_default_lr(lib):
    model = _finetuned(lib)
    return model, lib.optim.Adam(model.head.parameters())


@wrong("11.3", "OLD head", "after replacing the head")
def optimizer_before_the_new_head(lib):
    model = _pretrained(lib)
    model.body.requires_grad_(False)
    optimizer = lib.optim.Adam(model.head.parameters(), lr=0.01)
    model.head = lib.nn.Linear(32, 2)
    return model, optimizer


@wrong("11.3", "frozen body's parameters")
def optimizer_over_everything(lib):
    model = _finetuned(lib)
    return model, lib.optim.Adam(model.parameters(), lr=0.01)


@wrong("11.3", "new head is frozen")
def freezes_after_replacing(lib):
    model = _finetuned(lib, freeze_after=True)
    return model, lib.optim.Adam(model.head.parameters(), lr=0.01)


@wrong("11.3", "nn.Linear(32, 2)")
def keeps_ten_classes(lib):
    model = _pretrained(lib)
    model.body.requires_grad_(False)
    model.head = lib.nn.Linear(32, 10)
    return model, lib.optim.Adam(model.head.parameters(), lr=0.01)


# --- 11.4 a fine-tuning mode --------------------------------------------------------------------


@right("11.4")
def train_then_body_eval(lib):
    def finetune_mode(model):
        model.train()
        model.body.eval()
    return (finetune_mode,)


@right("11.4")
def every_module_by_hand(lib):
    def finetune_mode(model):
        body = set(model.body.modules())
        for m in model.modules():
            m.training = m not in body
    return (finetune_mode,)


@wrong("11.4", "call model.train() first")
def body_eval_only(lib):
    return (lambda model: model.body.eval(),)


@wrong("11.4", "model.body is in training mode", "after model.train()")
def eval_before_train(lib):
    def finetune_mode(model):
        model.body.eval()
        model.train()
    return (finetune_mode,)


@wrong("11.4", "BatchNorm is in eval mode, but", "whole body")
def only_the_batchnorm_to_eval(lib):
    def finetune_mode(model):
        model.train()
        for m in model.body.modules():
            if isinstance(m, lib.nn.BatchNorm1d):
                m.eval()
    return (finetune_mode,)


@wrong("11.4", "requires_grad_(False) does not stop that")
def freezing_instead_of_a_mode(lib):
    def finetune_mode(model):
        model.train()
        model.body.requires_grad_(False)
    return (finetune_mode,)


@wrong("11.4", "define finetune_mode(model)")
def passes_the_model(lib):
    return (None,)


# --- 11.5 cache the features --------------------------------------------------------------------


def _few(lib):
    from edutorch.datasets import load_digits

    return lib.tensor(load_digits("train")[0].numpy()[:40])


@right("11.5")
def eval_and_no_grad(lib):
    model, x = _pretrained(lib), _few(lib)
    model.body.eval()
    with lib.no_grad():
        features = model.body(x)
    return model, x, features


@right("11.5")
def eval_then_detach(lib):
    model, x = _pretrained(lib), _few(lib)
    features = model.body.eval()(x).detach()
    return model, x, features


@wrong("11.5", "training mode", "model.body.eval()")
def body_in_training_mode(lib):
    model, x = _pretrained(lib), _few(lib)
    with lib.no_grad():
        features = model.body(x)
    return model, x, features


@wrong("11.5", "20 rows", "all of x_few")
def half_the_images(lib):
    model, x = _pretrained(lib), _few(lib)
    model.body.eval()
    with lib.no_grad():
        features = model.body(x[:20])
    return model, x, features


@wrong("11.5", "not of the whole model")
def the_whole_model(lib):
    model, x = _pretrained(lib), _few(lib)
    model.eval()
    with lib.no_grad():
        features = model(x)
    return model, x, features


@wrong("11.5", "requires grad", "torch.no_grad()")
def records_the_graph(lib):
    model, x = _pretrained(lib), _few(lib)
    return model, x, model.body.eval()(x)


@wrong("11.5", "inference tensors", "torch.no_grad()")
def features_made_in_inference_mode(lib):
    model, x = _pretrained(lib), _few(lib)
    model.body.eval()
    with lib.inference_mode():
        features = model.body(x)
    return model, x, features
