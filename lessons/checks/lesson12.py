"""Checks of lesson 12 · Beyond the basics (lessons/12-beyond-the-basics.ipynb)."""

import importlib
import math
import warnings

import numpy as np

import edutorch

from ._common import (
    _correct,
    _hint,
    _is_tensor,
    _library_of_function,
    _node_name,
    _seeded,
    _values,
    exercise,
)


def _two_cells_reference(lib, xs, cell_a, cell_b):
    h = lib.zeros(cell_a.out_features)
    for x_t in xs:
        cell = cell_a if x_t.sum() > 0 else cell_b
        h = lib.tanh(cell(lib.cat([x_t, h])))
    return h


def _cell_grads(cells):
    return [_values(p.grad) if p.grad is not None else None for c in cells for p in c.parameters()]


@exercise
def exercise_12_1(run_two_cells):
    """``run_two_cells(xs, cell_a, cell_b)``: a cell chosen per step by ``x_t.sum() > 0``."""
    if not callable(run_two_cells):
        return _hint("define the function run_two_cells(xs, cell_a, cell_b) and pass it")
    lib = _library_of_function(run_two_cells)
    with _seeded(lib):
        cells = [lib.nn.Linear(7, 4) for _ in range(4)]  # the student's pair, the reference pair
        xs = lib.randn(6, 3)
    with lib.no_grad():
        for mine, theirs in zip(cells[2:], cells[:2]):
            mine.weight.copy_(theirs.weight)
            mine.bias.copy_(theirs.bias)
    got = run_two_cells(xs, cells[0], cells[1])
    if not _is_tensor(got):
        return _hint("run_two_cells must return the last hidden state h (a tensor)")
    want = _two_cells_reference(lib, xs, cells[2], cells[3])
    if tuple(got.shape) != tuple(want.shape):
        return _hint(f"the result has shape {tuple(got.shape)}, expected {tuple(want.shape)}: "
                     "return the last h, of cell_a.out_features numbers")
    if not np.allclose(_values(got), _values(want), atol=1e-6):
        swapped = _two_cells_reference(lib, xs, cells[3], cells[2])
        if np.allclose(_values(got), _values(swapped), atol=1e-6):
            return _hint("the cells are swapped: use cell_a when x_t.sum() > 0, cell_b otherwise")
        for fixed in (cells[2], cells[3]):
            if np.allclose(_values(got), _values(_two_cells_reference(lib, xs, fixed, fixed)), atol=1e-6):
                return _hint("the same cell is used at every step: choose it inside the loop, "
                             "from each x_t")
        return _hint("the last h differs: h = torch.tanh(cell(torch.cat([x_t, h]))) at each step, "
                     "starting from zeros")
    if not got.requires_grad:
        return _hint("the result has no graph: do not compute it under no_grad or from detached cells")
    got.sum().backward()
    want.sum().backward()
    for g, w in zip(_cell_grads(cells[:2]), _cell_grads(cells[2:])):
        if (g is None) != (w is None) or (g is not None and not np.allclose(g, w, atol=1e-6)):
            return _hint("the values are right but the gradients differ: build h only from the "
                         "cells' outputs (no .detach(), no .item())")
    used = "".join("a" if x.sum() > 0 else "b" for x in xs)
    return _correct(f"steps used cells {used}; values and gradients of both cells match")


