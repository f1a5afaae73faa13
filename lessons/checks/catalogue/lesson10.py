"""Typical answers to the exercises of lesson 10 · Reparametrizations."""
import importlib

from . import right, wrong


def _parametrize(lib):
    return importlib.import_module(lib.__name__ + ".nn.utils.parametrize")


# --- 10.1 positive weights ----------------------------------------------------------------------


def _positive(lib, forward, right_inverse=None):
    class Positive(lib.nn.Module):
        def forward(self, X):
            return forward(X)

    if right_inverse is not None:
        Positive.right_inverse = lambda self, Y: right_inverse(Y)
    return (Positive,)


@right("10.1")
def exp_and_log(lib):
    return _positive(lib, lambda X: X.exp(), lambda Y: Y.log())


@right("10.1")
def softplus_and_its_inverse(lib):
    return _positive(lib, lib.nn.functional.softplus, lambda Y: Y + lib.log(-lib.expm1(-Y)))


@wrong("10.1", "give 0 at 0")
def absolute_value(lib):
    return _positive(lib, lambda X: X.abs(), lambda Y: Y)


@wrong("10.1", "give 0 at 0")
def square(lib):
    return _positive(lib, lambda X: X ** 2, lambda Y: Y.sqrt())


@wrong("10.1", "add right_inverse")
def no_right_inverse(lib):
    return _positive(lib, lambda X: X.exp())


@wrong("10.1", "must give Y back", "log undoes exp")
def a_wrong_inverse(lib):
    return _positive(lib, lambda X: X.exp(), lambda Y: Y)


@wrong("10.1", "does not require grad", "not NumPy")
def through_numpy(lib):
    return _positive(lib, lambda X: lib.tensor(X.detach().numpy().__abs__() + 1.0), lambda Y: Y - 1)


@wrong("10.1", "pass the class itself")
def passes_an_instance_101(lib):
    return (_positive(lib, lambda X: X.exp(), lambda Y: Y.log())[0](),)


# --- 10.2 weight normalization by hand ----------------------------------------------------------


def _wn_layer(lib):
    lib.manual_seed(1)
    layer = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(4, 3))
    g = layer.parametrizations.weight.original0
    with lib.no_grad():
        g.copy_(lib.tensor([[1.0], [2.0], [3.0]]))
    return layer, g, layer.parametrizations.weight.original1


@right("10.2")
def g_times_v_over_row_norms(lib):
    layer, g, v = _wn_layer(lib)
    return layer, g * v / v.norm(dim=1, keepdim=True)


@right("10.2")
def square_root_of_row_sums(lib):
    layer, g, v = _wn_layer(lib)
    return layer, g * v / (v ** 2).sum(dim=1, keepdim=True).sqrt()


@wrong("10.2", "norm of the whole matrix")
def one_norm_for_the_matrix(lib):
    layer, g, v = _wn_layer(lib)
    return layer, g * v / v.norm()


@wrong("10.2", "columns (dim=0)")
def column_norms(lib):
    layer, g, v = _wn_layer(lib)
    return layer, g * v / v.norm(dim=0, keepdim=True)


@wrong("10.2", "only the direction", "length g")
def forgets_g(lib):
    layer, g, v = _wn_layer(lib)
    return layer, v / v.norm(dim=1, keepdim=True)


@wrong("10.2", "wn_layer.weight itself")
def reads_the_weight(lib):
    layer, _, _ = _wn_layer(lib)
    return layer, layer.weight


@wrong("10.2", "weight_by_hand is None")
def left_blank_102(lib):
    return _wn_layer(lib)[0], None


# --- 10.3 what does the checkpoint hold? --------------------------------------------------------

KEYS = ["0.bias", "0.weight_orig", "0.weight_u", "0.weight_v",
        "1.bias", "1.parametrizations.weight.original0", "1.parametrizations.weight.original1",
        "2.bias", "2.parametrizations.weight.original",
        "2.parametrizations.weight.0._u", "2.parametrizations.weight.0._v"]


def _model_10_3(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 2))
    nn.utils.spectral_norm(model[0])
    nn.utils.parametrizations.weight_norm(model[1])
    nn.utils.parametrizations.spectral_norm(model[2])
    return model


def _keys(lib, keys):
    return _model_10_3(lib), keys


@right("10.3")
def every_stored_tensor(lib):
    return _keys(lib, list(KEYS))


@right("10.3")
def a_set_in_another_order(lib):
    return _keys(lib, set(reversed(KEYS)))


@wrong("10.3", "COMPUTED", "never saved", "originals")
def lists_the_weights(lib):
    return _keys(lib, KEYS + ["0.weight", "1.weight"])


