"""Typical answers to the exercises of lesson 06 · train() and eval()."""
from . import right, wrong

# --- 6.1 MyDropout ------------------------------------------------------------------------------


def _dropout(lib, mask=None, scale=None, eval_identity=True):
    """A MyDropout class; ``mask(x, p)`` the kept positions, ``scale(p)`` the kept values' factor."""
    mask = mask or (lambda x, p: (lib.rand(x.shape) >= p).float())
    scale = scale or (lambda p: 1 / (1 - p))

    class MyDropout(lib.nn.Module):
        def __init__(self, p=0.5):
            super().__init__()
            self.p = p

        def forward(self, x):
            if eval_identity and not self.training:
                return x
            return x * mask(x, self.p) * scale(self.p)

    return MyDropout


@right("6.1")
def a_uniform_mask_scaled_by_one_over_keep(lib):
    return (_dropout(lib),)


@right("6.1")
def a_bernoulli_mask(lib):
    return (_dropout(lib, mask=lambda x, p: lib.bernoulli(lib.full_like(x, 1 - p))),)


@wrong("6.1", "F.dropout", "forbids")
def calls_f_dropout(lib):
    class MyDropout(lib.nn.Module):
        def __init__(self, p=0.5):
            super().__init__()
            self.p = p

        def forward(self, x):
            return lib.nn.functional.dropout(x, self.p, self.training)

    return (MyDropout,)


@wrong("6.1", "nn.Dropout", "forbids")
def wraps_nn_dropout(lib):
    class MyDropout(lib.nn.Module):
        def __init__(self, p=0.5):
            super().__init__()
            self.inner = lib.nn.Dropout(p)

        def forward(self, x):
            return self.inner(x)

    return (MyDropout,)


@wrong("6.1", "probability to DROP")
def p_is_the_keep_probability(lib):
    return (_dropout(lib, mask=lambda x, p: (lib.rand(x.shape) < p).float(), scale=lambda p: 1 / p),)


@wrong("6.1", "kept values are unchanged", "1/(1-p)")
def forgets_to_scale(lib):
    return (_dropout(lib, scale=lambda p: 1.0),)


@wrong("6.1", "multiplied by (1-p)", "divide")
def multiplies_by_keep(lib):
    return (_dropout(lib, scale=lambda p: 1 - p),)


@wrong("6.1", "in eval mode", "unchanged")
def drops_in_eval_mode_too(lib):
    return (_dropout(lib, eval_identity=False),)


@wrong("6.1", "new random mask on every call")
def one_mask_for_ever(lib):
    masks = {}
    return (_dropout(lib, mask=lambda x, p: masks.setdefault(tuple(x.shape), (lib.rand(x.shape) >= p).float())),)


@wrong("6.1", "the class MyDropout itself")
def passes_an_instance(lib):
    return (_dropout(lib)(0.2),)


# --- 6.2 running statistics by hand -------------------------------------------------------------


def _batches(lib):
    import checks
    return [lib.tensor(b.numpy()) for b in checks.exercise_6_2_batches()]


def _running(lib, momentum=0.1, unbiased=True, start_var=1.0):
    mean, var = lib.zeros(3), lib.full((3,), start_var)
    for b in _batches(lib):
        mean = (1 - momentum) * mean + momentum * b.mean(dim=0)
        var = (1 - momentum) * var + momentum * b.var(dim=0, unbiased=unbiased)
    return mean, var


@right("6.2")
def the_moving_averages(lib):
    return _running(lib)


@right("6.2")
def lerp_towards_each_batch_with_sums(lib):
    mean, var = lib.zeros(3), lib.ones(3)
    for b in _batches(lib):
        n = b.shape[0]
        batch_var = ((b - b.mean(0)) ** 2).sum(0) / (n - 1)
        mean = mean + 0.1 * (b.mean(0) - mean)
        var = var + 0.1 * (batch_var - var)
    return mean, var


@wrong("6.2", "swapped")
def swaps_the_weights(lib):
    return _running(lib, momentum=0.9)


@wrong("6.2", "UNBIASED")
def biased_variance(lib):
    return _running(lib, unbiased=False)


@wrong("6.2", "plain average of the batch means")
def plain_average(lib):
    x1, x2 = _batches(lib)
    return (x1.mean(0) + x2.mean(0)) / 2, (x1.var(0) + x2.var(0)) / 2


@wrong("6.2", "not the last batch's mean")
def last_batch_only(lib):
    x2 = _batches(lib)[1]
    return x2.mean(0), x2.var(0)


@wrong("6.2", "running_var: start from ones")
def variance_starts_at_zero(lib):
    return _running(lib, start_var=0.0)


@wrong("6.2", "compute running_mean and running_var")
def left_blank(lib):
    return None, None


# --- 6.3 a BatchNorm without modes --------------------------------------------------------------


@right("6.3")
def no_running_statistics(lib):
    return (lib.nn.BatchNorm1d(5, track_running_stats=False),)


@right("6.3")
def no_running_statistics_and_no_affine(lib):
    return (lib.nn.BatchNorm1d(5, affine=False, track_running_stats=False, momentum=0.3),)


@wrong("6.3", "eval() uses the running statistics", "track_running_stats=False")
def plain_batchnorm(lib):
    return (lib.nn.BatchNorm1d(5),)


