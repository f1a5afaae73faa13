"""What ``torch.profiler`` costs: a training step with the profiler recording vs without.

The edutorch contender runs the step inside ``with torch.profiler.profile():``
(every op and backward node recorded: two clock reads and one raw record each;
the event objects are built only when the profile is read); the "numpy" column
here is the SAME edutorch step with no profiler, so ``/numpy`` reads "time with
the profiler / time without" (issue 16: at most 1.10 on the MLP step at b128).
Beside it, ``torch on/off``: the same ratio for PyTorch's own profiler on the
same step.  The hooks' cost while no profiler records (one dict lookup per op
and per node) is inside every other scenario's numbers.

* MLP 784-256-128-10 at batch 128 (the training scenario's big step): matmuls
  dominate, the profiler's per-event cost is small next to them;
* tiny MLP 64-64-64-10 at batch 8: per-op bookkeeping dominates, so this is the
  profiler's worst case (reported, no limit).
"""
import importlib.util
from pathlib import Path

import edutorch as et

try:
    import torch
    import torch.profiler
except ImportError:  # torch's own on/off ratio is simply left out
    torch = None

# the step itself is training.py's (zero_grad, forward, cross-entropy, backward, SGD m0.9)
_spec = importlib.util.spec_from_file_location("bench_scenarios_training_for_profiler",
                                               Path(__file__).with_name("training.py"))
_training = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_training)
_step = _training._framework_step


def _profiled(lib, step, **options):
    def run():
        with lib.profiler.profile(**options):
            step()
    return run


def _scenario(sizes, batch, limit, **options):
    step = _step(et, sizes, batch)
    extra = "".join(f", {k}" for k in options)
    pairs = {}
    if torch is not None:
        torch_step = _step(torch, sizes, batch)
        pairs["torch on/off"] = (_profiled(torch, torch_step, **options), torch_step)
    return {
        "name": f"profiler on/off{extra}: mlp {'-'.join(map(str, sizes))} step b{batch}",
        "contenders": {"edutorch": _profiled(et, step, **options), "numpy": step, "torch": None},
        "limits": {"torch": None, "numpy": limit, "ms": None},
        "pairs": pairs,
        "setup_note": "the /numpy column is edutorch with the profiler recording / the same step without it; "
                      "torch on/off: PyTorch's profiler on the same step",
    }


def scenarios():
    return [
        _scenario((784, 256, 128, 10), 128, 1.10),
        _scenario((784, 256, 128, 10), 128, None, record_shapes=True, profile_memory=True),
        _scenario((64, 64, 64, 10), 8, None),
    ]
