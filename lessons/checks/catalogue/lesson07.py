"""Typical answers to the exercises of lesson 07 · Gradients up close."""
from . import right, wrong


def _batch(lib):
    from edutorch.datasets import load_digits

    x, y = load_digits("train")
    return lib.tensor(x.numpy()[:256]), lib.tensor(y.numpy()[:256])


def _deep_mlp(lib, activation, depth=6, width=32):
    """The lesson's deep_mlp: ``depth`` hidden layers Linear(., width) + activation, then Linear(., 10)."""
    nn = lib.nn
    layers, size = [], 64
    for _ in range(depth):
        layers += [nn.Linear(size, width), activation()]
        size = width
    return nn.Sequential(*layers, nn.Linear(size, 10))


def _with_grads(lib, net, backwards=1, loss=None):
    xb, yb = _batch(lib)
    loss = loss or lib.nn.CrossEntropyLoss()
    for _ in range(backwards):
        loss(net(xb), yb).backward()
    return net


# --- 7.1 every layer's gradient norm ------------------------------------------------------------


def _sigmoid_net(lib, **kwargs):
    lib.manual_seed(0)
    return _with_grads(lib, _deep_mlp(lib, lib.nn.Sigmoid), **kwargs)


@right("7.1")
def norm_item_of_every_named_parameter(lib):
    net = _sigmoid_net(lib)
    return net, {name: p.grad.norm().item() for name, p in net.named_parameters()}


@right("7.1")
def square_root_of_the_sum_of_squares(lib):
    net = _sigmoid_net(lib)
    return net, {name: float((p.grad ** 2).sum().sqrt()) for name, p in net.named_parameters()}


@wrong("7.1", "ACCUMULATE", "backward ran 2 times")
def backward_run_twice(lib):
    net = _sigmoid_net(lib, backwards=2)
    return net, {name: p.grad.norm().item() for name, p in net.named_parameters()}


@wrong("7.1", "not those of loss_fn(net(xb), yb)")
def mse_instead_of_loss_fn(lib):
    def mse_on_one_hot(out, y):
        return lib.nn.functional.mse_loss(out, lib.nn.functional.one_hot(y, 10).float())

    net = _sigmoid_net(lib, loss=mse_on_one_hot)
    return net, {name: p.grad.norm().item() for name, p in net.named_parameters()}


@wrong("7.1", "every parameter")
def weights_only(lib):
    net = _sigmoid_net(lib)
    return net, {name: p.grad.norm().item() for name, p in net.named_parameters() if "weight" in name}


@wrong("7.1", "norm of the parameter itself", "GRADIENT")
def norm_of_the_weights(lib):
    net = _sigmoid_net(lib)
    return net, {name: p.norm().item() for name, p in net.named_parameters()}


@wrong("7.1", "squared norm")
def squared_norm(lib):
    net = _sigmoid_net(lib)
    return net, {name: float((p.grad ** 2).sum()) for name, p in net.named_parameters()}


@wrong("7.1", "no gradients yet", "loss.backward()")
def forgets_backward(lib):
    lib.manual_seed(0)
    return _deep_mlp(lib, lib.nn.Sigmoid), {}


# --- 7.2 make the gradient flow -----------------------------------------------------------------


@right("7.2")
def relu_everywhere(lib):
    lib.manual_seed(0)
    return (_with_grads(lib, _deep_mlp(lib, lib.nn.ReLU)),)


@right("7.2")
def tanh_everywhere(lib):
    lib.manual_seed(0)
    return (_with_grads(lib, _deep_mlp(lib, lib.nn.Tanh)),)


@right("7.2")
def sigmoid_with_larger_weights_meets_the_criterion(lib):
    """The text's criterion, ratio > 1/100, is what counts: a Sigmoid network may meet it."""
    lib.manual_seed(0)
    net = _deep_mlp(lib, lib.nn.Sigmoid)
    with lib.no_grad():
        for module in net:
            if isinstance(module, lib.nn.Linear):
                module.weight.mul_(12)
    return (_with_grads(lib, net),)


