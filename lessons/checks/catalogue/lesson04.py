"""Typical answers to the exercises of lesson 04 · Pruning."""
import importlib

from . import right, wrong


def _prune(lib):
    return importlib.import_module(lib.__name__ + ".nn.utils.prune")


def _trained(lib):
    """A network shaped like the lesson's ``trained`` (three Linear layers), with seeded weights."""
    nn = lib.nn
    lib.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 10))


# --- 4.1 structured pruning ---------------------------------------------------------------------


def _pruned_layer(lib, prune_it):
    layer = _trained(lib)[2]
    prune_it(_prune(lib), layer)
    return (layer,)


@right("4.1")
def ln_structured_l2_rows(lib):
    return _pruned_layer(lib, lambda prune, layer: prune.ln_structured(layer, "weight", amount=0.5, n=2, dim=0))


@right("4.1")
def half_the_rows_as_a_count(lib):
    return _pruned_layer(lib, lambda prune, layer: prune.ln_structured(layer, name="weight", amount=8, n=2, dim=0))


@wrong("4.1", "smallest L1 norm", "n=2")
def l1_norm_of_the_rows(lib):
    return _pruned_layer(lib, lambda prune, layer: prune.ln_structured(layer, "weight", amount=0.5, n=1, dim=0))


@wrong("4.1", "partly pruned", "STRUCTURED")
def unstructured(lib):
    return _pruned_layer(lib, lambda prune, layer: prune.l1_unstructured(layer, "weight", amount=0.5))


@wrong("4.1", "partly pruned", "dim=0")
def columns_instead_of_rows(lib):
    return _pruned_layer(lib, lambda prune, layer: prune.ln_structured(layer, "weight", amount=0.5, n=2, dim=1))


@wrong("4.1", "prune half", "amount=0.5")
def a_third_of_the_rows(lib):
    return _pruned_layer(lib, lambda prune, layer: prune.ln_structured(layer, "weight", amount=0.3, n=2, dim=0))


@wrong("4.1", "not pruned yet", "prune module")
def not_pruned(lib):
    return _pruned_layer(lib, lambda prune, layer: None)


# --- 4.2 predict the sparsity -------------------------------------------------------------------


@right("4.2", libs=("edutorch",))
def one_minus_the_kept_fractions(lib):
    return (1 - 0.5 * 0.6 * 0.8,)


@right("4.2", libs=("edutorch",))
def a_rounded_number(lib):
    return (0.76,)


@wrong("4.2", "do not add up", "REMAINING", libs=("edutorch",))
def adds_the_amounts(lib):
    return (0.5 + 0.4 + 0.2,)


@wrong("4.2", "not a fraction", "REMAINING", libs=("edutorch",))
def a_percentage(lib):
    return (76,)


@wrong("4.2", "50 % remain", "20 %", libs=("edutorch",))
def multiplies_the_amounts(lib):
    return (0.5 * 0.4 * 0.2,)


@wrong("4.2", "50 % remain", libs=("edutorch",))
def the_kept_fraction(lib):
    return (0.5 * 0.6 * 0.8,)


@wrong("4.2", "pass a number", libs=("edutorch",))
def left_blank_42(lib):
    return (None,)


# --- 4.3 global pruning -------------------------------------------------------------------------


def _linears(net):
    return [(net[i], "weight") for i in (0, 2, 4)]


def _globally(lib, amount=0.7, method="L1Unstructured", pairs=_linears):
    net = _trained(lib)
    prune = _prune(lib)
    prune.global_unstructured(pairs(net), pruning_method=getattr(prune, method), amount=amount)
    return (net,)


@right("4.3")
def global_l1_over_the_three_layers(lib):
    return _globally(lib)


@right("4.3")
def global_with_a_count_of_weights(lib):
    total = 64 * 32 + 32 * 16 + 16 * 10
    return _globally(lib, amount=round(0.7 * total))


@wrong("4.3", "per-layer pruning", "global_unstructured")
def each_layer_70_percent(lib):
    net = _trained(lib)
    for module, name in _linears(net):
        _prune(lib).l1_unstructured(module, name, amount=0.7)
    return (net,)


@wrong("4.3", "every Linear layer's weight must be pruned")
def forgets_the_last_layer(lib):
    return _globally(lib, pairs=lambda net: _linears(net)[:2])


@wrong("4.3", "weights are pruned", "70 % of the network")
def pools_the_biases_too(lib):
    return _globally(lib, pairs=lambda net: _linears(net) + [(net[i], "bias") for i in (0, 2, 4)])


@wrong("4.3", "70 % of the network")
def half_of_the_network(lib):
    return _globally(lib, amount=0.5)


@wrong("4.3", "no nn.Linear layers")
def passes_a_layer_list(lib):
    return (lib.nn.Sequential(lib.nn.ReLU()),)


# --- 4.4 finish the job -------------------------------------------------------------------------


def _pruned_net(lib):
    return _globally(lib)[0]


@right("4.4")
def remove_on_each_linear(lib):
    net = _pruned_net(lib)
    for module, name in _linears(net):
        _prune(lib).remove(module, name)
    return (net,)


@right("4.4")
def remove_wherever_a_mask_is(lib):
    net = _pruned_net(lib)
    for module in net.modules():
        if hasattr(module, "weight_mask"):
            _prune(lib).remove(module, "weight")
    return (net,)


@wrong("4.4", "still reparametrised", "prune.remove")
def removes_only_the_first_layer(lib):
    net = _pruned_net(lib)
    _prune(lib).remove(net[0], "weight")
    return (net,)


@wrong("4.4", "still reparametrised")
def does_nothing(lib):
    return (_pruned_net(lib),)


@wrong("4.4", "the zeros are gone")
def rebuilds_the_network(lib):
    return (_trained(lib),)


@wrong("4.4", "pruning forward pre-hook is still registered")
def deletes_the_tensors_but_keeps_the_hooks(lib):
    net = _pruned_net(lib)
    for module, _ in _linears(net):
        weight = module.weight.detach().clone()
        del module._parameters["weight_orig"]
        del module._buffers["weight_mask"]
        module.weight = lib.nn.Parameter(weight)
    return (net,)
