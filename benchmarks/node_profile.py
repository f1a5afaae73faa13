"""Where one MLP training step's time goes: the step's parts against PyTorch's, and each backward node.

    python benchmarks/node_profile.py [--batch 8] [--sizes 64,64,64,10] [--steps 200]

The parts (``zero_grad``, forward + loss, ``backward``, ``optimizer.step``) are
timed in both libraries, interleaved, on this thread's CPU clock; the backward
nodes through the engine's own ``node_interceptors`` (an interceptor that reads
the clock around each node: the same hook the profiler uses).  On a loaded
machine the absolute times move; the shares and the ratios are what to read.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import collections  # noqa: E402
import importlib.util  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import edutorch as et  # noqa: E402
from edutorch.autograd import engine  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def _training_module():
    spec = importlib.util.spec_from_file_location("bench_training", HERE / "scenarios" / "training.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _parts(lib, sizes, batch):
    """The step of ``scenarios/training.py`` cut into its four parts, each a function."""
    training = _training_module()
    ws, bs = training._init(sizes)
    x_np, y_np = training._data(sizes, batch)
    model = training._mlp(lib, sizes, ws, bs)
    loss_fn = lib.nn.CrossEntropyLoss()
    optimizer = lib.optim.SGD(model.parameters(), lr=training.LR, momentum=training.MOMENTUM)
    x, y = lib.tensor(x_np), lib.tensor(y_np)
    state = {}

    def forward():
        state["loss"] = loss_fn(model(x), y)

    return {"zero_grad": optimizer.zero_grad, "forward + loss": forward,
            "backward": lambda: state["loss"].backward(), "optimizer.step": optimizer.step}


def time_parts(sizes, batch, steps, rounds=7):
    """Median per-part time of each library, rounds interleaved."""
    libs = {"edutorch": _parts(et, sizes, batch)}
    if torch is not None:
        libs["torch"] = _parts(torch, sizes, batch)
    totals = {lib: collections.defaultdict(list) for lib in libs}
    for _ in range(rounds):
        for lib, parts in libs.items():
            spent = collections.Counter()
            for _ in range(steps):
                for name, fn in parts.items():
                    t0 = time.thread_time_ns()
                    fn()
                    spent[name] += time.thread_time_ns() - t0
            for name, ns in spent.items():
                totals[lib][name].append(ns / steps / 1e3)
    return {lib: {name: statistics.median(v) for name, v in parts.items()} for lib, parts in totals.items()}


def time_nodes(sizes, batch, steps):
    """Microseconds per step in each kind of backward node (median over ``steps`` steps), and the
    whole backward's."""
    parts = _parts(et, sizes, batch)
    per_step = collections.defaultdict(list)
    current = collections.Counter()

    def clock_node(proceed, node, grads):
        t0 = time.thread_time_ns()
        try:
            return proceed(node, grads)
        finally:
            current[node.name()] += time.thread_time_ns() - t0

    backward_times = []
    for _ in range(steps):
        parts["zero_grad"]()
        parts["forward + loss"]()
        current.clear()
        engine.node_interceptors.register(clock_node, 0)
        t0 = time.thread_time_ns()
        try:
            parts["backward"]()
        finally:
            backward_times.append(time.thread_time_ns() - t0)
            engine.node_interceptors.unregister(clock_node)
        for name, ns in current.items():
            per_step[name].append(ns / 1e3)
        parts["optimizer.step"]()
    return {name: statistics.median(v) for name, v in per_step.items()}, statistics.median(backward_times) / 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--sizes", default="64,64,64,10")
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    parts = time_parts(sizes, args.batch, max(args.steps // 4, 10))
    print(f"MLP {args.sizes} batch {args.batch}, microseconds per step (thread CPU time, median of rounds)")
    print(f"{'part':18s} {'edutorch':>10s} {'torch':>10s} {'ratio':>7s}")
    for name, mine in parts["edutorch"].items():
        theirs = parts.get("torch", {}).get(name)
        ratio = f"{mine / theirs:7.2f}" if theirs else "      -"
        print(f"{name:18s} {mine:10.1f} {theirs or float('nan'):10.1f} {ratio}")
    nodes, backward = time_nodes(sizes, args.batch, args.steps)
    print(f"\nbackward {backward:.1f} us per step; in its nodes (node's own call: hooks, backward, its ops):")
    for name, us in sorted(nodes.items(), key=lambda item: -item[1]):
        print(f"  {name:22s} {us:8.1f} us  {us / backward:6.1%}")
    print(f"  {'the engine around them':22s} {backward - sum(nodes.values()):8.1f} us  "
          f"{1 - sum(nodes.values()) / backward:6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