@wrong("6.3", "momentum=None")
def cumulative_average(lib):
    return (lib.nn.BatchNorm1d(5, momentum=None),)


@wrong("6.3", "momentum=0", "freezes")
def momentum_zero(lib):
    return (lib.nn.BatchNorm1d(5, momentum=0.0),)


@wrong("6.3", "BatchNorm2d", "nn.BatchNorm1d(5")
def batchnorm2d(lib):
    return (lib.nn.BatchNorm2d(5, track_running_stats=False),)


@wrong("6.3", "normalises 3 features", "5")
def wrong_feature_count(lib):
    return (lib.nn.BatchNorm1d(3, track_running_stats=False),)


@wrong("6.3", "LayerNorm", "BatchNorm1d")
def layer_norm_instead(lib):
    return (lib.nn.LayerNorm(5),)


# --- 6.4 evaluate(model, x, y) ------------------------------------------------------------------


def _evaluate(lib, eval_mode=True, no_grad=True, restore="remember", dim=1, mean=True):
    def evaluate(model, x, y):
        was_training = model.training
        if eval_mode:
            model.eval()
        with lib.no_grad() if no_grad else lib.enable_grad():
            hits = (model(x).argmax(dim=dim) == y).float()
            accuracy = (hits.mean() if mean else hits.sum()).item()
        if restore == "remember":
            model.train(was_training)
        elif restore == "train":
            model.train()
        return accuracy
    return evaluate


@right("6.4")
def remembers_the_mode(lib):
    return (_evaluate(lib),)


@right("6.4")
def inference_mode_and_a_finally(lib):
    def evaluate(model, x, y):
        was_training = model.training
        model.eval()
        try:
            with lib.inference_mode():
                predictions = model(x).argmax(dim=1)
            return float((predictions == y).sum()) / len(y)
        finally:
            model.train(was_training)
    return (evaluate,)


@wrong("6.4", "ran in train mode", "model.eval()")
def forgets_eval(lib):
    return (_evaluate(lib, eval_mode=False),)


@wrong("6.4", "autograd was on", "no_grad")
def records_a_graph(lib):
    return (_evaluate(lib, no_grad=False),)


@wrong("6.4", "stay in eval mode", "model.train(was_training)")
def always_back_to_train(lib):
    return (_evaluate(lib, restore="train"),)


@wrong("6.4", "must be again after", "model.train(was_training)")
def leaves_it_in_eval(lib):
    return (_evaluate(lib, restore=None),)


@wrong("6.4", "argmax(dim=1)", "samples")
def argmax_over_the_samples(lib):
    return (_evaluate(lib, dim=0),)


@wrong("6.4", "number of correct predictions", "divide by len(y)")
def counts_instead_of_fraction(lib):
    return (_evaluate(lib, mean=False),)


# --- 6.5 freeze_batchnorm(model) ----------------------------------------------------------------


def _batch_norm_base(lib):
    return lib.nn.modules.batchnorm._BatchNorm


@right("6.5")
def eval_every_batchnorm_of_modules(lib):
    def freeze_batchnorm(model):
        for module in model.modules():
            if isinstance(module, _batch_norm_base(lib)):
                module.eval()
        return model
    return (freeze_batchnorm,)


@right("6.5")
def apply_that_only_touches_batchnorm(lib):
    def freeze_batchnorm(model):
        model.train()
        model.apply(lambda m: m.eval() if isinstance(m, _batch_norm_base(lib)) else None)
        return model
    return (freeze_batchnorm,)


@wrong("6.5", "BatchNorm2d is still training", "_BatchNorm")
def isinstance_batchnorm1d_only(lib):
    def freeze_batchnorm(model):
        for module in model.modules():
            if isinstance(module, lib.nn.BatchNorm1d):
                module.eval()
        return model
    return (freeze_batchnorm,)


@wrong("6.5", "back to train mode", "children before their parent")
def apply_with_train_for_the_others(lib):
    def freeze_batchnorm(model):
        model.apply(lambda m: m.eval() if isinstance(m, _batch_norm_base(lib)) else m.train())
        return model
    return (freeze_batchnorm,)


@wrong("6.5", "model.children() lists only the direct children")
def children_instead_of_modules(lib):
    def freeze_batchnorm(model):
        for module in model.children():
            if isinstance(module, _batch_norm_base(lib)):
                module.eval()
        return model
    return (freeze_batchnorm,)


@wrong("6.5", "left train mode", "not model.eval()")
def the_whole_model_to_eval(lib):
    def freeze_batchnorm(model):
        return model.eval()
    return (freeze_batchnorm,)


@wrong("6.5", "keep requires_grad")
def also_freezes_the_parameters(lib):
    def freeze_batchnorm(model):
        for module in model.modules():
            if isinstance(module, _batch_norm_base(lib)):
                module.eval()
                module.requires_grad_(False)
        return model
    return (freeze_batchnorm,)


@wrong("6.5", "no BatchNorm was switched")
def only_freezes_the_parameters(lib):
    def freeze_batchnorm(model):
        for module in model.modules():
            if isinstance(module, _batch_norm_base(lib)):
                module.requires_grad_(False)
        return model
    return (freeze_batchnorm,)