@wrong("10.3", "OLD weight_norm")
def old_weight_norm_keys(lib):
    return _keys(lib, [k for k in KEYS if not k.startswith("1.parametrizations")] + ["1.weight_g", "1.weight_v"])


@wrong("10.3", "OLD spectral_norm", "parametrizations.weight.0")
def old_spectral_norm_keys_on_layer_2(lib):
    return _keys(lib, [k for k in KEYS if not k.startswith("2.parametrizations")]
                 + ["2.weight_orig", "2.weight_u", "2.weight_v"])


@wrong("10.3", "power-iteration vectors", "buffers")
def forgets_the_buffers(lib):
    return _keys(lib, [k for k in KEYS if not k.endswith(("_u", "_v"))])


@wrong("10.3", "biases are not reparametrized")
def forgets_the_biases(lib):
    return _keys(lib, [k for k in KEYS if not k.endswith("bias")])


@wrong("10.3", "appears twice")
def a_key_twice(lib):
    return _keys(lib, KEYS + ["0.bias"])


@wrong("10.3", "keys_10_3 is empty")
def left_blank_103(lib):
    return _keys(lib, [])


# --- 10.4 a deep network that keeps the norm ----------------------------------------------------


def _deep(lib, make, n=20):
    lib.manual_seed(0)
    return (lib.nn.Sequential(*(make() for _ in range(n))),)


@right("10.4")
def twenty_orthogonal_parametrizations(lib):
    nn = lib.nn
    return _deep(lib, lambda: nn.utils.parametrizations.orthogonal(nn.Linear(8, 8, bias=False)))


@right("10.4")
def householder_orthogonal_maps(lib):
    nn = lib.nn
    return _deep(lib, lambda: nn.utils.parametrizations.orthogonal(nn.Linear(8, 8, bias=False),
                                                                   orthogonal_map="householder"))


@wrong("10.4", "bias", "bias=False")
def keeps_the_bias(lib):
    nn = lib.nn
    return _deep(lib, lambda: nn.utils.parametrizations.orthogonal(nn.Linear(8, 8)))


@wrong("10.4", "plain weight", "wrap each one")
def orthogonal_init_only(lib):
    nn = lib.nn

    def make():
        layer = nn.Linear(8, 8, bias=False)
        nn.init.orthogonal_(layer.weight)
        return layer
    return _deep(lib, make)


@wrong("10.4", "Linear layers: build 20")
def ten_layers(lib):
    nn = lib.nn
    return _deep(lib, lambda: nn.utils.parametrizations.orthogonal(nn.Linear(8, 8, bias=False)), n=10)


@wrong("10.4", "plain weight")
def plain_layers(lib):
    return _deep(lib, lambda: lib.nn.Linear(8, 8, bias=False))


@wrong("10.4", "nn.Sequential of 20 orthogonal")
def a_list_instead_of_sequential(lib):
    nn = lib.nn
    return ([nn.utils.parametrizations.orthogonal(nn.Linear(8, 8, bias=False)) for _ in range(20)],)


# --- 10.5 keep the constraint, drop the machinery -----------------------------------------------


def _orth5(lib):
    lib.manual_seed(5)
    layer = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(5, 5))
    optimizer = lib.optim.SGD(layer.parameters(), lr=0.1)
    for _ in range(5):
        optimizer.zero_grad()
        layer(lib.randn(8, 5)).sum().backward()
        optimizer.step()
    return layer, layer.weight.detach().clone()


@right("10.5")
def remove_leaving_the_parametrized_weight(lib):
    layer, w_before = _orth5(lib)
    _parametrize(lib).remove_parametrizations(layer, "weight", leave_parametrized=True)
    return layer, w_before


@right("10.5")
def remove_with_the_default(lib):
    layer, w_before = _orth5(lib)
    _parametrize(lib).remove_parametrizations(layer, "weight")
    return layer, w_before


@wrong("10.5", "stored ORIGINAL")
def leaves_the_original(lib):
    layer, w_before = _orth5(lib)
    _parametrize(lib).remove_parametrizations(layer, "weight", leave_parametrized=False)
    return layer, w_before


@wrong("10.5", "still parametrized")
def does_nothing(lib):
    return _orth5(lib)


@wrong("10.5", "pass the layer")
def builds_a_new_sequential(lib):
    layer, w_before = _orth5(lib)
    plain = lib.nn.Linear(5, 5)
    with lib.no_grad():
        plain.weight.copy_(w_before)
    return lib.nn.Sequential(plain), w_before


@wrong("10.5", "not the one the parametrization computed")
def re_initialises_orthogonally(lib):
    layer, w_before = _orth5(lib)
    _parametrize(lib).remove_parametrizations(layer, "weight")
    lib.nn.init.orthogonal_(layer.weight)
    return layer, w_before
