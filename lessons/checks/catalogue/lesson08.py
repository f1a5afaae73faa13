"""Typical answers to the exercises of lesson 08 · Initialization, dtype and device."""
import copy
import math

from . import right, wrong

# --- 8.1 Xavier uniform for a tanh layer --------------------------------------------------------


def _layer(lib, init=None, zero_bias=True):
    lib.manual_seed(0)
    layer = lib.nn.Linear(256, 128)
    if init:
        init(layer.weight)
    if zero_bias:
        lib.nn.init.zeros_(layer.bias)
    return (layer,)


@right("8.1")
def xavier_uniform_with_calculate_gain(lib):
    init = lib.nn.init
    return _layer(lib, lambda w: init.xavier_uniform_(w, gain=init.calculate_gain("tanh")))


@right("8.1")
def uniform_with_the_bound_written_out(lib):
    def xavier(w):
        fan_out, fan_in = w.shape
        bound = lib.nn.init.calculate_gain("tanh") * math.sqrt(6 / (fan_in + fan_out))
        with lib.no_grad():
            w.uniform_(-bound, bound)
    return _layer(lib, xavier)


@wrong("8.1", "gain 1", "calculate_gain('tanh')")
def forgets_the_gain(lib):
    return _layer(lib, lib.nn.init.xavier_uniform_)


@wrong("8.1", "gain 1.4,", "calculate_gain('tanh')")
def relu_gain(lib):
    init = lib.nn.init
    return _layer(lib, lambda w: init.xavier_uniform_(w, gain=init.calculate_gain("relu")))


@wrong("8.1", "xavier_uniform_")
def xavier_normal(lib):
    init = lib.nn.init
    return _layer(lib, lambda w: init.xavier_normal_(w, gain=init.calculate_gain("tanh")))


@wrong("8.1", "beyond Xavier's bound")
def standard_normal(lib):
    return _layer(lib, lib.nn.init.normal_)


@wrong("8.1", "PyTorch's default values")
def leaves_the_weight(lib):
    return _layer(lib)


@wrong("8.1", "set the bias to zero")
def forgets_the_bias(lib):
    init = lib.nn.init
    return _layer(lib, lambda w: init.xavier_uniform_(w, gain=init.calculate_gain("tanh")), zero_bias=False)


# --- 8.2 init_weights for Module.apply ----------------------------------------------------------


def _init_weights(lib, weight, check_type=True, zero_bias=True):
    def init_weights(m):
        if check_type and not isinstance(m, lib.nn.Linear):
            return
        weight(m.weight)
        if zero_bias and m.bias is not None:
            lib.nn.init.zeros_(m.bias)
    return init_weights


@right("8.2")
def kaiming_normal_fan_in_relu(lib):
    return (_init_weights(lib, lambda w: lib.nn.init.kaiming_normal_(w, mode="fan_in", nonlinearity="relu")),)


@right("8.2")
def normal_with_std_sqrt_2_over_fan_in(lib):
    def weight(w):
        with lib.no_grad():
            w.normal_(0.0, math.sqrt(2.0 / w.shape[1]))
    return (_init_weights(lib, weight),)


@wrong("8.2", "raised AttributeError", "isinstance(m, nn.Linear)")
def no_isinstance_test(lib):
    return (_init_weights(lib, lambda w: lib.nn.init.kaiming_normal_(w, nonlinearity="relu"),
                          check_type=False),)


@wrong("8.2", "kaiming_normal_", "NORMAL")
def kaiming_uniform_82(lib):
    return (_init_weights(lib, lambda w: lib.nn.init.kaiming_uniform_(w, nonlinearity="relu")),)