def _relu_module(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = lib.nn.Linear(4, 8)
            self.fc2 = lib.nn.Linear(8, 8)

        def forward(self, x):
            h = self.fc1(x)
            return self.fc2(lib.relu(h)).relu() + lib.tanh(h)

    with _seeded(lib):
        return Net()


@exercise
def exercise_12_2(relu_to_gelu):
    """``relu_to_gelu(gm)`` retargets every ``torch.relu`` call_function node to ``F.gelu`` and recompiles."""
    if not callable(relu_to_gelu):
        return _hint("define relu_to_gelu(gm) and pass the function")
    lib = _library_of_function(relu_to_gelu)
    module = _relu_module(lib)
    gm = lib.fx.symbolic_trace(module)
    others = [n.target for n in gm.graph.nodes if n.op == "call_function" and n.target is not lib.relu]
    try:
        result = relu_to_gelu(gm)
    except Exception as error:
        return _hint(f"relu_to_gelu raised {type(error).__name__}: {error}. Change only the "
                     "call_function nodes whose target is torch.relu: a call_method node (x.relu()) "
                     "names its method by a string and must stay")
    if result is None:
        return _hint("return gm at the end")
    targets = [n.target for n in result.graph.nodes if n.op == "call_function"]
    changed = [getattr(target, "__name__", str(target)) for target in others if target not in targets]
    if changed:
        return _hint(f"the call_function nodes calling {changed} became F.gelu too: change only the "
                     "nodes whose node.target is torch.relu")
    if lib.relu in targets:
        return _hint("a call_function node still has target torch.relu: set node.target = F.gelu "
                     "for each of them")
    if lib.nn.functional.gelu not in targets:
        return _hint("no node calls F.gelu: give the torch.relu nodes the target F.gelu")
    methods = [n.target for n in result.graph.nodes if n.op == "call_method"]
    if "relu" not in methods:
        return _hint("only call_function nodes with target torch.relu should change: the "
                     "x.relu() method call (a call_method node) must stay")
    with _seeded(lib):
        x = lib.randn(3, 4)
    with lib.no_grad():
        h = module.fc1(x)
        want = _values(module.fc2(lib.nn.functional.gelu(h)).relu() + lib.tanh(h))
        got = _values(result(x))
    if not np.allclose(got, want, atol=1e-6):
        return _hint("the graph changed but the module still computes the old code: call "
                     "gm.recompile() after editing the graph")
    return _correct("torch.relu became F.gelu in the graph and in the generated code")


def _checkpoint_model(lib):
    nn = lib.nn
    with _seeded(lib):
        model = nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), nn.ReLU()) for _ in range(9)])
        x = lib.randn(4, 16, requires_grad=True)
    return model, x


def _saved_numbers(lib, fn, *args, **kwargs):
    """How many numbers autograd saves for backward while ``fn(*args, **kwargs)`` builds the graph;
    its result."""
    saved = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t.numel()) or t, lambda t: t):
        out = fn(*args, **kwargs)
    return sum(saved), out