@wrong("7.2", "still uses Sigmoid", "ReLU")
def still_sigmoid(lib):
    lib.manual_seed(0)
    return (_with_grads(lib, _deep_mlp(lib, lib.nn.Sigmoid)),)


@wrong("7.2", "7 Linear layers", "DEEP")
def shallower_network(lib):
    lib.manual_seed(0)
    return (_with_grads(lib, _deep_mlp(lib, lib.nn.ReLU, depth=2)),)


@wrong("7.2", "width 32")
def wider_network(lib):
    lib.manual_seed(0)
    return (_with_grads(lib, _deep_mlp(lib, lib.nn.ReLU, width=128)),)


@wrong("7.2", "no gradient yet", "loss.backward()")
def forgets_backward_72(lib):
    lib.manual_seed(0)
    return (_deep_mlp(lib, lib.nn.ReLU),)


@wrong("7.2", "ACCUMULATE")
def backward_twice_72(lib):
    lib.manual_seed(0)
    return (_with_grads(lib, _deep_mlp(lib, lib.nn.ReLU), backwards=2),)


@wrong("7.2", "it still vanishes", "after EVERY hidden Linear")
def tanh_with_tiny_weights(lib):
    lib.manual_seed(0)
    net = _deep_mlp(lib, lib.nn.Tanh)
    with lib.no_grad():
        for module in net:
            if isinstance(module, lib.nn.Linear):
                module.weight.mul_(0.1)
    return (_with_grads(lib, net),)


# --- 7.3 clip in the training step --------------------------------------------------------------


def _clipped_step(lib, zero_grad=True, clip="norm", step=True, returned="total"):
    def clipped_step(model, optimizer, loss_fn, x, y, max_norm):
        if zero_grad:
            optimizer.zero_grad()
        if clip == "before backward":
            lib.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        loss_fn(model(x), y).backward()
        total = None
        if clip == "norm":
            total = lib.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        elif clip == "value":
            lib.nn.utils.clip_grad_value_(model.parameters(), max_norm)
        if step:
            optimizer.step()
        if returned == "after":
            return lib.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
        return total
    return clipped_step


def _big(lib):
    return lib.nn.Linear(3, 1)  # the check builds its own model with the library of this one


@right("7.3")
def zero_grad_backward_clip_step(lib):
    return _clipped_step(lib), _big(lib)


@right("7.3")
def returns_a_python_float(lib):
    step = _clipped_step(lib)
    return (lambda *args: float(step(*args))), _big(lib)


@wrong("7.3", "norm AFTER clipping")
def returns_the_clipped_norm(lib):
    return _clipped_step(lib, returned="after"), _big(lib)


@wrong("7.3", "unclipped", "AFTER backward()")
def clips_before_backward(lib):
    return _clipped_step(lib, clip="before backward"), _big(lib)


@wrong("7.3", "clip_grad_value_", "NORM")
def clips_each_value(lib):
    return _clipped_step(lib, clip="value"), _big(lib)


@wrong("7.3", "zero_grad()", "accumulate")
def forgets_zero_grad_73(lib):
    return _clipped_step(lib, zero_grad=False), _big(lib)


@wrong("7.3", "did not change", "optimizer.step()")
def forgets_the_step(lib):
    return _clipped_step(lib, step=False), _big(lib)


@wrong("7.3", "return the total norm")
def returns_nothing_73(lib):
    step = _clipped_step(lib)
    return (lambda *args: step(*args) and None), _big(lib)


# --- 7.4 one SGD step through vectors -----------------------------------------------------------


def _small2(lib):
    lib.manual_seed(1)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    lib.nn.CrossEntropyLoss()(net(lib.randn(5, 3)), lib.tensor([0, 1, 1, 0, 1])).backward()
    theta0 = lib.nn.utils.parameters_to_vector(net.parameters()).detach().clone()
    return net, theta0


