"""Widgets on big models (issue 23): every action on two Linear(4096, 4096) layers.

The model is ``Sequential(Linear(4096, 4096), ReLU(), Linear(4096, 4096))``:
33.6 M parameters, 134 MB of float32 weights. Each widget is built on it and
every control of the issue's list is used once, in the order a student would
(construct, apply, undo, ...), as one user action: the model's work, the
redraw and the PNG encoding. The BackwardStepper runs on a 1,977-node graph
(``widgets.py``'s ``branches``: 25 chains of 26 mul/add/tanh steps, summed; here on a
64x256 input).

Two ways to run it:

- ``python benchmarks/scenarios/widgets_big_models.py [--only PruneExplorer]``:
  each action once, in order, with its CPU time (this thread), its wall time
  and its peak memory above the process's size before it (the kernel's
  high-water mark of the resident set, reset before each action through
  ``/proc/self/clear_refs``); the table of ``benchmarks/README.md``;
- ``bench.py --only "big model"``: the actions that can be repeated, timed
  like every other scenario (limit: 500 ms; construction 1 s).

Setup (the model, the batches) is outside every measurement.
"""
import argparse
import importlib.util
import itertools
import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import numpy as np  # noqa: E402

import edutorch as et  # noqa: E402
import edutorch.nn as nn  # noqa: E402
from widgets import (BackwardStepper, GradientInspector, ParameterTree,  # noqa: E402
                     PruneExplorer, TrainingStepper)

WIDTH = 4096
MODEL_MB = 2 * (WIDTH * WIDTH + WIDTH) * 4 / 2**20  # the two layers' float32 parameters


def big_model():
    et.manual_seed(0)
    return nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU(), nn.Linear(WIDTH, WIDTH))


def batch(n, seed=0):
    rng = np.random.default_rng(seed)
    return (et.tensor(rng.standard_normal((n, WIDTH)).astype(np.float32)),
            et.tensor(rng.integers(0, WIDTH, size=n)))


def _sibling(name):
    """Another file of ``scenarios/`` (they are loaded by path, not as a package)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location(f"bench_scenarios_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


branches = _sibling("widgets").branches  # the 1,977-node graph of the AutogradExplorer rows


# -- each widget's actions, in order: ([(label, function), ...], state with the view) ------
def prune_actions():
    model, state = big_model(), {}
    view = lambda: state["view"]  # noqa: E731 (built by the first action)
    return [
        ("construct", lambda: state.update(view=PruneExplorer(model))),
        ("amount slider (0.3)", lambda: setattr(view().amount, "value", 0.3)),
        ("apply", lambda: view().apply_button.click()),
        ("undo", lambda: view().undo_button.click()),
        ("global (layer = all layers)", lambda: setattr(view().layer, "value",
                                                        view().layer.options[-1])),
        ("apply global", lambda: view().apply_button.click()),
        ("undo global", lambda: view().undo_button.click()),
    ], state


def gradient_actions():
    model, data, state = big_model(), batch(64), {}
    view = lambda: state["view"]  # noqa: E731
    return [
        ("construct", lambda: state.update(view=GradientInspector(model, data, lr=0.01))),
        ("step", lambda: view().step_button.click()),
        ("10 steps", lambda: view().steps_button.click()),
        ("10 steps in a kernel (paced; wall = the whole run)",
         lambda: _in_an_event_loop(view().start_training, 10)),
        ("max_norm slider", lambda: setattr(view().max_norm, "value", 0.5)),
        ("clip_value slider", lambda: setattr(view().clip_value, "value", 1e-3)),
    ], state


def _in_an_event_loop(start, *args):
    """``start(*args)`` inside a running asyncio event loop, as a kernel calls a button's
    handler, awaiting the task it starts (GradientInspector's "10 steps": step by step,
    the timeline after each step, the bars and statistics once at the end)."""
    import asyncio

    async def run():
        await start(*args)
    asyncio.run(run())


def training_actions():
    model, data, state = big_model(), batch(256), {}
    view = lambda: state["view"]  # noqa: E731
    stages = [(f"stage {name}", lambda: view().next_button.click())
              for name in ("zero_grad", "forward", "loss", "backward", "step (Adam)")]
    return [("construct (Adam)", lambda: state.update(
        view=TrainingStepper(model, data, optimizer="Adam", lr=0.01)))] + stages + [
        ("lr change", lambda: setattr(view().lr, "value", 0.001)),
        ("optimizer change (SGD+momentum)", lambda: setattr(view().optimizer, "value",
                                                            "SGD+momentum")),
    ], state


def tree_actions():
    model, state = big_model(), {}
    model(batch(8)[0]).sum().backward()  # so every weight has a .grad to draw
    view = lambda: state["view"]  # noqa: E731
    return [
        ("construct", lambda: state.update(view=ParameterTree(model))),
        ("select 2.weight", lambda: setattr(view().select, "value", "2.weight")),
        ("select 0.weight", lambda: setattr(view().select, "value", "0.weight")),
        ("weight distributions", lambda: setattr(view().show, "value", "distributions")),
    ], state


def backward_actions():
    x = et.tensor(np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32),
                  requires_grad=True)
    output, state = branches(x).sum(), {}
    view = lambda: state["view"]  # noqa: E731
    return [
        ("construct (runs backward)", lambda: state.update(
            view=BackwardStepper(output, tensors={"x": x}))),
        ("step slider (to 500)", lambda: setattr(view().slider, "value", 500)),
        ("next", lambda: view().next_button.click()),
    ], state


def engine_actions():
    """The framework's own work under the widgets' actions, without any widget: the floor."""
    from edutorch.nn.utils import prune

    model, small, large = big_model(), batch(64), batch(256)
    F, sgd = nn.functional, et.optim.SGD(model.parameters(), lr=0.01)
    adam = et.optim.Adam(model.parameters(), lr=0.01)

    def train_step(optimizer, data):
        optimizer.zero_grad()
        F.cross_entropy(model(data[0]), data[1]).backward()
        optimizer.step()

    def graph_backward():
        x = et.randn(64, 256, requires_grad=True)
        branches(x).sum().backward()

    pairs = [(model[0], "weight"), (model[2], "weight")]
    return [
        ("l1_unstructured(0.weight, 0.3)", lambda: prune.l1_unstructured(model[0], "weight", 0.3)),
        ("remove(0.weight)", lambda: prune.remove(model[0], "weight")),
        ("global_unstructured(L1, 0.5), both weights", lambda: prune.global_unstructured(
            pairs, pruning_method=prune.L1Unstructured, amount=0.5)),
        ("zero_grad + forward + backward + SGD step, batch 64", lambda: train_step(sgd, small)),
        ("zero_grad + forward + backward + Adam step, batch 256",
         lambda: train_step(adam, large)),
        ("1,977-node graph: forward + backward", graph_backward),
    ], {}


WIDGETS = {"PruneExplorer": prune_actions, "GradientInspector": gradient_actions,
           "TrainingStepper": training_actions, "ParameterTree": tree_actions,
           "BackwardStepper (1,977 nodes)": backward_actions,
           "engine alone (reference)": engine_actions}


# -- measuring one action -------------------------------------------------------------------
def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) / 1024  # kB -> MiB
    return float("nan")


def measure(action):
    """``(cpu ms, wall ms, peak MiB above the resident size before)`` of one call."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the high-water mark of the resident set
    except OSError:
        pass
    before = _status("VmRSS")
    wall, cpu = time.perf_counter(), time.thread_time()
    action()
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    return 1e3 * cpu, 1e3 * wall, max(_status("VmHWM") - before, 0.0)


