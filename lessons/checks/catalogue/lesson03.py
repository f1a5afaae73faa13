"""Typical answers to the exercises of lesson 03 · Hooks."""
from . import right, wrong

# --- 3.1 predict the order ----------------------------------------------------------------------

ORDER = ["0 forward_pre", "0 forward", "1 forward_pre", "1 forward",
         "1 backward_pre", "1 backward", "0 backward_pre", "0 backward"]


@right("3.1", libs=("edutorch",))
def forward_first_to_last_backward_last_to_first(lib):
    return (list(ORDER),)


@right("3.1", libs=("edutorch",))
def a_tuple_with_extra_spaces(lib):
    return (tuple(s.replace(" ", "  ") for s in ORDER),)


@wrong("3.1", "LAST layer to the first", libs=("edutorch",))
def backward_in_forward_order(lib):
    return (ORDER[:4] + ["0 backward_pre", "0 backward", "1 backward_pre", "1 backward"],)


@wrong("3.1", "backward_pre", "before its backward hook", libs=("edutorch",))
def backward_hook_before_its_pre_hook(lib):
    return (ORDER[:4] + ["1 backward", "1 backward_pre", "0 backward", "0 backward_pre"],)


@wrong("3.1", "before the next layer starts", libs=("edutorch",))
def all_pre_hooks_first(lib):
    return (["0 forward_pre", "1 forward_pre", "0 forward", "1 forward"] + ORDER[4:],)


@wrong("3.1", "two hooks per layer in each direction", libs=("edutorch",))
def forgets_the_pre_hooks(lib):
    return ([s for s in ORDER if "pre" not in s],)


@wrong("3.1", "the list is empty", libs=("edutorch",))
def left_blank_31(lib):
    return ([],)


@wrong("3.1", "pass a list of strings", libs=("edutorch",))
def one_long_string(lib):
    return (", ".join(ORDER),)


# --- 3.2 capture activations --------------------------------------------------------------------


def _net(lib):
    nn = lib.nn
    lib.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3), nn.ReLU(), nn.Linear(3, 2))
    return net, lib.randn(6, 4)


def _capture(lib, store=lambda output: output.detach(), remove=True, kinds=None, run=True):
    net, inputs = _net(lib)
    activations, handles = {}, []
    for name, module in net.named_modules():
        if isinstance(module, kinds or lib.nn.Linear):
            def hook(module, args, output, name=name):
                activations[name] = store(output)
            handles.append(module.register_forward_hook(hook))
    if run:
        net(inputs)
    if remove:
        for handle in handles:
            handle.remove()
    return net, inputs, activations


@right("3.2")
def detached_outputs_and_handles_removed(lib):
    return _capture(lib)


@right("3.2")
def clones_under_no_grad_with_a_closure_factory(lib):
    net, inputs = _net(lib)
    activations = {}

    def keep(name):
        def hook(module, args, output):
            with lib.no_grad():
                activations[name] = output.clone()
        return hook

    handles = [m.register_forward_hook(keep(n)) for n, m in net.named_modules() if isinstance(m, lib.nn.Linear)]
    net(inputs)
    for handle in handles:
        handle.remove()
    return net, inputs, activations


@wrong("3.2", "still registered", "handle.remove()")
def leaves_the_hooks(lib):
    return _capture(lib, remove=False)


@wrong("3.2", "still part of the graph", "output.detach()")
def keeps_the_graph(lib):
    return _capture(lib, store=lambda output: output)


@wrong("3.2", "expected the Linear layers")
def hooks_every_module(lib):
    return _capture(lib, kinds=lib.nn.Module)


@wrong("3.2", "activations is empty", "net(inputs)")
def never_runs_the_net(lib):
    return _capture(lib, run=False)


@wrong("3.2", "is not the output of layer")
def stores_the_relu_of_the_output(lib):
    return _capture(lib, store=lambda output: output.detach().relu())


# --- 3.3 clip the gradient flowing through a layer ----------------------------------------------


@right("3.3")
def clamp_each_entry_keep_none(lib):
    return (lambda module, grad_input, grad_output:
            tuple(None if g is None else g.clamp(-0.1, 0.1) for g in grad_input),)


@right("3.3")
def torch_clamp_with_min_and_max(lib):
    def clip_grad_input(module, grad_input, grad_output):
        return tuple(g if g is None else lib.clamp(g, min=-0.1, max=0.1) for g in grad_input)
    return (clip_grad_input,)


@wrong("3.3", "returned a list", "tuple")
def returns_a_list(lib):
    return (lambda module, grad_input, grad_output:
            [None if g is None else g.clamp(-0.1, 0.1) for g in grad_input],)


@wrong("3.3", "unchanged", "RETURN")
def clamps_but_returns_nothing(lib):
    def clip_grad_input(module, grad_input, grad_output):
        [None if g is None else g.clamp(-0.1, 0.1) for g in grad_input]
    return (clip_grad_input,)


@wrong("3.3", "(None,)", "Keep None entries as None")
def breaks_on_none(lib):
    return (lambda module, grad_input, grad_output: tuple(g.clamp(-0.1, 0.1) for g in grad_input),)


@wrong("3.3", "not grad_input clamped to [-0.1, 0.1]")
def clamps_grad_output_instead(lib):
    def clip_grad_input(module, grad_input, grad_output):
        return tuple(None if g is None else g.clamp(-0.1, 0.1) * 0.5 for g in grad_input)
    return (clip_grad_input,)


@wrong("3.3", "not grad_input clamped", "[-0.1, 0.1]")
def clamps_to_zero_one(lib):
    return (lambda module, grad_input, grad_output:
            tuple(None if g is None else g.clamp(0.0, 0.1) for g in grad_input),)


@wrong("3.3", "pass your hook function")
def passes_the_result_33(lib):
    return (None,)


# --- 3.4 a forward pre-hook that fixes inputs ---------------------------------------------------


@right("3.4")
def returns_the_new_args_tuple(lib):
    return (lambda module, args: (args[0].clamp(-1.0, 1.0),) + tuple(args[1:]),)


@right("3.4")
def returns_a_single_tensor(lib):
    return (lambda module, args: lib.clamp(args[0], -1.0, 1.0),)


@wrong("3.4", "output did not change", "RETURN")
def clamps_without_returning(lib):
    def clamp_inputs(module, args):
        args[0].clamp(-1.0, 1.0)
    return (clamp_inputs,)


@wrong("3.4", "not layer(x.clamp(-1, 1))", "[-1, 1]")
def clamps_to_zero_one_34(lib):
    return (lambda module, args: (args[0].clamp(0.0, 1.0),),)


@wrong("3.4", "not layer(x.clamp(-1, 1))")
def normalises_instead(lib):
    return (lambda module, args: (args[0] / args[0].abs().max(),),)


@wrong("3.4", "the call raised", "TypeError")
def forward_hook_signature(lib):
    return (lambda module, args, output: output.clamp(-1.0, 1.0),)


@wrong("3.4", "pass your pre-hook function")
def passes_the_result_34(lib):
    return (None,)