def _grads(lib, net):
    return lib.nn.utils.parameters_to_vector([p.grad for p in net.parameters()])


@right("7.4")
def vector_to_parameters_of_the_step(lib):
    net, theta0 = _small2(lib)
    lib.nn.utils.vector_to_parameters(theta0 - 0.1 * _grads(lib, net), net.parameters())
    return net, theta0


@right("7.4")
def in_place_per_parameter_under_no_grad(lib):
    net, theta0 = _small2(lib)
    with lib.no_grad():
        for p in net.parameters():
            p.sub_(0.1 * p.grad)
    return net, theta0


@wrong("7.4", "UP the gradient")
def ascends(lib):
    net, theta0 = _small2(lib)
    lib.nn.utils.vector_to_parameters(theta0 + 0.1 * _grads(lib, net), net.parameters())
    return net, theta0


@wrong("7.4", "did not change", "vector_to_parameters")
def computes_theta_but_never_writes_it(lib):
    net, theta0 = _small2(lib)
    theta = theta0 - 0.1 * _grads(lib, net)  # noqa: F841  (never written back)
    return net, theta0


@wrong("7.4", "replaced by new Parameters", "vector_to_parameters")
def assigns_a_new_parameter(lib):
    net, theta0 = _small2(lib)
    first = net[0]
    first.weight = lib.nn.Parameter(first.weight.detach() - 0.1 * first.weight.grad)
    return net, theta0


@wrong("7.4", "not theta0 − 0.1 · g")
def another_learning_rate(lib):
    net, theta0 = _small2(lib)
    lib.nn.utils.vector_to_parameters(theta0 - 0.01 * _grads(lib, net), net.parameters())
    return net, theta0


@wrong("7.4", "not theta0 − 0.1 · g", "same order")
def gradients_in_reverse_order(lib):
    net, theta0 = _small2(lib)
    g = lib.cat([p.grad.reshape(-1) for p in net.parameters()][::-1])
    lib.nn.utils.vector_to_parameters(theta0 - 0.1 * g, net.parameters())
    return net, theta0


# --- 7.5 freeze one row with a hook -------------------------------------------------------------


def _frozen(lib, hook, on="weight"):
    layer = lib.nn.Linear(4, 3)
    getattr(layer, on).register_hook(hook)
    return (layer,)


def _mask(lib):
    mask = lib.ones(3, 4)
    mask[0] = 0.0
    return mask


@right("7.5")
def multiply_by_a_mask(lib):
    mask = _mask(lib)
    return _frozen(lib, lambda grad: grad * mask)


@right("7.5")
def clone_and_zero_row_0(lib):
    def hook(grad):
        grad = grad.clone()
        grad[0] = 0
        return grad
    return _frozen(lib, hook)


@wrong("7.5", "first row still gets its gradient", "RETURN")
def hook_returns_nothing(lib):
    mask = _mask(lib)

    def hook(grad):
        grad = grad * mask  # a new tensor, never returned: the gradient stays as it was
    return _frozen(lib, hook)


@wrong("7.5", "whole gradient is zero", "only row 0")
def zeroes_everything(lib):
    return _frozen(lib, lambda grad: grad * 0)


@wrong("7.5", "row 0 must be 0", "other rows unchanged")
def zeroes_column_0(lib):
    def hook(grad):
        grad = grad.clone()
        grad[:, 0] = 0
        return grad
    return _frozen(lib, hook)


@wrong("7.5", "first row still gets its gradient", "layer.weight.register_hook")
def hook_on_the_bias(lib):
    return _frozen(lib, lambda grad: grad * 0, on="bias")


@wrong("7.5", "nn.Linear layer")
def passes_the_weight(lib):
    return (lib.nn.Linear(4, 3).weight,)