@wrong("8.2", "mode='fan_in'")
def fan_out(lib):
    return (_init_weights(lib, lambda w: lib.nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")),)


@wrong("8.2", "nonlinearity='relu'")
def linear_gain(lib):
    return (_init_weights(lib, lambda w: lib.nn.init.kaiming_normal_(w, nonlinearity="linear")),)


@wrong("8.2", "biases are not zero")
def keeps_the_biases(lib):
    return (_init_weights(lib, lambda w: lib.nn.init.kaiming_normal_(w, nonlinearity="relu"), zero_bias=False),)


@wrong("8.2", "PyTorch's default", "m.weight")
def changes_nothing(lib):
    return (_init_weights(lib, lambda w: None),)


# --- 8.3 skip_init, then orthogonal -------------------------------------------------------------


def _rotation(lib, weight=None, zero_bias=True):
    lib.manual_seed(0)
    rotation = lib.nn.utils.skip_init(lib.nn.Linear, 64, 64)
    if weight:
        weight(rotation.weight)
    if zero_bias:
        lib.nn.init.zeros_(rotation.bias)
    else:
        with lib.no_grad():
            rotation.bias.fill_(0.5)  # what uninitialised memory may hold
    return (rotation,)


@right("8.3")
def orthogonal_and_zero_bias(lib):
    return _rotation(lib, lib.nn.init.orthogonal_)


@right("8.3")
def the_q_of_a_qr_decomposition(lib):
    def weight(w):
        q, _ = lib.linalg.qr(lib.randn(64, 64))
        with lib.no_grad():
            w.copy_(q)
    return _rotation(lib, weight)


@wrong("8.3", "scaled", "gain 1")
def orthogonal_with_gain_2(lib):
    return _rotation(lib, lambda w: lib.nn.init.orthogonal_(w, gain=2.0))


@wrong("8.3", "not the identity", "orthogonal_")
def kaiming_instead(lib):
    return _rotation(lib, lib.nn.init.kaiming_normal_)


@wrong("8.3", "bias must be zero")
def forgets_the_bias_83(lib):
    return _rotation(lib, lib.nn.init.orthogonal_, zero_bias=False)


@wrong("8.3", "nn.Linear(64, 64)")
def wrong_shape(lib):
    layer = lib.nn.utils.skip_init(lib.nn.Linear, 64, 32)
    lib.nn.init.orthogonal_(layer.weight)
    lib.nn.init.zeros_(layer.bias)
    return (layer,)


@wrong("8.3", "rotation is None", "skip_init")
def left_blank_83(lib):
    return (None,)


# --- 8.4 a float64 copy, the original untouched -------------------------------------------------


def _net32(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10))


def _xb(lib):
    from edutorch.datasets import load_digits

    return lib.tensor(load_digits("train")[0].numpy()[:256])


@right("8.4")
def deepcopy_then_double(lib):
    net32, xb = _net32(lib), _xb(lib)
    net64 = copy.deepcopy(net32).double()
    return net32, net64, net64(xb.double()), xb


@right("8.4")
def load_the_state_into_a_float64_twin(lib):
    net32, xb = _net32(lib), _xb(lib)
    nn = lib.nn
    net64 = nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10)).to(lib.float64)
    net64.load_state_dict(net32.state_dict())
    with lib.no_grad():
        out64 = net64(xb.to(lib.float64))
    return net32, net64, out64, xb


@wrong("8.4", "IS net32", "in place")
def double_in_place(lib):
    net32, xb = _net32(lib), _xb(lib)
    net64 = net32.double()
    return net32, net64, net64(xb.double()), xb


@wrong("8.4", "other values", "copy.deepcopy")
def a_new_network(lib):
    net32, xb = _net32(lib), _xb(lib)
    net64 = _net32(lib)
    lib.nn.init.zeros_(net64[0].bias)
    net64 = net64.double()
    return net32, net64, net64(xb.double()), xb


@wrong("8.4", "out64 is float32")
def float32_output(lib):
    net32, xb = _net32(lib), _xb(lib)
    net64 = copy.deepcopy(net32).double()
    return net32, net64, net32(xb), xb


@wrong("8.4", "net64's parameters are ['float32']")
def copy_without_conversion(lib):
    net32, xb = _net32(lib), _xb(lib)
    net64 = copy.deepcopy(net32)
    return net32, net64, net64(xb), xb


@wrong("8.4", "whole batch")
def output_on_part_of_the_batch(lib):
    net32, xb = _net32(lib), _xb(lib)
    net64 = copy.deepcopy(net32).double()
    return net32, net64, net64(xb[:10].double()), xb


# --- 8.5 create the layer where it runs ---------------------------------------------------------


def _head(lib, make):
    xb = _xb(lib)
    lib.manual_seed(0)  # as the answer cell: seeded just before the layer is made
    head = make()
    out = head(xb.to(device="cpu", dtype=lib.float64)) if head is not None else None
    return head, out, xb, "cpu"


@right("8.5")
def device_and_dtype_arguments(lib):
    return _head(lib, lambda: lib.nn.Linear(64, 10, device="cpu", dtype=lib.float64))


@right("8.5")
def factory_kwargs_in_a_dict(lib):
    factory = {"device": lib.device("cpu"), "dtype": lib.float64}
    return _head(lib, lambda: lib.nn.Linear(64, 10, **factory))


@wrong("8.5", "float32 number", "forbids")
def converts_with_double(lib):
    return _head(lib, lambda: lib.nn.Linear(64, 10).double())


@wrong("8.5", "float32 number", "forbids")
def converts_with_to(lib):
    return _head(lib, lambda: lib.nn.Linear(64, 10).to(device="cpu", dtype=lib.float64))


@wrong("8.5", "['float32']", "dtype=torch.float64")
def forgets_the_dtype(lib):
    lib.manual_seed(0)
    xb = _xb(lib)
    head = lib.nn.Linear(64, 10, device="cpu")
    return head, head(xb), xb, "cpu"


@wrong("8.5", "not PyTorch's default", "do not re-initialise")
def re_initialised(lib):
    def make():
        head = lib.nn.Linear(64, 10, device="cpu", dtype=lib.float64)
        lib.nn.init.xavier_normal_(head.weight)
        return head
    return _head(lib, make)


@wrong("8.5", "never initialised", "skip_init")
def skip_init_made_in_float64(lib):
    return _head(lib, lambda: lib.nn.utils.skip_init(lib.nn.Linear, 64, 10, device="cpu", dtype=lib.float64))


@wrong("8.5", "nn.Linear(64, 10)")
def wrong_size(lib):
    return _head(lib, lambda: lib.nn.Linear(64, 12, device="cpu", dtype=lib.float64))
