"""Typical answers to the exercises of lesson 05 · The training loop and optimizers."""
import math

from . import right, wrong

# --- 5.1 train_step(model, optimizer, loss_fn, x, y) -------------------------------------------


@right("5.1")
def the_five_lines_in_order(lib):
    def train_step(model, optimizer, loss_fn, x, y):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss
    return (train_step,)


@right("5.1")
def zero_grad_at_the_end_with_set_to_none(lib):
    def train_step(model, optimizer, loss_fn, x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        model.zero_grad(set_to_none=True)  # the next call starts from clean gradients too
        return loss
    return (train_step,)


@wrong("5.1", "zero_grad()", "accumulate")
def forgets_zero_grad(lib):
    def train_step(model, optimizer, loss_fn, x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss
    return (train_step,)


@wrong("5.1", "never move", "AFTER loss.backward()")
def step_before_backward(lib):
    def train_step(model, optimizer, loss_fn, x, y):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        optimizer.step()
        loss.backward()
        return loss
    return (train_step,)


@wrong("5.1", "never move", "not between backward and step")
def zero_grad_between_backward_and_step(lib):
    def train_step(model, optimizer, loss_fn, x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        return loss
    return (train_step,)


@wrong("5.1", "return the loss")
def returns_nothing(lib):
    def train_step(model, optimizer, loss_fn, x, y):
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
    return (train_step,)


@wrong("5.1", "once each per call")
def two_steps_per_call(lib):
    def train_step(model, optimizer, loss_fn, x, y):
        for _ in range(2):
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
        return loss
    return (train_step,)


@wrong("5.1", "pass your function")
def passes_the_result_of_a_call(lib):
    return (None,)


# --- 5.2 sgd_update(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov) ---------------


def _sgd(first_buffer=lambda d_p: d_p.clone(), buf_scale=1.0, no_momentum_buf=None,
         decay_late=False, nesterov_along_buf=False, dampen_first=False):
    """An sgd_update with one mistake switched on (all off: the right formulas)."""
    def sgd_update(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov):
        d_p = grad if decay_late else grad + weight_decay * p
        if momentum == 0:
            return p - lr * d_p, (no_momentum_buf(p) if no_momentum_buf else buf)
        if buf is None:
            buf = first_buffer(d_p) * ((1 - dampening) if dampen_first else 1)
        else:
            buf = momentum * buf / buf_scale + (1 - dampening) * d_p
        step = buf if (nesterov_along_buf or not nesterov) else d_p + momentum * buf
        if decay_late:  # the decay added to the step, after the buffer
            step = step + weight_decay * p
        return p - lr * step, buf * buf_scale
    return sgd_update


@right("5.2")
def the_formulas_of_the_text(lib):
    return (_sgd(),)


@right("5.2")
def torch_add_with_alpha_and_a_buffer_copy(lib):
    def sgd_update(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov):
        d_p = lib.add(grad, p, alpha=weight_decay)
        if momentum:
            buf = d_p.detach().clone() if buf is None else buf.mul(momentum).add(d_p, alpha=1 - dampening)
            d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
        return p.add(d_p, alpha=-lr), buf
    return (sgd_update,)


@wrong("5.2", "lr times the momentum buffer")
def returns_the_buffer_scaled_by_lr(lib):
    return (_sgd(buf_scale=0.1),)


@wrong("5.2", "without momentum return buf unchanged")
def returns_zeros_without_momentum(lib):
    return (_sgd(no_momentum_buf=lambda p: p * 0),)


@wrong("5.2", "weight decay comes first")
def adds_weight_decay_after_the_buffer(lib):
    return (_sgd(decay_late=True),)


@wrong("5.2", "Nesterov", "grad + momentum * buf")
def nesterov_steps_along_the_buffer(lib):
    return (_sgd(nesterov_along_buf=True),)


@wrong("5.2", "dampening", "not on the first step")
def dampens_the_first_step(lib):
    return (_sgd(dampen_first=True),)


@wrong("5.2", "FIRST step", "buf = grad")
def starts_the_buffer_at_zero(lib):
    return (_sgd(first_buffer=lambda d_p: d_p * 0),)


@wrong("5.2", "return the pair (new_p, new_buf)")
def returns_only_the_parameter(lib):
    return (lambda p, grad, buf, lr, *rest: p - lr * grad,)


# --- 5.3 AdamW with parameter groups ----------------------------------------------------------


def _groups(net, weight_decay=0.05, bias_decay=0.0):
    return [{"params": [p for p in net.parameters() if p.dim() > 1], "weight_decay": weight_decay},
            {"params": [p for p in net.parameters() if p.dim() == 1], "weight_decay": bias_decay}]


def _net(lib):
    import checks
    return checks.exercise_5_3_model(lib)


@right("5.3")
def two_groups_by_dimension(lib):
    net = _net(lib)
    return lib.optim.AdamW(_groups(net), lr=1e-3), net


@right("5.3")
def groups_by_name_default_decay_in_the_constructor(lib):
    net = _net(lib)
    named = dict(net.named_parameters())
    groups = [{"params": [p for n, p in named.items() if n.endswith("weight")]},
              {"params": [p for n, p in named.items() if n.endswith("bias")], "weight_decay": 0.0}]
    return lib.optim.AdamW(groups, lr=1e-3, weight_decay=0.05), net


@wrong("5.3", "use AdamW", "decoupled")
def adam_with_weight_decay(lib):
    net = _net(lib)
    return lib.optim.Adam(_groups(net), lr=1e-3), net


@wrong("5.3", "biases are decayed")
def one_group_decays_everything(lib):
    net = _net(lib)
    return lib.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0.05), net


@wrong("5.3", "weight_decay=0.05", "default is 0.01")
def default_weight_decay(lib):
    net = _net(lib)
    groups = _groups(net)
    del groups[0]["weight_decay"]
    return lib.optim.AdamW(groups, lr=1e-3), net


@wrong("5.3", "every parameter of net")
def forgets_the_biases(lib):
    net = _net(lib)
    return lib.optim.AdamW(_groups(net)[:1], lr=1e-3), net


@wrong("5.3", "learning rates", "lr=1e-3")
def default_learning_rate_of_sgd_habit(lib):
    net = _net(lib)
    return lib.optim.AdamW(_groups(net), lr=1e-2), net


@wrong("5.3", "this is SGD", "use AdamW")
def sgd_instead(lib):
    net = _net(lib)
    return lib.optim.SGD(_groups(net), lr=1e-3), net


# --- 5.4 a cosine schedule from 0.1 to 0.001 in 20 steps -----------------------------------------


def _optimizer(lib, lr=0.1):
    return lib.optim.SGD([lib.nn.Parameter(lib.zeros(3))], lr=lr)


@right("5.4")
def cosine_annealing(lib):
    return (lib.optim.lr_scheduler.CosineAnnealingLR(_optimizer(lib), T_max=20, eta_min=0.001),)


@right("5.4")
def lambda_lr_with_the_cosine_formula(lib):
    def factor(t):
        return (0.001 + 0.5 * (0.1 - 0.001) * (1 + math.cos(math.pi * t / 20))) / 0.1
    return (lib.optim.lr_scheduler.LambdaLR(_optimizer(lib), factor),)


@wrong("5.4", "not along half a cosine", "CosineAnnealingLR")
def exponential_from_0_1_to_0_001(lib):
    return (lib.optim.lr_scheduler.ExponentialLR(_optimizer(lib), gamma=0.01 ** (1 / 20)),)


@wrong("5.4", "not along half a cosine", "CosineAnnealingLR")
def linear_from_0_1_to_0_001(lib):
    return (lib.optim.lr_scheduler.LinearLR(_optimizer(lib), start_factor=1.0, end_factor=0.01,
                                            total_iters=20),)


@wrong("5.4", "eta_min", "0.001")
def wrong_eta_min(lib):
    return (lib.optim.lr_scheduler.CosineAnnealingLR(_optimizer(lib), T_max=20, eta_min=0.01),)


@wrong("5.4", "ends at 0", "eta_min=0.001")
def forgets_eta_min(lib):
    return (lib.optim.lr_scheduler.CosineAnnealingLR(_optimizer(lib), T_max=20),)


@wrong("5.4", "T_max=10", "20")
def half_the_steps(lib):
    return (lib.optim.lr_scheduler.CosineAnnealingLR(_optimizer(lib), T_max=10, eta_min=0.001),)


@wrong("5.4", "moves in steps")
def step_lr(lib):
    return (lib.optim.lr_scheduler.StepLR(_optimizer(lib), step_size=10, gamma=0.1),)


@wrong("5.4", "starts at 0.01", "lr=0.1")
def optimizer_built_with_another_lr(lib):
    return (lib.optim.lr_scheduler.CosineAnnealingLR(_optimizer(lib, 0.01), T_max=20, eta_min=0.001),)


# --- 5.5 a digits classifier with at least 93 % held-out accuracy --------------------------------


def _digits_net(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))


def _train(lib, model, optimizer, epochs, batches=None, step=True, zero_grad=True):
    from edutorch.datasets import load_digits

    x_train, y_train = load_digits("train")
    x_train, y_train = lib.tensor(x_train.numpy()), lib.tensor(y_train.numpy())
    loss_fn = lib.nn.CrossEntropyLoss()
    starts = list(range(0, len(x_train), 64))[:batches]
    for _ in range(epochs):
        order = lib.randperm(len(x_train))
        for i in starts:
            idx = order[i:i + 64]
            if zero_grad:
                optimizer.zero_grad()
            loss_fn(model(x_train[idx]), y_train[idx]).backward()
            if step:
                optimizer.step()
    return model


@right("5.5")
def mlp_with_sgd_and_momentum(lib):
    model = _digits_net(lib)
    return (_train(lib, model, lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), 10),)


@right("5.5")
def mlp_with_adam(lib):
    model = _digits_net(lib)
    return (_train(lib, model, lib.optim.Adam(model.parameters(), lr=1e-2), 5),)


@wrong("5.5", "never trained")
def untrained_model(lib):
    return (_digits_net(lib),)


@wrong("5.5", "optimizer.step()")
def loop_without_step(lib):
    model = _digits_net(lib)
    return (_train(lib, model, lib.optim.SGD(model.parameters(), lr=0.1), 2, step=False),)


@wrong("5.5", "below 93 %", "train longer")
def undertrained_three_batches(lib):
    model = _digits_net(lib)
    return (_train(lib, model, lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), 1, batches=3),)


@wrong("5.5", "10 outputs")
def nine_classes(lib):
    nn = lib.nn
    return (nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 9)),)


@wrong("5.5", "pass your trained model")
def passes_the_optimizer(lib):
    return (None,)
