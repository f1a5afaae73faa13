"""What ``torch.profiler`` costs: a training step with the profiler recording vs without.

The edutorch contender runs the step inside ``with torch.profiler.profile():``
(every op and backward node recorded: two clock reads and one event object
each); the "numpy" column here is the SAME edutorch step with no profiler, so
``/numpy`` reads "time with the profiler / time without" (issue 16: at most
1.10 on the MLP step).  The hooks' cost while no profiler records (one dict
lookup per op and per node) is inside every other scenario's numbers.

* MLP 784-256-128-10 at batch 128 (the training scenario's big step): matmuls
  dominate, the profiler's per-event cost is small next to them;
* tiny MLP 64-64-64-10 at batch 8: per-op bookkeeping dominates, so this is the
  profiler's worst case (reported, no limit).
"""
import numpy as np

import edutorch as et


def _step(sizes, batch):
    """zero_grad, forward, CrossEntropyLoss, backward, SGD step for a fresh seeded MLP."""
    et.manual_seed(0)
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        layers.append(et.nn.Linear(n_in, n_out))
        if i < len(sizes) - 2:
            layers.append(et.nn.ReLU())
    model = et.nn.Sequential(*layers)
    optimizer = et.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(1)
    x = et.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32))
    y = et.tensor(rng.integers(0, sizes[-1], batch))

    def step():
        optimizer.zero_grad()
        et.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


def _profiled(step, **options):
    def run():
        with et.profiler.profile(**options):
            step()
    return run


def _scenario(sizes, batch, limit, **options):
    step = _step(sizes, batch)
    extra = "".join(f", {k}" for k in options)
    return {
        "name": f"profiler on/off{extra}: mlp {'-'.join(map(str, sizes))} step b{batch}",
        "contenders": {"edutorch": _profiled(step, **options), "numpy": step, "torch": None},
        "limits": {"torch": None, "numpy": limit, "ms": None},
        "setup_note": "the /numpy column is edutorch with the profiler recording / the same step without it",
    }


def scenarios():
    return [
        _scenario((784, 256, 128, 10), 128, 1.10),
        _scenario((784, 256, 128, 10), 128, None, record_shapes=True, profile_memory=True),
        _scenario((64, 64, 64, 10), 8, None),
    ]
