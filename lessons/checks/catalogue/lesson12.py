"""Typical answers to the exercises of lesson 12 · Beyond the basics."""
import importlib

from . import right, wrong

# --- 12.1 a data-dependent loop -----------------------------------------------------------------


def _run_two_cells(lib, choose=lambda x_t, a, b: a if x_t.sum() > 0 else b, detach=False):
    def run_two_cells(xs, cell_a, cell_b):
        h = lib.zeros(cell_a.out_features)
        for x_t in xs:
            cell = choose(x_t, cell_a, cell_b)
            h = lib.tanh(cell(lib.cat([x_t, h])))
            if detach:
                h = h.detach()
        return h
    return (run_two_cells,)


@right("12.1")
def the_loop_of_the_text(lib):
    return _run_two_cells(lib)


@right("12.1")
def index_the_rows_and_pick_with_a_tuple(lib):
    def run_two_cells(xs, cell_a, cell_b):
        h = lib.zeros(cell_a.out_features)
        for t in range(xs.shape[0]):
            cell = (cell_b, cell_a)[bool(xs[t].sum() > 0)]
            h = lib.tanh(cell(lib.cat([xs[t], h])))
        return h
    return (run_two_cells,)


@wrong("12.1", "cells are swapped")
def swapped_cells(lib):
    return _run_two_cells(lib, choose=lambda x_t, a, b: b if x_t.sum() > 0 else a)


@wrong("12.1", "same cell is used at every step")
def chooses_once_from_the_first_row(lib):
    def run_two_cells(xs, cell_a, cell_b):
        cell = cell_a if xs[0].sum() > 0 else cell_b
        h = lib.zeros(cell_a.out_features)
        for x_t in xs:
            h = lib.tanh(cell(lib.cat([x_t, h])))
        return h
    return (run_two_cells,)


@wrong("12.1", "no graph", "detached")
def detaches_h(lib):
    return _run_two_cells(lib, detach=True)


@wrong("12.1", "the last h differs", "torch.tanh")
def forgets_tanh(lib):
    def run_two_cells(xs, cell_a, cell_b):
        h = lib.zeros(cell_a.out_features)
        for x_t in xs:
            h = (cell_a if x_t.sum() > 0 else cell_b)(lib.cat([x_t, h]))
        return h
    return (run_two_cells,)


@wrong("12.1", "return the last hidden state")
def returns_every_state_as_a_list(lib):
    def run_two_cells(xs, cell_a, cell_b):
        h, states = lib.zeros(cell_a.out_features), []
        for x_t in xs:
            h = lib.tanh((cell_a if x_t.sum() > 0 else cell_b)(lib.cat([x_t, h])))
            states.append(h)
        return states
    return (run_two_cells,)


# --- 12.2 rewrite a graph -----------------------------------------------------------------------


def _rewrite(lib, which, recompile=True, returns=True):
    def relu_to_gelu(gm):
        for node in gm.graph.nodes:
            if which(node):
                node.target = lib.nn.functional.gelu
        if recompile:
            gm.recompile()
        return gm if returns else None
    return (relu_to_gelu,)


@right("12.2")
def retarget_the_relu_calls(lib):
    return _rewrite(lib, lambda n: n.op == "call_function" and n.target is lib.relu)


@right("12.2")
def replace_the_nodes_with_graph_inserts(lib):
    def relu_to_gelu(gm):
        for node in list(gm.graph.nodes):
            if node.op == "call_function" and node.target == lib.relu:
                with gm.graph.inserting_after(node):
                    new = gm.graph.call_function(lib.nn.functional.gelu, node.args, node.kwargs)
                node.replace_all_uses_with(new)
                gm.graph.erase_node(node)
        gm.recompile()
        return gm
    return (relu_to_gelu,)


@wrong("12.2", "became F.gelu too", "only the nodes whose node.target is torch.relu")
def every_call_function(lib):
    return _rewrite(lib, lambda n: n.op == "call_function")


@wrong("12.2", "call_method node (x.relu())", "must stay")
def also_the_method_call(lib):
    return _rewrite(lib, lambda n: n.target is lib.relu or n.target == "relu")


@wrong("12.2", "gm.recompile()")
def forgets_recompile(lib):
    return _rewrite(lib, lambda n: n.op == "call_function" and n.target is lib.relu, recompile=False)


@wrong("12.2", "return gm")
def returns_nothing_122(lib):
    return _rewrite(lib, lambda n: n.op == "call_function" and n.target is lib.relu, returns=False)


@wrong("12.2", "still has target torch.relu")
def compares_the_name_as_a_string(lib):
    return _rewrite(lib, lambda n: n.op == "call_function" and n.target == "torch.relu")


# --- 12.3 checkpoint a deep model ---------------------------------------------------------------


def _checkpoint(lib):
    return importlib.import_module(lib.__name__ + ".utils.checkpoint")


@right("12.3")
def checkpoint_sequential_non_reentrant(lib):
    return (lambda model, x, segments: _checkpoint(lib).checkpoint_sequential(
        model, segments, x, use_reentrant=False),)