def run(only=None):
    """Every widget's actions once, in order; prints a markdown table, returns the rows."""
    print(f"model: 2 x Linear({WIDTH}, {WIDTH}), {MODEL_MB:.0f} MiB of parameters")
    print("| widget | action | CPU ms | wall ms | peak MiB above before |")
    print("|---|---|---|---|---|")
    rows = []
    for widget, build in WIDGETS.items():
        if only and only.lower() not in widget.lower():
            continue
        actions, _ = build()
        for label, action in actions:
            cpu, wall, peak = measure(action)
            rows.append((widget, label, cpu, wall, peak))
            print(f"| {widget} | {label} | {cpu:.0f} | {wall:.0f} | {peak:.0f} |", flush=True)
    return rows


# -- bench.py: the repeatable actions ----------------------------------------------------------
def _prepared(build, upto):
    """Run ``build()``'s actions before the one labelled ``upto``; ``(actions dict, state)``."""
    actions, state = build()
    for label, action in actions:
        if label == upto:
            break
        action()
    return dict(actions), state


def _construct(build):
    actions, _ = build()
    return actions[0][1]


def _apply_undo():
    actions, _ = _prepared(prune_actions, "apply")
    return lambda: (actions["apply"](), actions["undo"]())


def _slider(name, values):
    """The GradientInspector's slider ``name`` cycling through ``values``, each drawn (the
    pictures the inspector keeps are forgotten first)."""
    _, state = _prepared(gradient_actions, "step")
    values = itertools.cycle(values)

    def move():
        state["view"].forget_pictures()
        getattr(state["view"], name).value = next(values)
    return move


def scenarios():
    note = "2 x Linear(4096, 4096); one action = model work + redraw + PNG encode"
    cases = [
        ("widget big model: PruneExplorer construct", lambda: _construct(prune_actions), 1000),
        ("widget big model: ParameterTree construct", lambda: _construct(tree_actions), 1000),
        ("widget big model: PruneExplorer apply + undo (two clicks)", _apply_undo, 1000),
        ("widget big model: GradientInspector max_norm slider",
         lambda: _slider("max_norm", [0.5, 2.0, 0.05]), 500),
        ("widget big model: GradientInspector clip_value slider",
         lambda: _slider("clip_value", [1e-3, 1e-2, 1e-4]), 500),
    ]
    return [{"name": name, "contenders": {"edutorch": make(), "numpy": None, "torch": None},
             "limits": {"torch": None, "numpy": None, "ms": limit}, "setup_note": note}
            for name, make, limit in cases]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="widgets whose name contains this")
    run(parser.parse_args().only)