def _node_names(out):
    """The class names of every node of ``out``'s graph."""
    names, stack, seen = set(), [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(_node_name(node))
        stack += [edge[0] for edge in node.next_functions]
    return names


@exercise
def exercise_12_3(checkpointed):
    """``checkpointed(model, x, segments)`` = ``model(x)`` through non-reentrant checkpoint_sequential
    in ``segments`` segments: values, gradients, the numbers saved and the graph's nodes compared."""
    if not callable(checkpointed):
        return _hint("define checkpointed(model, x, segments) and pass it")
    lib = _library_of_function(checkpointed)
    checkpoint = importlib.import_module(lib.__name__ + ".utils.checkpoint")
    model, x = _checkpoint_model(lib)
    plain = model(x)
    plain.sum().backward()
    want_out, want_grads = _values(plain), [_values(p.grad) for p in model.parameters()] + [_values(x.grad)]
    everything, _ = _saved_numbers(lib, model, x)
    for segments in (2, 3):  # the message below reports the lesson's 3 segments
        model.zero_grad()
        x.grad = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                saved, out = _saved_numbers(lib, checkpointed, model, x, segments)
            except Exception as error:
                return _hint(f"checkpointed raised {type(error).__name__}: {error}. "
                             "checkpoint_sequential takes (functions, segments, input, ...): the "
                             "model, the number of segments, then x")
            want_saved, _ = _saved_numbers(lib, checkpoint.checkpoint_sequential, model, segments, x,
                                           use_reentrant=False)
        if not _is_tensor(out):
            return _hint("return the model's output (a tensor)")
        if any("use_reentrant" in str(w.message) for w in caught):
            return _hint("checkpoint_sequential warned about use_reentrant: pass use_reentrant=False")
        if "CheckpointFunctionBackward" in _node_names(out):
            return _hint("the graph has CheckpointFunctionBackward nodes: that is the reentrant "
                         "algorithm. Pass use_reentrant=False")
        if not np.allclose(_values(out), want_out, atol=1e-6):
            return _hint("the output differs from model(x): pass the model, the number of segments "
                         "and x to checkpoint_sequential")
        out.sum().backward()
        grads = [_values(p.grad) for p in model.parameters()] + [_values(x.grad)]
        if not all(np.allclose(g, w, atol=1e-6) for g, w in zip(grads, want_grads)):
            return _hint("the gradients differ from those of model(x)")
        if saved >= everything:
            return _hint("nothing was checkpointed: the saved tensors are as large as without "
                         "checkpointing; use checkpoint_sequential(model, segments, x, use_reentrant=False)")
        if saved != want_saved:
            return _hint(f"with segments={segments} autograd saved {saved} numbers, where "
                         f"checkpoint_sequential in {segments} segments saves {want_saved}: pass "
                         "segments on to checkpoint_sequential (not one checkpoint over the whole "
                         "model, nor a fixed number)")
    return _correct(f"same output and gradients; {saved} saved numbers instead of {everything}")


#: exercise 12.4's expressions, with a, b float32 and d float64 matrices, under autocast("cpu")
AUTOCAST_EXPRESSIONS = {
    "a @ b": "matrix products run in the low dtype (bfloat16 on the CPU)",
    "(a @ b).relu()": "relu is in no list: it runs in its input's dtype, the bfloat16 product",
    "a.relu()": "relu is in no list: it runs in its input's dtype, float32 here",
    "d @ d": "float64 inputs are never cast",
    "F.mse_loss(a @ b, b)": "losses run in float32 (mse_loss is on the CPU's float32 list)",
}


def _autocast_truth(lib):
    a, b, d = lib.randn(3, 3), lib.randn(3, 3), lib.randn(3, 3, dtype=lib.float64)
    F = lib.nn.functional
    with lib.autocast("cpu"):
        results = {"a @ b": a @ b, "(a @ b).relu()": (a @ b).relu(), "a.relu()": a.relu(),
                   "d @ d": d @ d, "F.mse_loss(a @ b, b)": F.mse_loss(a @ b, b)}
    return {k: str(v.dtype) for k, v in results.items()}


@exercise
def exercise_12_4(dtypes):
    """``dtypes[expression]`` is the dtype of each AUTOCAST_EXPRESSIONS entry under autocast("cpu")."""
    if not isinstance(dtypes, dict) or any(k not in dtypes for k in AUTOCAST_EXPRESSIONS):
        return _hint("keep the given keys and give a dtype for each")
    blank = [k for k in AUTOCAST_EXPRESSIONS if dtypes[k] is None]
    if blank:
        return _hint(f"dtypes[{blank[0]!r}] is None: answer torch.float32, torch.bfloat16 or torch.float64")
    truth = _autocast_truth(edutorch)
    for name, reason in AUTOCAST_EXPRESSIONS.items():
        if str(dtypes[name]) != truth[name]:
            return _hint(f"{name!r} gives {truth[name]}: {reason}")
    return _correct("all five dtypes right: low precision for products, float32 for losses, "
                    "the input's dtype otherwise, float64 untouched")


def _close_grads(grad, want):
    """Gradients equal up to float32 rounding. Tight: gradients left over from the step before
    were divided by the scale (~1e5) and differ only by about 1e-5 of their size."""
    if grad is None or want is None:
        return grad is None and want is None
    got, want = _values(grad), _values(want)
    return np.allclose(got, want, rtol=1e-6, atol=1e-9 * float(np.abs(want).max()))


@exercise
def exercise_12_5(scaled_step):
    """``scaled_step``: zero_grad, forward under float16 autocast, scaler.scale(loss).backward(),
    scaler.step(optimizer), scaler.update(); returns the loss."""
    if not callable(scaled_step):
        return _hint("define scaled_step(model, optimizer, scaler, x, y) and pass it")
    lib = _library_of_function(scaled_step)
    nn, F = lib.nn, lib.nn.functional

    def setup():
        with _seeded(lib):
            model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16))
            for p in model.parameters():
                nn.init.normal_(p, std=0.01)
            x, y = lib.randn(32, 16), lib.randn(32, 16) * 0.01
        return model, lib.optim.SGD(model.parameters(), lr=0.5), lib.amp.GradScaler("cpu", growth_interval=1), x, y

    model, optimizer, scaler, x, y = setup()
    ref, ref_opt, ref_scaler, _, _ = setup()
    forward_dtypes = []
    model[0].register_forward_hook(lambda module, args, out: forward_dtypes.append(out.dtype))
    for step in range(3):
        try:
            loss = scaled_step(model, optimizer, scaler, x, y)
        except AssertionError as error:  # GradScaler's own checks of the call order
            if "No inf checks" in str(error):
                return _hint("scaler.update() ran without a scaler.step(optimizer) before it: step "
                             "through the scaler (it unscales and skips overflowed steps), not "
                             "optimizer.step()")
            if "scaler.scale(" in str(error):
                return _hint("scaler.step(optimizer) found no scaled gradients: backpropagate "
                             "scaler.scale(loss), not the loss itself")
            raise
        ref_opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.float16):
            ref_loss = F.mse_loss(ref(x), y)
        ref_scaler.scale(ref_loss).backward()
        ref_scaler.step(ref_opt)
        ref_scaler.update()
        if forward_dtypes and forward_dtypes[-1] != lib.float16:
            ran = str(forward_dtypes[-1]).replace("torch.", "")
            return _hint(f"the forward ran in {ran}: compute the loss under "
                         "torch.autocast('cpu', dtype=torch.float16), the dtype GradScaler is for")
        if not _is_tensor(loss):
            return _hint("return the loss (the tensor from F.mse_loss, not scaled)")
        got_loss, want_loss = float(loss.detach().float()), float(ref_loss.detach().float())
        if abs(got_loss - want_loss) > 1e-6 * max(1.0, abs(want_loss)):
            times = got_loss / want_loss if want_loss else 0.0
            if times >= 2 and math.isclose(math.log2(times), round(math.log2(times)), abs_tol=1e-3):
                # GradScaler's scales are powers of two: 65536 at the start, doubled or halved
                return _hint("return the unscaled loss, not scaler.scale(loss)")
            return _hint(f"step {step}: the loss differs from F.mse_loss(model(x), y) under "
                         "autocast('cpu', dtype=torch.float16)")
        if scaler.get_scale() != ref_scaler.get_scale():
            return _hint("the scale did not change as it should: call scaler.update() after "
                         "scaler.step(optimizer)")
        if not all(_close_grads(p.grad, q.grad) for p, q in zip(model.parameters(), ref.parameters())):
            return _hint(f"after step {step} the gradients differ from a correct step's: they "
                         "accumulate. Clear them first with optimizer.zero_grad()")
        if not all(np.allclose(_values(p), _values(q), atol=1e-7) for p, q in zip(model.parameters(), ref.parameters())):
            first = next(p for p in model.parameters())
            if first.grad is not None and first.grad.dtype != lib.float32:
                return _hint("the gradients are not float32")
            return _hint(f"after step {step} the parameters differ from a correct step: backpropagate "
                         "scaler.scale(loss), then scaler.step(optimizer) (not optimizer.step()), "
                         "and clear the gradients first")
    return _correct(f"three scaled steps match; the scale is now {scaler.get_scale():g}")