@right("12.3")
def keyword_arguments(lib):
    return (lambda model, x, segments: _checkpoint(lib).checkpoint_sequential(
        functions=model, segments=segments, input=x, use_reentrant=False),)


@wrong("12.3", "CheckpointFunctionBackward", "use_reentrant=False")
def reentrant(lib):
    return (lambda model, x, segments: _checkpoint(lib).checkpoint_sequential(
        model, segments, x, use_reentrant=True),)


@wrong("12.3", "not one checkpoint over the whole model")
def one_checkpoint_ignoring_segments(lib):
    return (lambda model, x, segments: _checkpoint(lib).checkpoint(model, x, use_reentrant=False),)


@wrong("12.3", "raised TypeError", "the model, the number of segments, then x")
def swapped_arguments(lib):
    return (lambda model, x, segments: _checkpoint(lib).checkpoint_sequential(
        model, x, segments, use_reentrant=False),)


@wrong("12.3", "nothing was checkpointed")
def plain_forward(lib):
    return (lambda model, x, segments: model(x),)


@wrong("12.3", "nor a fixed number")
def always_three_segments(lib):
    return (lambda model, x, segments: _checkpoint(lib).checkpoint_sequential(
        model, 3, x, use_reentrant=False),)


# --- 12.4 predict the dtypes --------------------------------------------------------------------


def _dtypes(lib, **changes):
    dtypes = {"a @ b": lib.bfloat16, "(a @ b).relu()": lib.bfloat16, "a.relu()": lib.float32,
              "d @ d": lib.float64, "F.mse_loss(a @ b, b)": lib.float32}
    dtypes.update({k.replace("__", " "): v for k, v in changes.items()})
    return (dtypes,)


@right("12.4")
def the_autocast_policy(lib):
    return _dtypes(lib)


@right("12.4")
def written_as_strings_of_the_dtypes(lib):
    return ({k: str(v) for k, v in _dtypes(lib)[0].items()},)


@wrong("12.4", "'(a @ b).relu()' gives torch.bfloat16", "no list")
def relu_back_to_float32(lib):
    return ({**_dtypes(lib)[0], "(a @ b).relu()": lib.float32},)


@wrong("12.4", "'a.relu()' gives torch.float32")
def everything_in_bfloat16(lib):
    return ({**_dtypes(lib)[0], "a.relu()": lib.bfloat16},)


@wrong("12.4", "float64 inputs are never cast")
def float64_cast_down(lib):
    return ({**_dtypes(lib)[0], "d @ d": lib.bfloat16},)


@wrong("12.4", "losses run in float32")
def loss_in_bfloat16(lib):
    return ({**_dtypes(lib)[0], "F.mse_loss(a @ b, b)": lib.bfloat16},)


@wrong("12.4", "matrix products run in the low dtype")
def product_in_float16(lib):
    return ({**_dtypes(lib)[0], "a @ b": lib.float16},)


@wrong("12.4", "is None")
def left_blank_124(lib):
    return ({**_dtypes(lib)[0], "d @ d": None},)


# --- 12.5 a GradScaler training step ------------------------------------------------------------


def _scaled_step(lib, zero_grad=True, dtype="float16", scale=True, through_scaler=True, update=True,
                 returned="loss"):
    F = lib.nn.functional

    def scaled_step(model, optimizer, scaler, x, y):
        if zero_grad:
            optimizer.zero_grad()
        with lib.autocast("cpu", dtype=getattr(lib, dtype)):
            loss = F.mse_loss(model(x), y)
        (scaler.scale(loss) if scale else loss).backward()
        if through_scaler:
            scaler.step(optimizer)
        else:
            optimizer.step()
        if update:
            scaler.update()
        return scaler.scale(loss) if returned == "scaled" else loss
    return (scaled_step,)


@right("12.5")
def zero_grad_autocast_scale_step_update(lib):
    return _scaled_step(lib)


@right("12.5")
def set_to_none_and_return_a_detached_loss(lib):
    step = _scaled_step(lib, zero_grad=False)[0]

    def scaled_step(model, optimizer, scaler, x, y):
        model.zero_grad(set_to_none=True)
        return step(model, optimizer, scaler, x, y).detach()
    return (scaled_step,)


@wrong("12.5", "accumulate", "optimizer.zero_grad()")
def forgets_zero_grad_125(lib):
    return _scaled_step(lib, zero_grad=False)


@wrong("12.5", "ran in bfloat16", "dtype=torch.float16")
def bfloat16_autocast(lib):
    return _scaled_step(lib, dtype="bfloat16")


@wrong("12.5", "scaler.scale(loss)")
def backward_of_the_unscaled_loss(lib):
    return _scaled_step(lib, scale=False)


@wrong("12.5", "step through the scaler")
def optimizer_step_directly(lib):
    return _scaled_step(lib, through_scaler=False)


@wrong("12.5", "scaler.update()")
def forgets_update(lib):
    return _scaled_step(lib, update=False)


@wrong("12.5", "unscaled loss")
def returns_the_scaled_loss(lib):
    return _scaled_step(lib, returned="scaled")
